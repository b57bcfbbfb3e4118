"""What the suite guard costs on a TVM test selection: plain, guarded cold, guarded warm.

Runs the same pytest selection of a TVM tests checkout four times, one after the other
(so the machine's noise hits all alike), and prints wall times and ratios to plain:
  plain    pytest alone: TVM's own test run, timed first and again last
  cold     `--harness-guard` with an empty round-trip memo (a first night, or a new build)
  warm     `--harness-guard` again on the memo the cold run left (a night after one)
The issue's bar is 1.3x; the cold run pays for every copy (TVMScript's parse is most of
it), the warm one only for the per-pass guard and the hashes that find each copy in the
memo. The memo lives in a temporary HARNESS_CACHE, so the user's is never touched. Each
run's closing counts are printed beside its time, and runs that ended differently are
flagged: a guarded run that is faster than plain must have run the same tests to the same
ends.

Usage: python bench/suite_guard_cost.py TESTS_ROOT [FILE ...] [--repeat N]
  (FILEs relative to TESTS_ROOT; default: five relax transform files)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from recorded import recorded

DEFAULT_FILES = [f"tests/python/relax/test_transform_{name}.py" for name in (
    "fuse_ops", "fold_constant", "canonicalize_bindings", "dead_code_elimination",
    "lambda_lift")]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_OUTCOME = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)\b")


def outcomes(pytest_output: str) -> str:
    """pytest's closing counts ("106 passed, 1 xfailed"): a guarded run must end as the
    plain one did (a guard that changed what it guards, or a test it broke, runs faster)."""
    tail = pytest_output.strip().splitlines()[-3:]
    return ", ".join(" ".join(found) for line in tail for found in _OUTCOME.findall(line))


def run(root: str, files: list[str], guarded: bool, cache: str, out: str
        ) -> tuple[float, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "harness.suite.plugin", *files]
    if guarded:
        command += ["--harness-guard", "--harness-guard-out", out]
    environment = {**os.environ, "HARNESS_CACHE": cache,
                   "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get(
                       "PYTHONPATH")]))}
    started = time.monotonic()
    done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        sys.exit(f"pytest exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, outcomes(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="a TVM tests checkout (holds tests/python)")
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"plain": [], "cold": [], "warm": []}
    ended: dict[str, set[str]] = {name: set() for name in times}
    summary = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            out = os.path.join(cache, "guard-out")
            # plain both first and last: the first run of a session also warms the
            # machine's file caches (it read 6 % slower than a later guarded run)
            for name in (*times, "plain"):
                seconds, counts = run(args.root, args.files, name != "plain", cache, out)
                times[name].append(seconds)
                ended[name].add(counts)
                if name == "cold":
                    with open(os.path.join(out, "summary.json")) as handle:
                        summary = json.load(handle)
    plain = statistics.median(times["plain"])
    print(f"{len(args.files)} files, {summary.get('tests')} tests, "
          f"{summary.get('modules_copied')} distinct modules copied three ways "
          f"(cold run), {summary.get('pass_applications')} pass applications")
    print(f"{'run':6} {'median s':>9} {'over plain':>11}   runs")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:6} {median:9.1f} {median / plain:10.2f}x   "
              + " ".join(f"{value:.1f}" for value in values) + "   " + "; ".join(ended[name]))
    if len(set().union(*ended.values())) > 1:
        print("the runs ended differently: the guard changed what it guards, or a test is "
              "flaky; its times say nothing until that is explained")


if __name__ == "__main__":
    with recorded("suite_guard_cost"):
        main()

"""What the guards cost: bare path vs stage guard vs per-pass guard, and cold vs warm child.

For each case and path, runs the path in isolated children three ways, alternating, and
prints the fastest wall time of each of `--repeat` runs side by side (noise on a shared
machine only ever adds time, so the fastest run is the one to compare; a median of three
moved by 10 % between runs minutes apart):
  bare      the stages only, in a plain PassContext (no checks, no instruments): the run
            users make, and the baseline (tests/test_faithful_guard.py proves the guarded
            run extracts and compiles the same)
  stage     the stage-level guard: hashes per stage, copies, final JSON (pass_guard off)
  per-pass  what `harness check` does: plus the harness's PassInstrument on every pass
            (each pass input's hash and identity map; it records, never raises)
Each (case, path) is checked once untimed first: the warm server for the case's kind
starts (the PyTorch door's imports torch), a model's export is cached, and the source's
round trips are remembered (oracles.roundtrip_memo), as for a model's later rows and
nights. Without it the first mode timed paid all three and the second did not (tv-resnet18:
bare 16.0 s, per-pass 10.9 s). The first row of a model pays the copies too
(bench/copier_cost.py says what they cost). Goal: per-pass adds <= 5 % over stage. A
guarded run faster than bare means the guard changed what it guards (as TVM's raising
immutability check once did to FoldConstant) or the measurement is wrong: the table flags
it. Then the child start-up: a fresh interpreter per check (HARNESS_WARM=0) against the
warm fork server, on a small case.

Usage: python bench/guard_overhead.py [CASE ...] [--paths extract,compile] [--repeat N]
       [--in-process]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness.options import Options
from harness.process.child import event_writer, run_spec
from harness.process.isolate import run_isolated

MODES = {
    "bare": dict(checks=False, pass_guard=False),
    "stage": dict(checks=True, pass_guard=False),
    "per-pass": dict(checks=True, pass_guard=True),
}


def timed(case: str, in_process: bool = False, **options) -> tuple[float, object]:
    """(seconds, result) of one check: the wall time of a child, as users run it, or with
    `in_process` the CPU time of the check in this process (no child, and time the machine
    gives to other work is not counted: a child's wall time here moved by 10 % between
    runs minutes apart)."""
    if in_process:
        with tempfile.TemporaryDirectory(prefix="harness-bench-") as folder:
            emit = event_writer(os.path.join(folder, "events.jsonl"))
            started = time.process_time()
            result = run_spec({"case": case, "options": Options(**options).to_json()}, emit,
                              folder)
            return time.process_time() - started, result
    started = time.monotonic()
    result = run_isolated(case, Options(**options), timeout=3600)
    return time.monotonic() - started, result


def guard_table(cases, paths, repeat, in_process: bool = False) -> None:
    print(("CPU seconds in this process" if in_process else "wall seconds of a child")
          + f", the fastest of {repeat}")
    print(f"{'case':<16} {'path':<8} {'bare s':>8} {'stage s':>8} {'per-pass s':>10} "
          f"{'pass/stage':>10} {'check/bare':>10} {'passes':>7}  verdict")
    for case in cases:
        for path in paths:
            walls = {mode: [] for mode in MODES}
            passes, verdict = 0, ""
            timed(case, in_process, path=path, **MODES["per-pass"])   # not measured
            for _ in range(repeat):
                for mode, flags in MODES.items():
                    wall, result = timed(case, in_process, path=path, **flags)
                    walls[mode].append(wall)
                    if mode == "per-pass":
                        passes, verdict = len(result.passes), result.verdict
            bare, stage, per_pass = (min(walls[m]) for m in MODES)
            suspect = "  <- guarded faster than bare: check the guard" \
                if min(stage, per_pass) < bare * 0.95 else ""
            print(f"{case:<16} {path:<8} {bare:8.1f} {stage:8.1f} {per_pass:10.1f} "
                  f"{per_pass / stage - 1:+10.1%} {per_pass / bare - 1:+10.1%} {passes:7d}  "
                  f"{verdict}{suspect}", flush=True)


def warm_table(case: str, repeat: int) -> None:
    print(f"\n{'child':<10} {'per check s':>12}   ({case}, median of {repeat} checks)")
    for label, value in (("cold", "0"), ("warm", "1")):
        os.environ["HARNESS_WARM"] = value
        timed(case)   # the warm server starts outside the measurement
        walls = [timed(case)[0] for _ in range(repeat)]
        print(f"{label:<10} {statistics.median(walls):12.2f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=["yolov3-tiny", "light_resnet50"])
    parser.add_argument("--paths", default="extract,compile",
                        help="comma-separated: extract, compile, tune (tune takes minutes)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--warm-case", default="conv-reshape-concat")
    parser.add_argument("--in-process", action="store_true",
                        help="CPU time of each check in this process instead of a child's "
                             "wall time (steadier on a shared machine; no child table)")
    args = parser.parse_args()
    guard_table(args.cases, args.paths.split(","), args.repeat, args.in_process)
    if not args.in_process:
        warm_table(args.warm_case, max(args.repeat, 5))
    return 0


if __name__ == "__main__":
    with recorded("guard_overhead"):
        code = main()
    sys.exit(code)

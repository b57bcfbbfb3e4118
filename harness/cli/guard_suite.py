"""`python -m harness guard-suite PATH... [-- PYTEST_ARGS]`: a test suite under the guard.

Each test file runs in its own pytest process (`-p harness.suite.plugin
--harness-guard`) with a time cap, in this environment or in a cached release
environment (`--set`, as `matrix` builds them; pytest is added to it). Each file's row
is journaled as it finishes (`--resume` runs the rest), its records land in
OUT/files/<file>/, and at the end they are merged into OUT/summary.{md,json,html}
(harness.suite.summary). `--no-guard` runs the same selection plainly: the wall time
and test outcomes to compare the guard against.

Exit: the merged summary's (0 nothing new, 1 a finding the registry does not explain
or a stale suite entry, 4 the guard failed); 2 when pytest refuses its arguments.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time

from harness import shards
from harness.cli import batch
from harness.cli.journal import Journal
from harness.cli.matrix import parse_set
from harness.cli.options import (
    add_journal_options,
    add_shard_options,
    output_dir,
    positive_float,
    positive_int,
)
from harness.paths import REPO_ROOT
from harness.process import isolate
from harness.suite import summary
from harness.verdict import EXIT_PASS, BadInput
from harness.versions import envs

PYTEST_USAGE_ERROR = 4
COUNTS = "counts.json"   # what each file's pytest writes (--harness-guard-counts)


class CountsMissing(Exception):
    """pytest ended its session but wrote no counts: the harness's plugin did not run."""


def test_files(paths: list[str]) -> list[str]:
    """The test files under `paths` (a file is taken as given), sorted; pure."""
    found = []
    for path in paths:
        if not os.path.exists(path):
            raise BadInput(f"{path} does not exist: give test files or folders")
        if os.path.isfile(path):
            found.append(os.path.abspath(path))
            continue
        for folder, _, names in os.walk(path):
            found += [os.path.abspath(os.path.join(folder, name)) for name in names
                      if name.endswith(".py") and (name.startswith("test_")
                                                   or name.endswith("_test.py"))]
    if not found:
        raise BadInput(f"no test files (test_*.py, *_test.py) under {' '.join(paths)}")
    return sorted(set(found))


def _slug(path: str) -> str:
    return re.sub(r"[^\w.-]+", "_", os.path.relpath(path))[-150:]


def _counts(folder: str, returncode: int | None, output_path: str) -> dict[str, int]:
    """The test outcome counts the plugin wrote ({"passed": 3, "failed": 1}); none when
    pytest was killed (the time cap, a signal) before its session ended."""
    path = os.path.join(folder, COUNTS)
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    if returncode is None or returncode < 0:
        return {}
    raise CountsMissing(f"pytest exited {returncode} without writing {path}: was "
                        f"harness.suite.plugin loaded? its output: {output_path}")


def _python(args) -> str:
    if not args.set:
        return sys.executable
    packages = parse_set(args.set)
    path = envs.ensure(packages, log=lambda text: print(text, file=sys.stderr, flush=True),
                       extra=envs.BASE_PACKAGES + ("pytest",))
    envs.touch(path)
    return envs.python_of(path)


def _duration_key(path: str) -> str:
    """A test file's key in a durations file (shards.py): its path from where the suite runs."""
    return "guard-suite:" + os.path.relpath(path)


def cmd_guard_suite(args) -> int:
    durations = shards.read_durations(args.durations)
    files = shards.select(test_files(args.paths), _duration_key, shards.chosen(args.shard),
                          durations)
    output_dir(args.out)
    python = _python(args)
    stack = {"python": python, "guard": not args.no_guard, "pytest_args": args.pytest_args,
             "set": args.set or ""}
    journal = Journal(args.out, "guard-suite", args.resume, lambda row: row["file"], stack,
                      args.fresh)
    rows = [row for key, row in journal.done.items() if key in files]
    todo = [path for path in files if path not in journal.done]
    print(f"guard-suite: {len(files)} files, {len(rows)} already done, {len(todo)} to run, "
          f"{'guarded' if not args.no_guard else 'NOT guarded (--no-guard)'}", file=sys.stderr)
    # the files are this shard's already: TVM's own conftest would shard each file again
    env = {key: value for key, value in os.environ.items()
           if key not in (shards.ENV_COUNT, shards.ENV_INDEX)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, env.get("PYTHONPATH")) if p)
    started = time.monotonic()

    def one(path):
        folder = os.path.join(args.out, "files", _slug(path))
        os.makedirs(folder, exist_ok=True)
        for stale in os.listdir(folder):      # a rerun replaces the file's earlier records
            os.remove(os.path.join(folder, stale))
        argv = [python, "-m", "pytest", path, "-q", "-p", "no:cacheprovider",
                "-p", "harness.suite.plugin", "--harness-guard-counts",
                os.path.join(folder, COUNTS), *args.pytest_args]
        if not args.no_guard:
            argv += ["--harness-guard", "--harness-guard-out", folder]
        output_path = os.path.join(args.out, "files", _slug(path) + ".log")
        begun = time.monotonic()
        returncode, timed_out = isolate.run_command(argv, output_path, args.file_timeout,
                                                    env=env)
        recorded = len(summary.read([folder]))
        # pytest's usage error is 4, as is the guard's own failure: only the first runs
        # no test (writes no records)
        if returncode == PYTEST_USAGE_ERROR and not recorded:
            with open(output_path, errors="replace") as handle:
                raise BadInput(f"pytest refused the arguments: {handle.read().strip()[-500:]}")
        return {"file": path, "returncode": returncode, "timed_out": timed_out,
                "seconds": round(time.monotonic() - begun, 2),
                "counts": _counts(folder, returncode, output_path),
                "recorded": recorded, "log": output_path}

    def keep(path, row):
        journal.append(row)
        rows.append(row)
        state = "TIMED OUT" if row["timed_out"] else ", ".join(
            f"{n} {word}" for word, n in row["counts"].items()) or f"exit {row['returncode']}"
        print(f"[{len(rows)}/{len(files)}] {os.path.relpath(path)}: {state}; "
              f"{row['recorded']} tests recorded, {row['seconds']:.1f} s", file=sys.stderr,
              flush=True)

    with journal:
        interrupted = batch.run(todo, one, args.jobs, keep)
    result = _write(args, files, rows)
    if args.store_durations:
        shards.write_durations(args.store_durations, {_duration_key(row["file"]): row["seconds"]
                                                for row in rows if row["file"] in files})
    if interrupted:
        print(f"guard-suite: interrupted; {len(rows)} of {len(files)} files kept "
              "(--resume continues)", file=sys.stderr)
        return interrupted
    print(f"guard-suite: {len(rows)} files in {time.monotonic() - started:.0f} s -> "
          f"{os.path.join(args.out, 'summary.md')}", file=sys.stderr)
    return result


def _write(args, files: list[str], rows: list[dict]) -> int:
    """The merged summary of the selected files, with a per-file table; its exit code."""
    selected = [row for row in rows if row["file"] in files]
    folders = [os.path.join(args.out, "files", _slug(row["file"])) for row in selected]
    merged = summary.summarize(summary.read(folders))
    merged["files"] = sorted(selected, key=lambda row: row["file"])
    merged["wall_seconds"] = round(sum(row["seconds"] for row in selected), 1)
    merged["guarded"] = not args.no_guard
    summary.write(merged, args.out)
    table = ["", f"## Files ({len(selected)}, {merged['wall_seconds']} s in all)", "",
             "| file | exit | tests | seconds |", "|---|---|---|---|"]
    for row in merged["files"]:
        tests = "timed out" if row["timed_out"] else ", ".join(
            f"{n} {word}" for word, n in row["counts"].items())
        table.append(f"| {os.path.relpath(row['file'])} | {row['returncode']} | {tests} | "
                     f"{row['seconds']} |")
    with open(os.path.join(args.out, "summary.md"), "a") as handle:
        handle.write("\n".join(table) + "\n")
    print(summary.headline(merged), file=sys.stderr)
    return merged["exit"] if not args.no_guard else EXIT_PASS


def register(sub) -> None:
    p = sub.add_parser("guard-suite", help="run a pytest suite with every pass guarded "
                                           "(e.g. TVM's tests/python/relax)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="test files or folders")
    p.add_argument("--set", default=None, metavar="SPEC",
                   help="run in a cached environment of these pins "
                        "('apache-tvm==0.26.0,apache-tvm-ffi==0.1.14.post1'); default: here")
    p.add_argument("--out", default="guard-suite", help="output folder (default ./guard-suite)")
    p.add_argument("--file-timeout", type=positive_float, default=1200.0, metavar="S",
                   help="seconds before a test file's pytest is killed (default 1200)")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="test files run at once (default 1: TVM's tests are heavy)")
    p.add_argument("--no-guard", action="store_true",
                   help="run the same selection without the guard (to compare times)")
    add_journal_options(p, "guard-suite-rows.jsonl", "this environment")
    add_shard_options(p, "test files")
    p.set_defaults(func=cmd_guard_suite, pytest_args=[], takes_pytest_args=True)

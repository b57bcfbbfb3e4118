"""`python -m harness guard-suite PATH... [-- PYTEST_ARGS]`: a test suite under the guard.

Each test file runs in its own pytest process (`-p harness.suite.plugin
--harness-guard`) with a time cap, in this environment or in a cached release
environment (`--set`, as `matrix` builds them; pytest is added to it). Each file's row
is journaled as it finishes (`--resume` runs the rest), its records land in
OUT/files/<file>/, and at the end they are merged into OUT/summary.{md,json,html}
(harness.suite.summary). `--no-guard` runs the same selection plainly: the wall time
and test outcomes to compare the guard against.

What did not pass is counted by category and reason (harness.suite.not_passed: skipped,
a missing package, a file that does not collect, a test failing on its own, a file
killed at the time cap), in the summary and the final printout. What failed or was
killed under the guard is run again without it (harness.suite.file_run; `--no-recheck`:
not): a test that then passes, once more under the guard (failing again, the guard
changed its outcome; passing, it is flaky), a killed file whole (completing, the guard
caused the kill). `--exclude GLOB` leaves files out of the selection, counted in the
summary by pattern. `--with PKG` adds a test dependency to the --set environment (what
is not installed is counted as missing).

Exit: the merged summary's (0 nothing new, 1 a finding the registry does not explain
or a stale suite entry, 4 the guard failed or changed a test's outcome, each named);
2 when pytest refuses its arguments.
"""
from __future__ import annotations

import fnmatch
import os
import shutil
import sys
import time

from harness import shards
from harness.cli import carry
from harness.cli.journal import Journal
from harness.cli.matrix import parse_set
from harness.cli.options import (
    add_carry_options,
    add_journal_options,
    add_shard_options,
    output_dir,
    positive_float,
    positive_int,
)
from harness.paths import REPO_ROOT
from harness.process import batch
from harness.suite import file_run, not_passed, summary
from harness.verdict import BadInput, Outcome
from harness.versions import envs


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


def excluded_by(path: str, patterns: list[str]) -> str | None:
    """The first --exclude glob matching `path` (as given from here, from the suite's root,
    or absolute; `*` crosses folders), or None."""
    names = (file_run.key(path), os.path.relpath(path), path)
    return next((pattern for pattern in patterns
                 if any(fnmatch.fnmatch(name, pattern) for name in names)), None)


def _python(args) -> str:
    """This interpreter, or the --set environment's (pytest and every --with added)."""
    if not args.set:
        if args.with_:
            raise BadInput("--with adds packages to the --set environment; without --set the "
                           "suite runs here: install them here")
        return sys.executable
    packages = parse_set(args.set)
    path = envs.ensure(packages, log=lambda text: print(text, file=sys.stderr, flush=True),
                       extra=envs.BASE_PACKAGES + ("pytest", *sorted(set(args.with_))))
    envs.touch(path)
    return envs.python_of(path)


def _duration_key(path: str) -> str:
    """A test file's key in a durations file (shards.py): its path from the suite's root,
    the same wherever the suite is checked out and run from."""
    return "guard-suite:" + file_run.key(path)


def _select(args) -> tuple[list[str], dict[str, int]]:
    """This shard's files, and how many of all files each --exclude pattern left out."""
    files, excluded = [], {}
    for path in test_files(args.paths):
        pattern = excluded_by(path, args.exclude)
        if pattern is None:
            files.append(path)
        else:
            excluded[pattern] = excluded.get(pattern, 0) + 1
    return shards.select(files, _duration_key, shards.chosen(args.shard),
                         shards.read_durations(args.durations)), excluded


def cmd_guard_suite(args) -> int:
    files, excluded = _select(args)
    output_dir(args.out)
    python = _python(args)
    stack = {"python": python, "guard": not args.no_guard, "pytest_args": args.pytest_args,
             "set": args.set or ""}
    digest = carry.suite_digest(python, args.paths)
    journal = Journal(args.out, "guard-suite", args.resume, lambda row: row["file"], stack,
                      args.fresh, inputs=digest)
    rows = [row for key, row in journal.done.items() if key in files]
    todo = [path for path in files if path not in journal.done]
    carried = _carry(args, journal, digest, todo)
    rows += carried
    taken = {row["file"] for row in carried}
    todo = [path for path in todo if path not in taken]
    print(f"guard-suite: {len(files)} files, {len(rows) - len(carried)} already done, "
          + (f"{len(carried)} carried from an earlier run with the same inputs, "
             if args.carry else "") + f"{len(todo)} to run, "
          f"{'guarded' if not args.no_guard else 'NOT guarded (--no-guard)'}"
          + "".join(f"; {n} excluded by {pattern!r}" for pattern, n in excluded.items()),
          file=sys.stderr)
    # the files are this shard's already: TVM's own conftest would shard each file again
    env = {key: value for key, value in os.environ.items()
           if key not in (shards.ENV_COUNT, shards.ENV_INDEX)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, env.get("PYTHONPATH")) if p)
    settings = file_run.Settings(python, not args.no_guard, tuple(args.pytest_args),
                                 args.file_timeout, env, args.out, not args.no_recheck)
    started = time.monotonic()

    def keep(path, row):
        journal.append(row)
        rows.append(row)
        state = "TIMED OUT" if row["timed_out"] else ", ".join(
            f"{n} {word}" for word, n in row["counts"].items()) or f"exit {row['returncode']}"
        retried = f" (run again under the guard: the first run was {row['retried']})" \
            if row.get("retried") else ""
        print(f"[{len(rows)}/{len(files)}] {os.path.relpath(path)}: {state}; "
              f"{row['recorded']} tests recorded, {row['seconds']:.1f} s{retried}",
              file=sys.stderr, flush=True)

    with journal:
        interrupted = batch.run(todo, lambda path: file_run.run(path, settings), args.jobs,
                                keep)
    result = _write(args, files, rows, excluded)
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


def _carry(args, journal: Journal, digest: str | None, todo: list[str]) -> list[dict]:
    """The rows of `todo` an earlier run (--carry DIR) made from the same inputs, their
    records copied into OUT/files (the summary judges them again against today's
    registry), each journaled; harness.cli.carry says what "the same inputs" is."""
    if not args.carry:
        return []
    earlier = carry.earlier(args, "guard-suite", journal.stack, lambda row: row["file"],
                            digest)
    carried = []
    for path in todo:
        if path not in earlier:
            continue
        row, folder = earlier[path]
        records = os.path.join(folder, "files", file_run.slug(path))
        if not os.path.isdir(records):   # its records are gone: check it again
            continue
        shutil.copytree(records, os.path.join(args.out, "files", file_run.slug(path)),
                        dirs_exist_ok=True)
        row = {**row, "carried": folder}
        journal.append(row)
        carried.append(row)
    return carried


def _write(args, files: list[str], rows: list[dict], excluded: dict[str, int]) -> int:
    """The merged summary of the selected files, with a per-file table; its exit code."""
    selected = [row for row in rows if row["file"] in files]
    folders = [os.path.join(args.out, "files", file_run.slug(row["file"])) for row in selected]
    merged = summary.summarize(summary.read(folders))
    merged["files"] = sorted(selected, key=lambda row: row["file"])
    merged["wall_seconds"] = round(sum(row["seconds"] for row in selected), 1)
    merged["guarded"] = not args.no_guard
    merged["excluded"] = excluded
    summary.write(merged, args.out)
    table = ["", f"## Files ({len(selected)}, {merged['wall_seconds']} s in all)", "",
             "| file | exit | tests | seconds |", "|---|---|---|---|"]
    for row in merged["files"]:
        tests = "timed out" if row["timed_out"] else ", ".join(
            f"{n} {word}" for word, n in row["counts"].items())
        table.append(f"| {os.path.relpath(row['file'])} | {row['returncode']} | {tests} | "
                     f"{row['seconds']} |")
    if excluded:
        table += ["", "## Excluded (--exclude)", "",
                  *[f"- `{pattern}`: {n} files" for pattern, n in excluded.items()]]
    with open(os.path.join(args.out, "summary.md"), "a") as handle:
        handle.write("\n".join(table) + "\n")
    print(summary.headline(merged), file=sys.stderr)
    if merged["not_passed"]:
        cannot = sum(entry["tests"] for category, entry in merged["not_passed"].items()
                     if category in not_passed.NOT_HERE)
        whole = sum(merged["collectors"].values())
        print(f"not passed, by reason (none of them a guard finding; {cannot} tests cannot run "
              f"here; {whole} files skipped whole, not collected or stopped):", file=sys.stderr)
    for text in summary.top_reasons(merged):
        print(f"  {text}", file=sys.stderr)
    for item in merged["guard_changed"]:
        print(f"harness-error: {summary.changed_text(item)}", file=sys.stderr)
    if args.no_guard:   # nothing guarded: the suite's own outcome alone
        return Outcome.of(merged["suite_status"]).exit
    return merged["guard_exit"] if args.allow_suite_failures else merged["exit"]


def register(sub) -> None:
    p = sub.add_parser("guard-suite", help="run a pytest suite with every pass guarded "
                                           "(e.g. TVM's tests/python/relax)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="test files or folders")
    p.add_argument("--set", default=None, metavar="SPEC",
                   help="run in a cached environment of these pins "
                        "('apache-tvm==0.26.0,apache-tvm-ffi==0.1.14.post1'); default: here")
    p.add_argument("--out", default="guard-suite", help="output folder (default ./guard-suite)")
    p.add_argument("--with", dest="with_", action="append", default=[], metavar="PKG",
                   help="with --set: install PKG too (a test dependency TVM's tests import: "
                        "scipy, cloudpickle, psutil, tornado; repeatable)")
    p.add_argument("--file-timeout", type=positive_float, default=1200.0, metavar="S",
                   help="seconds before a test file's pytest is killed (default 1200)")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="test files run at once (default 1: TVM's tests are heavy)")
    p.add_argument("--no-guard", action="store_true",
                   help="run the same selection without the guard (to compare times)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="leave out test files matching GLOB (from the suite's root, e.g. "
                        "'tests/python/contrib/*'; repeatable); counted in the summary")
    p.add_argument("--allow-suite-failures", action="store_true",
                   help="exit on the guard's findings alone: the suite's own failing or "
                        "uncollectable tests are listed, not failed on (TVM's own suite on a "
                        "machine that cannot run all of it; by default they exit 1)")
    p.add_argument("--no-recheck", action="store_true",
                   help="do not run what failed (a test) or was killed (a file) under the "
                        "guard again without it")
    add_journal_options(p, "guard-suite-rows.jsonl", "this environment")
    add_carry_options(p, "guard-suite-rows.jsonl",
                      "the environment's packages (a TVM wheel) and the suite's files")
    add_shard_options(p, "test files")
    p.set_defaults(func=cmd_guard_suite, pytest_args=[], takes_pytest_args=True)

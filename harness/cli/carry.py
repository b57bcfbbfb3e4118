"""Rows carried from an earlier night: what was computed from the very same inputs is not
computed again.

A row is a function of what it was computed from: the TVM stack (a released wheel never
changes), the harness code that makes the row (harness.cli.row_code), the case catalog and
every installed package (torch, onnx...). When all of it is the same as on an earlier
night, checking again gives the same row; only its reading may differ, since the registry
of known issues changes between nights, so a carried row is judged again against today's
registry (the row keeps the violations for that). Every journal line records the digest of
those inputs (`inputs_digest`); `--carry DIR` takes a row from DIR's journal only when its
stack and its digest both equal this run's. A source build ("git:" versions) is never
carried: the same commit may be built from other files.

A carried row is still checked for real one night in `--carry-refresh N` (7 by default),
always the same night of the cycle for one row (`due`): each night checks about a seventh
of the rows again, spread over the week rather than all on one night, and no row is older
than a week whatever the digests say.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import os
import subprocess
import sys
from importlib import metadata

from harness import jsonl, paths
from harness.cli import row_code
from harness.result import Result
from harness.verdict import UNSETTLED


@functools.cache
def inputs_digest(command: str) -> str:
    """sha256 of the files `command`'s rows are computed by (harness.cli.row_code: the
    harness code that makes them, so a change to the page or the fuzzer leaves a report
    row standing, and the case catalog), the Python version and every installed
    distribution's name and version."""
    digest = hashlib.sha256(sys.version.encode())
    for relative in row_code.files_of(command, paths.REPO_ROOT):
        digest.update(relative.encode() + b"\0")
        with open(os.path.join(paths.REPO_ROOT, relative), "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    installed = sorted(f"{dist.metadata['Name']}=={dist.version}".lower()
                       for dist in metadata.distributions() if dist.metadata["Name"])
    digest.update("\n".join(installed).encode())
    return digest.hexdigest()[:20]


_LIST_DISTRIBUTIONS = ("import importlib.metadata as m; print('\\n'.join(sorted("
                       "f\"{d.metadata['Name']}=={d.version}\".lower() "
                       "for d in m.distributions() if d.metadata['Name'])))")


def suite_digest(python: str, roots: list[str]) -> str | None:
    """A guard-suite row's inputs: this harness's (`inputs_digest`), the distributions of
    the interpreter the tests run in, and every Python file under the suite's roots (the
    test files, their conftests and helpers). None, never carried, when that interpreter
    has no apache-tvm wheel (a source build: the same commit may be built from other
    files) or cannot say what it has."""
    listed = subprocess.run([python, "-c", _LIST_DISTRIBUTIONS], capture_output=True,
                            text=True)
    if listed.returncode != 0 or "\napache-tvm==" not in "\n" + listed.stdout:
        return None
    digest = hashlib.sha256((inputs_digest("guard-suite") + "\n" + listed.stdout).encode())
    for root in sorted(roots):
        walked = [(os.path.dirname(root) or ".", [], [os.path.basename(root)])] \
            if os.path.isfile(root) else os.walk(root)
        for folder, subfolders, files in walked:
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            for name in sorted(files):
                path = os.path.join(folder, name)
                if path.endswith(".py"):
                    digest.update(path.encode() + b"\0")
                    with open(path, "rb") as handle:
                        digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()[:20]


def settled(row: dict) -> bool:
    """The row ended as TVM decided: no crash, time limit or bug of ours (a guard-suite
    file: not killed at its time cap or by a signal)."""
    return row.get("verdict") not in UNSETTLED and not row.get("timed_out") \
        and (row.get("returncode") or 0) >= 0


def case_carries(case) -> bool:
    """A case whose model is in the digest: built in (its files, if any, under cases/), not
    a user's file or a user's catalog (HARNESS_CASES), whose files may change between
    nights and whose Python may import anything beside it: those are always checked."""
    built_in = os.path.realpath(os.path.join(paths.REPO_ROOT, "cases"))
    return os.path.realpath(case.base) == built_in and (
        case.file is None or os.path.realpath(case.file).startswith(built_in + os.sep))


def carryable(stack: dict) -> bool:
    return not any(str(value).startswith("git:") for value in stack.values())


def earlier(args, command: str, stack: dict, key,
            digest: str | None = "") -> dict[tuple, tuple[dict, str]]:
    """What `--carry DIR` gives `command` (`rows`), said on stderr with the digest the rows
    were matched on: what a user reads when nothing was carried."""
    digest = inputs_digest(command) if digest == "" else digest
    found = rows(args.carry, command, stack, key, digest, args.carry_refresh)
    print(f"{command}: --carry: {len(found)} rows of this stack with the same inputs "
          f"({digest or 'none: not a TVM wheel'}) in {', '.join(args.carry)}",
          file=sys.stderr)
    return found


def due(key, day: int, every: int) -> bool:
    """Is the row of `key` checked for real on `day` (days since 0001-01-01) although it
    could be carried: one night in `every`, always the same night of the cycle for one
    row, so each night checks about a sixth or seventh of the rows again and none is older
    than `every` nights. `every` 0: never."""
    if every <= 0:
        return False
    spread = int(hashlib.sha256(repr(key).encode()).hexdigest()[:8], 16)
    return (spread + day) % every == 0


def today() -> int:
    return datetime.datetime.now(datetime.timezone.utc).date().toordinal()


def rows(folders: list[str] | None, command: str, stack: dict, key,
         digest: str | None = "", refresh: int = 7,
         day: int | None = None) -> dict[tuple, tuple[dict, str]]:
    """{row key: (row, its folder)} of the rows in FOLDER/COMMAND-rows.jsonl, for each
    folder, whose stack and inputs digest (default `inputs_digest(command)`) are this run's (the
    first folder naming a key wins), but those `due` for a real check today. None for
    `digest`: nothing is carried."""
    if digest == "":
        digest = inputs_digest(command)
    if not folders or not carryable(stack) or digest is None:
        return {}
    day = today() if day is None else day
    found: dict[tuple, tuple[dict, str]] = {}
    for folder in folders:
        for line in jsonl.read(os.path.join(folder, f"{command}-rows.jsonl")):
            if line.get("stack") == stack and line.get("inputs") == digest \
                    and "row" in line and settled(line["row"]) \
                    and not due(key(line["row"]), day, refresh):
                found.setdefault(key(line["row"]), (line["row"], folder))
    return found


def judged(result: Result) -> dict:
    """What the registry reads of a result (no passes, no outcome): kept in a row so that a
    carried row can be read again against another night's registry (`result_of`)."""
    return {"case": result.case, "verdict": str(result.verdict), "options": result.options,
            # what ran, not how long (a row's own `stages` / `seconds` say that): the same
            # check gives the same judged part
            "stages": [{**dataclasses.asdict(stage), "seconds": 0.0} for stage in result.stages],
            "violations": [violation.to_json() for violation in result.violations],
            "tvm_version": result.tvm_version, "tvm_ffi_version": result.tvm_ffi_version}


def result_of(kept: dict, case: str) -> Result:
    """The result a row keeps (`judged`), as seen at `case` (a pass sweep row answered from
    memory keeps the row of the case where the check ran)."""
    return Result.from_json({**kept, "case": case})

"""One test file in its own pytest process, as `guard-suite` runs each: its row and records.

A file's pytest that hangs is killed at the time cap, one that dies (a segfault, the
kernel's OOM killer, a test calling os._exit) takes only itself, and none may leave a
hole in the count: the file gets a record line saying so (`time-cap`, `crashed`, with the
test that was running from the plugin's running-<worker>.txt). A conftest.py that cannot
be imported stops pytest before any test with its usage-error status: the file's line
says `error` with the import's error line, where a real usage error (bad pytest
arguments) stops the whole run.

What did not pass under the guard is run again, so the summary tells TVM's (or its
test's) doing from the guard's (not_passed.py): a test that failed is run again without
the guard; one that then passes, once more under it (failing again: the guard changed
its outcome, a harness error; passing: flaky). A file killed under the guard (time cap,
signal) is run whole under it once more (completing, the kill did not repeat: the machine
was paused or loaded past the cap; that run is the file's, its row says `retried`); killed
again, it is run whole without it, with the same cap: completing, the guard caused the
kill (a harness error); killed again, it is the file's own. Only what did not pass is run
again, each at most twice; the re-runs' records stay in hidden folders, out of
the summary, which reads only their `rechecked` lines.
"""
from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import shutil
import signal
import time

from harness.process import isolate
from harness.suite import not_passed, summary
from harness.verdict import BadInput

PYTEST_USAGE_ERROR = 4
COUNTS = "counts.json"   # what each file's pytest writes (--harness-guard-counts)
# hidden from summary.read: the re-runs' own records
RECHECK = ".recheck"     # failed tests, without the guard
REGUARD = ".reguard"     # those that then passed, under the guard once more
REFILE = ".refile"       # a file killed under the guard, whole, without it
_PYTEST_CONFIGS = (("pytest.ini", ""), (".pytest.ini", ""), ("pyproject.toml", "[tool.pytest"),
                   ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))


class CountsMissing(Exception):
    """pytest ended its session but wrote no counts: the harness's plugin did not run."""


@dataclasses.dataclass(frozen=True)
class Settings:
    python: str
    guarded: bool
    pytest_args: tuple[str, ...]
    file_timeout: float
    env: dict
    out: str
    recheck: bool = True


def suite_root(path: str) -> str | None:
    """The folder pytest takes as rootdir for `path`: the nearest one up with a pytest
    configuration (pyproject.toml's [tool.pytest...], pytest.ini, tox.ini, setup.cfg)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        for name, section in _PYTEST_CONFIGS:
            config = os.path.join(folder, name)
            if os.path.isfile(config):
                with open(config, errors="replace") as handle:
                    if section in handle.read():
                        return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def key(path: str) -> str:
    """A test file's name wherever the suite is checked out and whatever the working
    folder: its path from the suite's root (`tests/python/ir/test_x.py`), as pytest's node
    ids say it; from here when there is no root."""
    root = suite_root(path)
    return os.path.relpath(path, root) if root else os.path.relpath(path)


def slug(path: str) -> str:
    """The file's folder under OUT/files: never starting with a dot (`../x`), which would
    hide its records from the globs that read them (summary.read, `merge`)."""
    text = re.sub(r"[^\w.-]+", "_", os.path.relpath(path).replace("..", "up"))[-150:]
    return text.lstrip(".")


def _argv(settings: Settings, targets: list[str], folder: str, guarded: bool,
          counts: bool) -> list[str]:
    argv = [settings.python, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider",
            "-p", "harness.suite.plugin", *settings.pytest_args,
            "--harness-guard" if guarded else "--harness-guard-outcomes",
            "--harness-guard-out", folder]
    return argv + (["--harness-guard-counts", os.path.join(folder, COUNTS)] if counts else [])


def _running(folder: str) -> str | None:
    """The test the plugin said was running when pytest stopped ('' before the first);
    None when its session ended (or never started: the plugin did not load)."""
    for path in glob.glob(os.path.join(folder, "running-*.txt")):
        with open(path, errors="replace") as handle:
            return handle.read().strip()
    return None


def _write_lines(folder: str, name: str, lines: list[dict]) -> None:
    with open(summary.records_path(folder, name), "a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def _log_tail(output_path: str) -> str:
    with open(output_path, errors="replace") as handle:
        return handle.read().strip()[-4000:]


def _stopped_early(path: str, folder: str, returncode: int | None, timed_out: bool,
                   settings: Settings, output_path: str) -> dict | None:
    """The record line of a pytest that did not end its session: killed at the cap, dead
    of a signal, refused by a conftest.py that does not import, or ended by a test
    (os._exit); None otherwise."""
    running = _running(folder)
    during = f" while running {running}" if running else " before its first test"
    ended = os.path.exists(os.path.join(folder, COUNTS))
    if timed_out:
        return {"collector": key(path), "outcome": not_passed.TIME_CAP, "running": running,
                "reason": f"killed at the {settings.file_timeout:g} s time cap{during}"}
    if returncode is not None and returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() \
            else f"signal {-returncode}"
        return {"collector": key(path), "outcome": not_passed.CRASHED, "running": running,
                "reason": f"pytest died of {name}{during}"}
    if returncode == PYTEST_USAGE_ERROR and not ended:
        log = _log_tail(output_path)
        if "while loading conftest" not in log:   # pytest refused its arguments
            raise BadInput(f"pytest refused the arguments: {log[-500:]}")
        return {"collector": key(path), "outcome": "error",
                "reason": not_passed.first_error_line(log)}
    if not ended and running is not None:   # a test (or an import) ended the process
        return {"collector": key(path), "outcome": not_passed.CRASHED, "running": running,
                "reason": f"pytest exited {returncode} without ending its session{during}"}
    return None


def counts(folder: str, returncode: int | None, output_path: str) -> dict[str, int]:
    """The test outcome counts the plugin wrote ({"passed": 3, "failed": 1}); none when
    pytest did not end its session (the time cap, a signal, a conftest that fails)."""
    path = os.path.join(folder, COUNTS)
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    if returncode is None or returncode < 0 or returncode == PYTEST_USAGE_ERROR:
        return {}
    raise CountsMissing(f"pytest exited {returncode} without writing {path}: was "
                        f"harness.suite.plugin loaded? its output: {output_path}")


def _rerun(path: str, tests: list[str] | None, folder: str, settings: Settings,
           guarded: bool) -> tuple[dict[str, dict], dict | None]:
    """Run `tests` of the file (None: all of it) again in `folder`, guarded or not, with
    the same time cap: {test: its record line}, and the line saying its pytest stopped
    early (None: it ended its session)."""
    os.makedirs(folder, exist_ok=True)
    targets = [path] if tests is None else \
        [f"{path}::{test.split('::', 1)[1]}" for test in tests]
    output_path = os.path.join(folder, "pytest.log")
    returncode, timed_out = isolate.run_command(
        _argv(settings, targets, folder, guarded, True), output_path, settings.file_timeout,
        env=settings.env)
    stopped = _stopped_early(path, folder, returncode, timed_out, settings, output_path)
    return {line["test"]: line for line in summary.tests_of(summary.read([folder]))}, stopped


def _recheck_file(path: str, folder: str, settings: Settings) -> dict[str, dict]:
    """A file killed under the guard, run again whole without it: a `rechecked` line for
    the file (`completed`, or how it stopped again). Its tests' unguarded records."""
    records, stopped = _rerun(path, None, os.path.join(folder, REFILE), settings, False)
    without_guard = {"outcome": not_passed.COMPLETED,
                     "reason": "ended its session without the guard"}
    if stopped:
        without_guard = {"outcome": stopped["outcome"], "reason": stopped["reason"]}
    _write_lines(folder, "rechecked", [{"rechecked": key(path), **without_guard}])
    return records


def _recheck(path: str, folder: str, settings: Settings, unguarded: dict[str, dict]) -> None:
    """The file's failed tests (not those that failed for want of something here: a
    package, the network) run again without the guard (unless `unguarded`, the file's
    whole re-run, has them), and those that then passed once more under it: a `rechecked`
    line each, with `guarded_again` for the second guarded run."""
    failing = [line["test"] for line in summary.tests_of(summary.read([folder]))
               if line["outcome"] in not_passed.FAILING and "::" in line["test"]
               and not not_passed.not_here(line.get("reason", ""))]
    missing = [test for test in failing if test not in unguarded]
    if missing:
        unguarded = {**unguarded, **_rerun(path, missing, os.path.join(folder, RECHECK),
                                           settings, False)[0]}
    passed = [test for test in failing if test in unguarded
              and unguarded[test]["outcome"] not in not_passed.FAILING]
    again, stopped = _rerun(path, passed, os.path.join(folder, REGUARD), settings, True) \
        if passed else ({}, None)
    lines = []
    for test in (test for test in failing if test in unguarded):
        line = {"rechecked": test, "outcome": unguarded[test]["outcome"],
                **({"reason": unguarded[test]["reason"]} if unguarded[test].get("reason")
                   else {})}
        if test in passed:   # its second run under the guard, or how that run stopped
            second = again.get(test) or stopped or {
                "outcome": "error", "reason": "the guarded re-run did not record it"}
            line["guarded_again"] = second["outcome"]
            if second.get("reason"):
                line["guarded_again_reason"] = second["reason"]
        lines.append(line)
    if lines:
        _write_lines(folder, "rechecked", lines)


def run(path: str, settings: Settings) -> dict:
    """Run one test file; its row (returncode, timed_out, seconds, recheck_seconds, counts,
    recorded)."""
    folder = os.path.join(settings.out, "files", slug(path))
    output_path = os.path.join(settings.out, "files", slug(path) + ".log")
    begun = time.monotonic()
    retried = None
    for attempt in (1, 2):
        if os.path.isdir(folder):   # a rerun replaces the file's earlier records
            shutil.rmtree(folder)
        os.makedirs(folder)
        returncode, timed_out = isolate.run_command(
            _argv(settings, [path], folder, settings.guarded, True), output_path,
            settings.file_timeout, env=settings.env)
        stopped = _stopped_early(path, folder, returncode, timed_out, settings, output_path)
        # Killed under the guard: run whole under it once more before the guard is blamed
        # (a machine paused or loaded past the cap once is not the guard's doing).
        if attempt == 2 or not (stopped and stopped["outcome"] in not_passed.STOPPED
                                and settings.guarded and settings.recheck):
            break
        retried = stopped["reason"]
    if stopped:
        _write_lines(folder, "file", [stopped])
    counted = {} if stopped else counts(folder, returncode, output_path)
    recheck_begun = time.monotonic()
    if settings.guarded and settings.recheck:
        killed = stopped is not None and stopped["outcome"] in not_passed.STOPPED
        _recheck(path, folder, settings,
                 _recheck_file(path, folder, settings) if killed else {})
    recheck_seconds = time.monotonic() - recheck_begun
    return {"file": path, "returncode": returncode, "timed_out": timed_out,
            "seconds": round(time.monotonic() - begun, 2),
            "recheck_seconds": round(recheck_seconds, 2), "counts": counted,
            "recorded": len(summary.tests_of(summary.read([folder]))), "log": output_path,
            **({"retried": retried} if retried else {})}

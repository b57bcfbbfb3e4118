"""pytest plugin: `--harness-guard` runs every pass of any test session under the guard.

Loaded through the `pytest11` entry point where the harness is installed (or with
`-p harness.suite.plugin`), it is inert unless `--harness-guard` is given: no TVM
import, only `--harness-guard-*` options. With it, each test's pass applications are
recorded (session_guard.py) and one line per test goes to
OUT/records-<worker>.jsonl; the process that ends the session (the xdist controller,
or the only process) merges every worker's lines into OUT/summary.{md,json,html}.
Test outcomes are never changed. The session's exit status is pytest's when tests
failed; otherwise 1 when the guard found something the registry does not explain
(or a registered suite finding went stale), 4 on a failure of the guard itself.
Each line keeps the test's outcome and, when it did not pass, pytest's reason (not_passed.py
counts them by reason), and a file pytest could not collect or skipped whole is a line of
its own (`collector`): what cannot run here is counted, never silently dropped.
`--harness-guard-outcomes` writes the same lines without the guard (guard-suite's
`--no-guard`, and its unguarded re-runs of failed tests and killed files).
OUT/running-<worker>.txt names the test running now, so a pytest killed at a time cap
says which test hung.
`--harness-guard-counts FILE` (guarded or not) writes the session's test outcome counts
as JSON, so `guard-suite` reads them as data instead of parsing pytest's summary line.
"""
from __future__ import annotations

import glob
import json
import os
import time

import pytest

DEFAULT_OUT = ".harness-guard"
# The outcome words of pytest's summary line that guard-suite counts, in pytest's order.
COUNTED = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "error")


def pytest_addoption(parser):
    group = parser.getgroup("tvm-harness-guard", "guard every TVM pass a test runs "
                                                 "(harness suite guard)")
    group.addoption("--harness-guard", action="store_true",
                    help="record pass input mutation and lossy copies of every pass "
                         "application in this session")
    group.addoption("--harness-guard-out", default=DEFAULT_OUT, metavar="DIR",
                    help=f"where records and the summary go (default {DEFAULT_OUT})")
    group.addoption("--harness-guard-max-bytes", type=int, default=None, metavar="N",
                    help="modules whose JSON text is larger are counted, not copied")
    group.addoption("--harness-guard-max-modules", type=int, default=None, metavar="N",
                    help="copy at most N distinct modules in this session (each xdist "
                         "worker's; default 3000): the rest are counted, not copied")
    group.addoption("--harness-guard-no-memo", action="store_true",
                    help="make every copy, even one this TVM build made losslessly of the "
                         "same module before (remembered in .harness-cache/roundtrip-memo)")
    group.addoption("--harness-guard-counts", default=None, metavar="FILE",
                    help="write the session's test outcome counts (passed, failed, ...) as "
                         "JSON to FILE, with or without --harness-guard")
    group.addoption("--harness-guard-outcomes", action="store_true",
                    help="without --harness-guard: record each test's outcome and pytest's "
                         "reason (no pass is guarded)")


def pytest_configure(config):
    max_modules = config.getoption("harness_guard_max_modules")
    if max_modules is not None and max_modules < 0:
        raise pytest.UsageError(f"--harness-guard-max-modules: expected 0 or more (0: copy "
                                f"no module, guard every pass still), got {max_modules}")
    guarded = config.getoption("harness_guard")
    if guarded or config.getoption("harness_guard_outcomes"):
        config.pluginmanager.register(GuardedSession(config, guarded), "harness-guard-session")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """The counts pytest's summary line shows, written by the process that ends the
    session (with xdist, the controller: the workers' reports reach it)."""
    path = session.config.getoption("harness_guard_counts")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if not path or hasattr(session.config, "workerinput") or reporter is None:
        return
    counts = {}
    for word in COUNTED:
        number = sum(1 for report in reporter.stats.get(word, [])
                     if getattr(report, "count_towards_summary", True))
        if number:
            counts[word] = number
    with open(path, "w") as handle:
        json.dump(counts, handle)


def _worker(config) -> str:
    return getattr(config, "workerinput", {}).get("workerid", "main")


class GuardedSession:
    """The records of one session: each test's line (guarded: with what the guard saw),
    the lines of collectors that failed or skipped, and the summary at the end."""

    def __init__(self, config, guarded: bool = True):
        self.config = config
        self.guarded = guarded
        self.out = os.path.abspath(config.getoption("harness_guard_out"))
        self.worker = _worker(config)
        self.is_worker = hasattr(config, "workerinput")
        self.guard = None
        self.sink = None
        self.outcomes: dict[str, tuple[str, str]] = {}   # test: (outcome, reason)
        self.versions: dict = {}
        self.summary: dict | None = None

    # ---- where the session starts and ends ---------------------------------

    def pytest_sessionstart(self, session):
        os.makedirs(self.out, exist_ok=True)
        if not self.is_worker:   # a fresh session: earlier records would be merged in
            for pattern in ("records-*.jsonl", "running-*.txt"):
                for path in glob.glob(os.path.join(self.out, pattern)):
                    os.remove(path)
        from harness.tvmapi import loading  # the versions from metadata: no TVM import
        self.versions = loading.versions()
        self._running("")   # the session started: a marker its end removes

    def _write(self, line: dict) -> None:
        if self.sink is None:
            from harness.suite import summary
            self.sink = open(summary.records_path(self.out, self.worker), "a", buffering=1)
        self.sink.write(json.dumps({**line, "guarded": self.guarded, **self.versions}) + "\n")

    def _start_guard(self) -> None:
        """On the first test (an xdist controller runs none, and never imports TVM)."""
        from harness.suite import session_guard
        max_bytes = self.config.getoption("harness_guard_max_bytes")
        max_modules = self.config.getoption("harness_guard_max_modules")
        self.guard = session_guard.SessionGuard(
            max_bytes=max_bytes or session_guard.DEFAULT_MAX_BYTES,
            max_modules=session_guard.DEFAULT_MAX_MODULES if max_modules is None
            else max_modules,
            memo=not self.config.getoption("harness_guard_no_memo"))
        self.guard.install()

    def _running(self, test: str) -> None:
        """Which test runs now (none yet: ''): read by guard-suite when a file's pytest
        hung or ended without ending its session."""
        with open(os.path.join(self.out, f"running-{self.worker}.txt"), "w") as handle:
            handle.write(test)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._running(item.nodeid)
        if self.guarded and self.guard is None:
            self._start_guard()
        if self.guarded:
            self.guard.begin_test(item.nodeid)
        started = time.perf_counter()
        yield
        seconds = time.perf_counter() - started
        outcome, reason = self.outcomes.pop(item.nodeid, ("passed", ""))
        line = {"test": item.nodeid, "outcome": outcome, **({"reason": reason} if reason else {})}
        if self.guarded:
            record = self.guard.end_test()
            line.update({"test_seconds": round(seconds - record.guard_seconds, 4),
                         "passes": record.passes, "pass_names": record.pass_names,
                         "modules_copied": record.modules_copied,
                         "modules_remembered": record.modules_remembered,
                         "copies_remembered": record.copies_remembered,
                         "over_cap": record.over_cap, "held_after": record.held_after,
                         "not_well_formed": record.not_well_formed,
                         "guard_seconds": record.guard_seconds,
                         "violations": [violation.to_json() for violation in record.violations]})
        else:
            line.update({"test_seconds": round(seconds, 4), "violations": []})
        self._write(line)

    def pytest_runtest_logreport(self, report):
        """The test's outcome and pytest's reason: failed (in the test) or error (in its
        setup or teardown) if any phase failed, else skipped/xfailed/xpassed/passed."""
        from harness.suite import not_passed
        if self.outcomes.get(report.nodeid, ("",))[0] in not_passed.FAILING:
            return
        if report.failed:
            self.outcomes[report.nodeid] = ("failed" if report.when == "call" else "error",
                                            not_passed.reason_of(report))
        elif hasattr(report, "wasxfail"):
            self.outcomes[report.nodeid] = ("xfailed" if report.skipped else "xpassed",
                                            not_passed.reason_of(report))
        elif report.skipped:
            self.outcomes[report.nodeid] = ("skipped", not_passed.reason_of(report))

    def pytest_collectreport(self, report):
        """A file (or class) that could not be collected, or skipped as a whole: one line.
        With xdist, the controller writes it once (the workers' reports reach it)."""
        if self.is_worker or not (report.failed or report.skipped):
            return
        from harness.suite import not_passed
        self._write({"collector": report.nodeid or str(report.fspath),
                     "outcome": "error" if report.failed else "skipped",
                     "reason": not_passed.reason_of(report), "violations": []})

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if self.guard is not None:
            self.guard.uninstall()
        if self.sink is not None:
            self.sink.close()
        running = os.path.join(self.out, f"running-{self.worker}.txt")
        if os.path.exists(running):   # the session ended: nothing hung
            os.remove(running)
        if self.is_worker:
            return
        if session.exitstatus == pytest.ExitCode.USAGE_ERROR and not self.outcomes:
            return   # pytest refused the command line (a path not found): its error is the
            #          news, and the last session's summary is not replaced by an empty one
        from harness.suite import summary
        self.summary = summary.summarize(summary.read([self.out]))
        summary.write(self.summary, self.out)
        if session.exitstatus == 0 and self.summary["tests"]:
            session.exitstatus = self.summary["exit"]

    def pytest_terminal_summary(self, terminalreporter):
        if self.summary is None:
            return
        from harness.suite import summary
        from harness.verdict import Outcome
        writer = terminalreporter
        writer.section("harness guard")
        writer.line(summary.headline(self.summary))
        for finding in self.summary["findings"]:
            if finding["status"] in (Outcome.NEW, Outcome.HARNESS_ERROR):
                writer.line(f"{finding['status']}: {finding['signature']} x{finding['count']}"
                            f" (e.g. {finding['example_test']})")
        for item in self.summary["stale"]:
            writer.line(f"stale: [{item['entry']}] {item['reference']}")
        for text in summary.top_reasons(self.summary):
            writer.line(text)
        writer.line(f"records and summary: {self.out}")

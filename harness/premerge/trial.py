"""A try: the selection run on the base's build and on the head's, and what the head changed.

Each side is a night of the watch's kind (versions/nights): built (the store or the build
folder serve compiled inputs seen before, so a Python-only change builds nothing), then
the selected checks run against exactly that build, each item's rows saved the moment it
ends, so an interrupted try resumes where it stopped. The head's rows are compared with
the base's: a signature the head shows and the base did not is *new*, one the base showed
and the head does not is *gone* (a registered reproducer that stops reproducing: the head
*fixes* its entry). Each change is checked again alone on the head's build before it is
reported (flaky otherwise). A head that does not compile where the base did is new.
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, Protocol

from harness.premerge.change import Change
from harness.versions import commit_bisect, nights
from harness.versions.build_checks import Item

NEW, FIXES, GONE = "new", "fixes", "gone"
Row = dict[str, Any]   # a check's row: {"signatures": [...], "recheck": {...}}


class Bench(Protocol):
    """What a try does to a commit (versions.build_bench.BuildBench; a test's toy)."""

    def build(self, commit: str) -> dict[str, Any]: ...

    def runner(self, commit: str, folder: str) -> Any: ...

    def run_item(self, item: Item, runner: Any, out: str,
                 folder: str) -> tuple[dict[str, Row], str]: ...

    def shows(self, recheck: dict[str, Any], signature: str, runner: Any) -> bool | None: ...


@dataclasses.dataclass
class Finding:
    kind: str                 # NEW | FIXES | GONE
    row: str                  # the check: "report compile node-resize nchw llvm", ...
    signature: str
    state: str = ""           # nights.CONFIRMED | FLAKY | UNCHECKED
    entry: str = ""           # FIXES: the registry entry whose reproducer stopped
    recheck: dict[str, Any] = dataclasses.field(default_factory=dict)
    note: str = ""


@dataclasses.dataclass
class Side:
    name: str                 # base | head
    commit: str
    build: dict[str, Any]     # nights.Night.build: ok, seconds, reused, tail, folder
    seconds: float            # wall time of its build and checks
    rows: int
    failing: int


@dataclasses.dataclass
class TrialOutcome:
    sides: list[Side]
    findings: list[Finding]
    stayed: list[str]         # rows failing alike on both sides
    errors: list[str]         # the harness's own failures (an item that could not run)

    @property
    def new(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.kind == NEW
                and finding.state != nights.FLAKY]

    @property
    def fixes(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.kind == FIXES
                and finding.state != nights.FLAKY]


def run(change: Change, items: list[Item], bench: Bench, folder: str,
        log: Callable[[str], None]) -> TrialOutcome:
    """`items`: versions.build_checks items; `bench`: a versions.build_bench.BuildBench
    (or a test's toy); `folder`: this try's state, resumed when it holds a started try."""
    state = nights.WatchState(folder)
    sides, runners, errors = [], {}, []
    for name, commit in (("base", change.base), ("head", change.head)):
        night = state.night_at(commit) or state.night_of(
            commit, commit_bisect.title(change.source, commit))
        started = time.monotonic()
        runners[name] = _run_side(name, night, items, bench, state, log)
        errors += [f"{name}: {error}" for error in night.build.get("errors", [])]
        sides.append(Side(name, commit, {key: value for key, value in night.build.items()
                                         if key != "errors"},
                          round(time.monotonic() - started, 1), len(night.rows),
                          night.failing()))
    base, head = state.night_at(change.base), state.night_at(change.head)
    assert base is not None and head is not None   # both were run above
    findings = compare(base, head)
    if runners["head"] is not None:
        _check_again(findings, bench, runners["head"], log)
    stayed = sorted(name for name, row in head.rows.items() if row["signatures"]
                    and name in base.rows
                    and set(row["signatures"]) == set(base.rows[name]["signatures"]))
    state.save()
    return TrialOutcome(sides, findings, stayed, errors)


def _run_side(name: str, night: nights.Night, items: list[Item], bench: Bench,
              state: nights.WatchState, log: Callable[[str], None]) -> Any:
    """Build the side's commit and run every item not done yet; (python, env) or None when
    it does not build."""
    log(f"try: {name} {night.commit[:10]} {night.title[:70]}")
    if not night.build:
        night.build = {**bench.build(night.commit), "errors": []}
        state.save()
    if not night.build["ok"]:
        return None
    runner = bench.runner(night.commit, night.build["folder"])
    for number, item in enumerate(items, 1):
        if item.name in night.done:
            continue
        log(f"try: {name} [{number}/{len(items)}] {item.name}")
        rows, error = bench.run_item(item, runner, os.path.join(state.folder_of(night),
                                                                item.name),
                                     night.build["folder"])
        if error:
            night.build["errors"].append(error)
        night.rows.update(rows)
        night.done.append(item.name)
        state.save()
    night.finished = True
    state.save()
    return runner


def compare(base: nights.Night, head: nights.Night) -> list[Finding]:
    """The head's rows against the base's. A row only the head has (a check the base could
    not run, a pass the head adds) is new where it fails; a registered reproducer that
    reproduced on the base and does not on the head fixes its entry."""
    if not head.build.get("ok", True):
        if base.build.get("ok", True):
            return [Finding(NEW, "build", nights.BUILD_FAILED,
                            note=(head.build.get("tail") or "")[-400:])]
        return []
    found = []
    for news in nights.changes(base, [base], head):
        row = head.rows[news.row]
        if news.change == nights.GONE and news.row.startswith("reproducer "):
            found.append(Finding(FIXES, news.row, news.signature,
                                 entry=news.row.removeprefix("reproducer "),
                                 recheck=row["recheck"]))
        else:
            found.append(Finding(NEW if news.change == nights.NEW else GONE, news.row,
                                 news.signature, recheck=row["recheck"]))
    for name, row in sorted(head.rows.items()):
        if name not in base.rows:
            found += [Finding(NEW, name, signature, recheck=row["recheck"],
                              note="the base has no such check") for signature in
                      row["signatures"]]
    return found


def _check_again(findings: list[Finding], bench: Bench, runner: Any,
                 log: Callable[[str], None]) -> None:
    """Each change checked alone on the head's build: a new failure must show again, a gone
    one must stay gone; otherwise it is flaky and never reported as the change's."""
    for finding in findings:
        if finding.state or finding.row == "build":
            finding.state = finding.state or nights.CONFIRMED   # built twice already
            continue
        shows = bench.shows(finding.recheck, finding.signature, runner) \
            if finding.recheck else None
        if shows is None:
            finding.state = nights.UNCHECKED
        elif shows == (finding.kind == NEW):
            finding.state = nights.CONFIRMED
        else:
            finding.state = nights.FLAKY
        log(f"try: checked again: {finding.kind} {finding.row}: {finding.state}")

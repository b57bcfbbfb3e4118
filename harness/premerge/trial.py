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
import json
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
    (or a test's toy); `folder`: the checkout's tries, one record per commit and item, so
    a base is run once for every try on it and an interrupted try resumes."""
    sides, nights_of, runners, errors = [], {}, {}, []
    for name, commit in (("base", change.base), ("head", change.head)):
        started = time.monotonic()
        record = SideRecord(os.path.join(folder, commit[:16]))
        night, runners[name] = _run_side(name, commit, change, record, items, bench, log)
        nights_of[name] = night
        errors += [f"{name}: {error}" for error in night.build.get("errors", [])]
        sides.append(Side(name, commit, {key: value for key, value in night.build.items()
                                         if key != "errors"},
                          round(time.monotonic() - started, 1), len(night.rows),
                          night.failing()))
    base, head = nights_of["base"], nights_of["head"]
    findings = compare(base, head)
    checked = SideRecord(os.path.join(folder, change.head[:16]))
    said = checked.read(f"checked-against-{change.base[:16]}") or {}
    for finding in findings:
        finding.state = finding.state or said.get(_key_of(finding), "")
    if any(not finding.state for finding in findings) and head.build.get("ok"):
        if runners["head"] is None:   # every row came from the record: build to check again
            runners["head"] = bench.runner(change.head, head.build["folder"]) \
                if bench.build(change.head)["ok"] else None
        if runners["head"] is not None:
            _check_again(findings, bench, runners["head"], log)
            checked.write(f"checked-against-{change.base[:16]}",
                          {_key_of(finding): finding.state for finding in findings})
    stayed = sorted(name for name, row in head.rows.items() if row["signatures"]
                    and name in base.rows
                    and set(row["signatures"]) == set(base.rows[name]["signatures"]))
    return TrialOutcome(sides, findings, stayed, errors)


def _key_of(finding: Finding) -> str:
    return f"{finding.kind} {finding.row} {finding.signature}"


class SideRecord:
    """One commit's build and each item's rows, a file each, written the moment they are
    known: `build.json`, `ITEM-DIGEST.json` (the item's command line decides the digest,
    so another selection's item of the same name is another record)."""

    def __init__(self, folder: str):
        self.folder = folder

    @staticmethod
    def key(item: Item) -> str:
        import hashlib
        digest = hashlib.sha256(json.dumps(list(item.argv)).encode()).hexdigest()[:10]
        return f"{item.name}-{digest}"

    def read(self, name: str) -> dict[str, Any] | None:
        path = os.path.join(self.folder, name + ".json")
        if not os.path.exists(path):
            return None
        with open(path) as handle:
            data: dict[str, Any] = json.load(handle)
        return data

    def write(self, name: str, data: dict[str, Any]) -> None:
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, name + ".json")
        with open(path + ".tmp", "w") as handle:
            json.dump(data, handle, indent=1)
        os.replace(path + ".tmp", path)


def _run_side(name: str, commit: str, change: Change, record: SideRecord, items: list[Item],
              bench: Bench, log: Callable[[str], None]) -> tuple[nights.Night, Any]:
    """The side as a night: its build and every item's rows, from the record where an
    earlier try on this commit ran the same item, else run (the commit built first, once);
    (the night, (python, env) when anything ran on this build, else None)."""
    night = nights.Night(commit, commit_bisect.title(change.source, commit), "")
    todo = [item for item in items if record.read(SideRecord.key(item)) is None]
    built = record.read("build")
    if todo or built is None:
        log(f"try: {name} {commit[:10]} {night.title[:70]}")
        built = bench.build(commit)
        record.write("build", built)
    night.build = {**built, "errors": []}
    if not built["ok"]:
        return night, None
    runner = bench.runner(commit, built["folder"]) if todo else None
    for number, item in enumerate(items, 1):
        key = SideRecord.key(item)
        done = record.read(key)
        if done is None:
            log(f"try: {name} [{number}/{len(items)}] {item.name}")
            rows, error = bench.run_item(item, runner, os.path.join(record.folder, key),
                                         built["folder"])
            done = {"rows": rows, "error": error}
            if not error:   # a failed item is run again by the next try, never remembered
                record.write(key, done)
        if done["error"]:
            night.build["errors"].append(done["error"])
        night.rows.update(done["rows"])
    night.finished = True
    return night, runner


def compare(base: nights.Night, head: nights.Night) -> list[Finding]:
    """The head's rows against the base's. A row only the head has (a check the base could
    not run, a pass the head adds) is new where it fails; a registered reproducer that
    reproduced on the base and does not on the head fixes its entry."""
    if not head.build.get("ok", True):
        if base.build.get("ok", True):
            # the bench builds a failing commit twice before it says so: confirmed
            return [Finding(NEW, "build", nights.BUILD_FAILED, nights.CONFIRMED,
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
        if finding.state:
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

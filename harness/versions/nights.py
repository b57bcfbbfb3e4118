"""The nights of a watched TVM branch: what each commit's build showed, and what changed.

A night is one commit of the branch, built and run through a selection of checks; each
check is a *row* (a catalog case on a path, a registered reproducer, a fuzz campaign)
holding the signatures of the failures it showed, and how to check it again alone (its
`recheck`). Tonight compared with the last finished night gives the *news*: a signature a
row shows now and did not (new), or showed and does not any more (gone), and a build that
stopped compiling. Each news is checked again on the same build before anything is
blamed (flaky otherwise), and what repeats is hunted to its commit (cli/watch_hunts).
Everything here is data and its comparison: the state file is one JSON document written
whole, so a night cut short resumes where it stopped.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import time

STATE_FORMAT = 1
REPRODUCES = "reproduces"            # a reproducer row's one signature
BUILD_FAILED = "build:it does not compile"
NEW, GONE, BROKE = "new", "gone", "build-failed"
CONFIRMED, FLAKY = "confirmed", "flaky"
UNCHECKED = "not checked again"   # its row has no check of its own, or it could not run


@dataclasses.dataclass
class News:
    """A change on one row since the last finished night."""
    row: str
    signature: str
    change: str              # NEW | GONE | BROKE
    state: str = ""          # "" not yet | CONFIRMED | FLAKY | UNCHECKED (never hunted)
    hunt: str = ""           # the hunt's id, once one follows it
    since: str = ""          # the commit of the night it is compared with (the row's last)
    note: str = ""           # why a confirmed change is not hunted

    @property
    def key(self) -> str:
        return f"{self.change} {self.row} {self.signature}"


@dataclasses.dataclass
class Night:
    commit: str
    title: str
    started: str
    build: dict = dataclasses.field(default_factory=dict)   # ok, seconds, reused, tail, folder
    rows: dict = dataclasses.field(default_factory=dict)    # name -> {signatures, recheck}
    done: list = dataclasses.field(default_factory=list)    # selection items finished
    news: list = dataclasses.field(default_factory=list)    # [News]
    previous: str = ""       # the commit it was compared with
    finished: bool = False

    @classmethod
    def from_json(cls, data: dict) -> "Night":
        return cls(**{**data, "news": [News(**item) for item in data.get("news", [])]})

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    def failing(self) -> int:
        return sum(1 for row in self.rows.values() if row["signatures"])


@dataclasses.dataclass
class Hunt:
    """The search for the commit behind one news, possibly over several nights."""
    id: str
    change: str              # NEW (introduced) | GONE (fixed) | BROKE (the build)
    row: str
    signature: str
    recheck: dict
    old: str                 # the last commit without the change
    new: str                 # the first night's commit with it
    opened: str = ""
    state: str = "pending"   # pending | found | narrowed (skips) | not-proven | gave-up
    culprit: str = ""
    culprit_title: str = ""
    pr: str = ""
    parent: str = ""
    parent_said: str = ""
    said: str = ""           # the culprit's own check
    steps: int = 0
    builds: int = 0
    minutes: float = 0.0
    progress: str = ""       # how far an unfinished search got
    report: str = ""         # the text for an upstream issue

    @property
    def fixed(self) -> bool:
        return self.change == GONE


def hunt_id(news: News, old: str, new: str, extra: str = "") -> str:
    import hashlib
    text = f"{news.change} {news.signature} {old} {new} {extra}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def pr_number(title: str) -> str:
    """TVM's squash-merge titles end with the PR: `[Relax] Fix ... (#20128)`."""
    match = re.search(r"\(#(\d+)\)\s*$", title)
    return match.group(1) if match else ""


def changes(last: Night | None, earlier: list[Night], tonight: Night) -> list[News]:
    """What tonight shows that the row's last night did not, and the other way: each row
    compared with the newest of `earlier` (finished nights whose build worked, newest
    first) that has it, so a row a night lost (its command failed: the harness's, not
    TVM's) is compared with the night before. A build that fails tonight after `last` (the
    last finished night) built. A row no earlier night has brings no news (its failures
    are on the page, as the rows' own status)."""
    if not tonight.build.get("ok", True):
        if last is not None and last.build.get("ok", True):
            return [News("build", BUILD_FAILED, BROKE, since=last.commit)]
        return []   # broken since an earlier night: its hunt is that night's
    found = []
    for name, row in sorted(tonight.rows.items()):
        before = next((night for night in earlier if name in night.rows), None)
        if before is None:
            continue
        now, then = set(row["signatures"]), set(before.rows[name]["signatures"])
        found += [News(name, signature, NEW, since=before.commit)
                  for signature in sorted(now - then)]
        found += [News(name, signature, GONE, since=before.commit)
                  for signature in sorted(then - now)]
    return found


class WatchState:
    """The nights and hunts of one watched checkout, in STATE_DIR/watch.json."""

    def __init__(self, folder: str):
        self.folder = folder
        self.path = os.path.join(folder, "watch.json")
        self.nights: list[Night] = []
        self.hunts: dict[str, Hunt] = {}
        if os.path.exists(self.path):
            with open(self.path) as handle:
                data = json.load(handle)
            if data.get("format") == STATE_FORMAT:
                self.nights = [Night.from_json(item) for item in data["nights"]]
                self.hunts = {key: Hunt(**value) for key, value in data["hunts"].items()}

    def save(self) -> None:
        os.makedirs(self.folder, exist_ok=True)
        data = {"format": STATE_FORMAT, "nights": [night.to_json() for night in self.nights],
                "hunts": {key: dataclasses.asdict(hunt) for key, hunt in self.hunts.items()}}
        with open(self.path + ".tmp", "w") as handle:
            json.dump(data, handle, indent=1)
        os.replace(self.path + ".tmp", self.path)

    def last_finished(self, before: str | None = None, built: bool = False) -> Night | None:
        """The newest finished night (other than the one of commit `before`; with `built`,
        one whose build worked: the night rows are compared with)."""
        for night in reversed(self.nights):
            if night.finished and night.commit != before and \
                    (not built or night.build.get("ok", True)):
                return night
        return None

    def built_before(self, commit: str) -> list[Night]:
        """Finished nights whose build worked, newest first, but the one of `commit`."""
        return [night for night in reversed(self.nights) if night.finished
                and night.commit != commit and night.build.get("ok", True)]

    def night_at(self, commit: str) -> Night | None:
        return next((night for night in reversed(self.nights) if night.commit == commit), None)

    def night_of(self, commit: str, title: str) -> Night:
        """Tonight's record: an unfinished one of this commit is resumed."""
        if self.nights and self.nights[-1].commit == commit and not self.nights[-1].finished:
            return self.nights[-1]
        night = Night(commit, title, time.strftime("%Y-%m-%d %H:%M"))
        self.nights.append(night)
        return night

    def folder_of(self, night: Night) -> str:
        return os.path.join(self.folder, "nights",
                            f"{self.nights.index(night) + 1:03d}-{night.commit[:10]}")

    def pending(self) -> list[Hunt]:
        return [hunt for hunt in self.hunts.values() if hunt.state == "pending"]

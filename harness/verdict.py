"""Verdicts, violations and the exit codes `git bisect run` understands.

A run's verdict is the most severe thing it saw. Who is to blame decides the
kind: a TVM exception is a violation of TVM's (`error`, or `lossy-roundtrip` on
a copy), a signal is a `crash`, and an exception from the harness's own code is
`harness-error` (exit 4), so that a bisect stops rather than blame a release.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

# Most severe first. harness-error outranks everything: nothing TVM did can be
# trusted once our own code failed.
VERDICTS = ("harness-error", "crash", "timeout", "mutated", "lossy-roundtrip", "error",
            "unsupported", "pass")

EXIT_PASS = 0
EXIT_VIOLATED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 4   # the harness itself failed: a bisect must stop, not blame a release
EXIT_CANNOT_TEST = 125  # git bisect run: skip this revision
EXIT_INTERRUPTED = 130  # Ctrl-C: what was finished is kept (rows journals, state files)
EXIT_TERMINATED = 143   # SIGTERM (a CI job cancelled, `kill`): kept and stopped the same way

_EXIT_CODES = {
    "pass": EXIT_PASS,
    "mutated": EXIT_VIOLATED,
    "lossy-roundtrip": EXIT_VIOLATED,
    "crash": EXIT_VIOLATED,
    "timeout": EXIT_VIOLATED,
    # The original yolov3-tiny bug surfaced as extraction *failing*: an error on the
    # path is a regression to bisect, not a reason to skip.
    "error": EXIT_VIOLATED,
    "unsupported": EXIT_CANNOT_TEST,
    "harness-error": EXIT_INTERNAL,
}


def first_line(exc: BaseException) -> str:
    """`Type: first line of the message`, as a violation's (or a record's) detail."""
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip() if lines else ''}".rstrip(": ")


class BadInput(Exception):
    """The user's input is wrong (unknown case, unreadable file): exit 2, one line."""


class UnknownVerdict(Exception):
    """A verdict kind this module does not know: a harness bug, never a pass."""


@dataclasses.dataclass(frozen=True)
class Status:
    """What a result or a row means once read against the registry: whether it fails
    the run is data, decided here once (as lit's ResultCode carries isFailure)."""
    name: str
    failing: bool
    exit: int


STATUSES = {status.name: status for status in (
    Status("pass", False, EXIT_PASS),
    Status("known", False, EXIT_PASS),            # every violation is a registered issue
    Status("unsupported", False, EXIT_CANNOT_TEST),
    Status("new", True, EXIT_VIOLATED),           # a violation the registry does not explain
    Status("stale", True, EXIT_VIOLATED),         # a registered issue that no longer happens
    Status("harness-error", True, EXIT_INTERNAL),
)}


def status(name: str) -> Status:
    try:
        return STATUSES[name]
    except KeyError:
        raise UnknownVerdict(f"unknown status {name!r}") from None


def exit_code_of_rows(rows) -> int:
    """A batch's exit code from its rows' `failing` and `exit` fields: a harness error
    anywhere wins (4), then any failing row (1); else 0 (unsupported rows included)."""
    rows = list(rows)
    if any(row["exit"] == EXIT_INTERNAL for row in rows):
        return EXIT_INTERNAL
    return EXIT_VIOLATED if any(row["failing"] for row in rows) else EXIT_PASS


def exit_code(verdict: str) -> int:
    try:
        return _EXIT_CODES[verdict]
    except KeyError:
        raise UnknownVerdict(f"unknown verdict {verdict!r}") from None


def worst(verdicts) -> str:
    present = set(verdicts)
    unknown = present - set(VERDICTS)
    if unknown:
        raise UnknownVerdict(f"unknown verdict(s) {sorted(unknown)}")
    for verdict in VERDICTS:
        if verdict in present:
            return verdict
    return "pass"


# Where a violation was seen, as data (never parsed out of a stage name):
#   stage        the stage's own call (a pass raising, a pass or stage mutating a module)
#   checks       the harness's checks around a stage (TVM failing in a hash or save_json)
#   copy         a copier, the comparison of a copy, or the path run over a copy
#   determinism  the final stage run a second time on the same input
#   process      the child process outside any stage (setup; a crash before the first stage)
PHASES = ("stage", "checks", "copy", "determinism", "process")


@dataclasses.dataclass
class Violation:
    kind: str        # a verdict other than pass
    stage: str       # the stage that was running or whose output was checked
    access_path: str  # where in the IR the difference is (or what was running)
    detail: str
    pass_name: str | None = None   # the innermost pass, where one applies ("pass" in JSON)
    pass_index: int | None = None  # its position among the passes the stage ran (1-based)
    phase: str = "stage"           # PHASES: what was running when it was seen
    copier: str | None = None      # phase copy: deepcopy | json | tvmscript (or a hook's)

    def __post_init__(self):
        if self.kind not in VERDICTS or self.kind == "pass":
            raise UnknownVerdict(f"unknown violation kind {self.kind!r}")
        if self.phase not in PHASES:
            raise UnknownVerdict(f"unknown violation phase {self.phase!r}")

    def where(self) -> str:
        phase = "" if self.phase == "stage" else f" ({self.phase}" + (
            f", {self.copier}" if self.copier else "") + ")"
        if self.pass_name is None:
            return f"stage {self.stage}{phase}"
        index = f" (#{self.pass_index})" if self.pass_index else ""
        return f"stage {self.stage}{phase}, pass {self.pass_name}{index}"

    def one_line(self) -> str:
        return f"{self.kind} at {self.where()}: {self.access_path}: {self.detail}"

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data["pass"] = data.pop("pass_name")
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Violation":
        data = dict(data)
        if "pass" in data:
            data["pass_name"] = data.pop("pass")
        if "path" in data:   # the name before 2026-12 (a journal's older rows)
            data["access_path"] = data.pop("path")
        # an event's name, a printed signature: derived, not fields
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})


@dataclasses.dataclass
class StageRecord:
    name: str
    seconds: float
    mutated_source: bool = False
    passes: int = 0          # pass runs the guard saw inside this stage


@dataclasses.dataclass
class PassRecord:
    """One pass run, in run order, as the pass instrument saw it."""
    stage: str
    name: str
    index: int               # 1-based position among the stage's pass runs
    seconds: float
    mutated_input: bool = False
    raised: bool = False     # it raised: an outer pass caught that (FoldConstant does), or
                             # the stage ended with the exception


@dataclasses.dataclass
class CopierRecord:
    name: str
    verdict: str             # pass | lossy-roundtrip | unsupported
    seconds: float
    detail: str = ""


@dataclasses.dataclass
class Result:
    case: str
    verdict: str = "pass"
    stages: list[StageRecord] = dataclasses.field(default_factory=list)
    violations: list[Violation] = dataclasses.field(default_factory=list)
    passes: list[PassRecord] = dataclasses.field(default_factory=list)
    copiers: list[CopierRecord] = dataclasses.field(default_factory=list)
    tvm_version: str | None = None
    tvm_ffi_version: str | None = None
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    stderr_tail: str = ""
    crash_input: str | None = None   # JSON of the module the crashing pass received
    # What the path produced, comparably: the signatures `outcome_count` counts (a task's
    # name, weight and function hashes; an executable's parts; a module's hash), as JSON.
    outcome: list = dataclasses.field(default_factory=list)
    reproducer: str | None = None    # repro.py the child wrote, when it was asked to
    reproducer_error: str = ""       # why it could not write it (the verdict stands)
    task_output: dict | None = None  # what a child asked for a task (no check) answered

    def set_outcome(self, signatures: list) -> None:
        self.outcome = json.loads(json.dumps(signatures))

    @property
    def outcome_count(self) -> int:
        """How many signatures the outcome holds: tasks (extract), tuned workloads (tune),
        code parts (compile), modules (the pass sweep)."""
        return len(self.outcome)

    def add(self, violation: Violation) -> None:
        self.violations.append(violation)
        self.verdict = worst([self.verdict, violation.kind])

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data["violations"] = [v.to_json() for v in self.violations]
        data["outcome_count"] = self.outcome_count
        if data["task_output"] is None:   # only the reducer's task children answer one
            del data["task_output"]
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        # `check --json` adds the registry's reading (status, known, ...): not fields
        names = {field.name for field in dataclasses.fields(cls)}
        data = {key: value for key, value in data.items() if key in names}
        data["stages"] = [StageRecord(**s) for s in data.get("stages", [])]
        data["violations"] = [Violation.from_json(v) for v in data.get("violations", [])]
        data["passes"] = [PassRecord(**p) for p in data.get("passes", [])]
        data["copiers"] = [CopierRecord(**c) for c in data.get("copiers", [])]
        result = cls(**data)
        worst([result.verdict])   # an unknown verdict read back is a harness error
        return result

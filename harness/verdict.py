"""Verdicts, violations and the exit codes `git bisect run` understands.

A run's verdict is the most severe thing it saw. Who is to blame decides the
kind: a TVM exception is a violation of TVM's (`error`, or `lossy-roundtrip` on
a copy), a signal is a `crash`, and an exception from the harness's own code is
`harness-error` (exit 4), so that a bisect stops rather than blame a release.
"""
from __future__ import annotations

import dataclasses
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


@dataclasses.dataclass
class Violation:
    kind: str        # a verdict other than pass
    stage: str       # the stage that was running or whose output was checked
    path: str        # access path / field where the difference is
    detail: str
    pass_name: str | None = None   # the innermost pass, where one applies ("pass" in JSON)
    pass_index: int | None = None  # its position among the passes the stage ran (1-based)

    def __post_init__(self):
        if self.kind not in VERDICTS or self.kind == "pass":
            raise UnknownVerdict(f"unknown violation kind {self.kind!r}")

    def where(self) -> str:
        if self.pass_name is None:
            return f"stage {self.stage}"
        index = f" (#{self.pass_index})" if self.pass_index else ""
        return f"stage {self.stage}, pass {self.pass_name}{index}"

    def one_line(self) -> str:
        return f"{self.kind} at {self.where()}: {self.path}: {self.detail}"

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data["pass"] = data.pop("pass_name")
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Violation":
        data = {k: v for k, v in data.items() if k != "event"}
        if "pass" in data:
            data["pass_name"] = data.pop("pass")
        return cls(**data)


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
    tasks: int = 0
    stages: list[StageRecord] = dataclasses.field(default_factory=list)
    violations: list[Violation] = dataclasses.field(default_factory=list)
    passes: list[PassRecord] = dataclasses.field(default_factory=list)
    copiers: list[CopierRecord] = dataclasses.field(default_factory=list)
    tvm_version: str | None = None
    tvm_ffi_version: str | None = None
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    stderr_tail: str = ""
    crash_input: str | None = None   # JSON of the module the crashing pass received

    def add(self, violation: Violation) -> None:
        self.violations.append(violation)
        self.verdict = worst([self.verdict, violation.kind])

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data["violations"] = [v.to_json() for v in self.violations]
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        data = dict(data)
        data["stages"] = [StageRecord(**s) for s in data.get("stages", [])]
        data["violations"] = [Violation.from_json(v) for v in data.get("violations", [])]
        data["passes"] = [PassRecord(**p) for p in data.get("passes", [])]
        data["copiers"] = [CopierRecord(**c) for c in data.get("copiers", [])]
        result = cls(**data)
        worst([result.verdict])   # an unknown verdict read back is a harness error
        return result

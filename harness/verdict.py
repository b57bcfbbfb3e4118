"""Verdicts, violations and the exit codes `git bisect run` understands."""
from __future__ import annotations

import dataclasses
from typing import Any

# Most severe first: a run's verdict is the most severe thing it saw.
VERDICTS = ("crash", "timeout", "mutated", "lossy-roundtrip", "error", "unsupported", "pass")

EXIT_PASS = 0
EXIT_VIOLATED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 4   # the harness itself failed: a bisect must stop, not blame a release
EXIT_CANNOT_TEST = 125  # git bisect run: skip this revision

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
}


class BadInput(Exception):
    """The user's input is wrong (unknown case, unreadable file): exit 2, one line."""


def exit_code(verdict: str) -> int:
    return _EXIT_CODES[verdict]


def worst(verdicts) -> str:
    present = set(verdicts)
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

    def one_line(self) -> str:
        return f"{self.kind} at stage {self.stage}: {self.path}: {self.detail}"


@dataclasses.dataclass
class StageRecord:
    name: str
    seconds: float
    mutated_source: bool = False


@dataclasses.dataclass
class Result:
    case: str
    verdict: str = "pass"
    tasks: int = 0
    stages: list[StageRecord] = dataclasses.field(default_factory=list)
    violations: list[Violation] = dataclasses.field(default_factory=list)
    tvm_version: str | None = None
    tvm_ffi_version: str | None = None
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    stderr_tail: str = ""

    def add(self, violation: Violation) -> None:
        self.violations.append(violation)
        self.verdict = worst([self.verdict, violation.kind])

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        data = dict(data)
        data["stages"] = [StageRecord(**s) for s in data.get("stages", [])]
        data["violations"] = [Violation(**v) for v in data.get("violations", [])]
        return cls(**data)

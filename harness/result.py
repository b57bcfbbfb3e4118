"""What one check found: its verdict, violations, and the records of what ran.

The vocabulary (outcomes, phases, violations, exit codes) is harness.verdict's; this is the
result a child sends its parent and a report row is made of: the stages and passes that
ran, the copies made, the answers compared, and what the path produced.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from harness.verdict import Outcome, Violation, exit_code, worst


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
    verdict: Outcome         # pass | lossy-roundtrip | unsupported
    seconds: float
    detail: str = ""

    def __post_init__(self):
        self.verdict = Outcome.of(self.verdict)


@dataclasses.dataclass
class AnswerRecord:
    """One comparison of numbers: what was compared with what, and how it came out."""
    comparison: str          # "deepcopy copy", "the module before convert-layout", "PyTorch"
    status: str              # agree | differ | not compared | not run (the answer is known)
    detail: str = ""         # the mismatch, or why it was not compared
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    headroom: float = 0.0    # the largest error over its allowance (1: at the tolerance's edge)
    # the answer moves with its input (two draws differ beyond the tolerance); False: an
    # agreement proves little (constant weights answer the same whatever the input)
    sensitive: bool | None = None


@dataclasses.dataclass
class ConverterRecord:
    """The converters of TVM's frontend an import looked up, in first-use order
    (tvmapi.frontend_reach): what the reach map counts as exercised."""
    frontend: str            # the converter map: onnx, exported_program, fx, tflite, stablehlo
    used: list[str] = dataclasses.field(default_factory=list)
    measurable: bool = True  # False: no map on this door, or this TVM hides it


@dataclasses.dataclass
class Result:
    case: str
    verdict: Outcome = Outcome.PASS
    stages: list[StageRecord] = dataclasses.field(default_factory=list)
    violations: list[Violation] = dataclasses.field(default_factory=list)
    passes: list[PassRecord] = dataclasses.field(default_factory=list)
    copiers: list[CopierRecord] = dataclasses.field(default_factory=list)
    answers: list[AnswerRecord] = dataclasses.field(default_factory=list)
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
    converters: ConverterRecord | None = None   # the import's frontend converters

    def __post_init__(self):
        self.verdict = worst([self.verdict])   # a name read back becomes a member

    def set_outcome(self, signatures: list) -> None:
        self.outcome = json.loads(json.dumps(signatures))

    @property
    def outcome_count(self) -> int:
        """How many signatures the outcome holds: tasks (extract), tuned workloads (tune),
        code parts (compile), modules (the pass sweep)."""
        return len(self.outcome)

    @property
    def versions(self) -> dict:
        """The TVM stack the check ran on, as registry ranges and reproducers read it."""
        return {"tvm_version": self.tvm_version, "tvm_ffi_version": self.tvm_ffi_version}

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
        for optional in ("task_output", "converters"):   # absent where nothing was asked
            if data[optional] is None:
                del data[optional]
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
        data["answers"] = [AnswerRecord(**a) for a in data.get("answers", [])]
        if data.get("converters") is not None:
            data["converters"] = ConverterRecord(**data["converters"])
        return cls(**data)   # an unknown verdict read back is a harness error

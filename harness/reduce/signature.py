"""A failure's signature: what a reduction must keep so it cannot slide onto another bug.

The same verdict kind, the same stage and pass, and the same error message with
numbers, addresses and names masked (a reduced graph renames and reshapes
everything). Like llvm-reduce's interestingness test, but derived from the
original failure instead of written by hand.
"""
from __future__ import annotations

import dataclasses
import re

from harness.verdict import Result, Violation

_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"(['\"`])[^'\"`]*\1"), "'?'"),       # quoted names
    (re.compile(r"[%@$][\w.]+"), "%?"),                 # IR value names
    (re.compile(r"\b[A-Za-z_][\w.]*\d+\b"), "name?"),   # generated names (lv12, conv_3)
    (re.compile(r"\d+(\.\d+)?"), "N"),
    (re.compile(r"\s+"), " "),
]


def normalize(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else ""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text.strip()


@dataclasses.dataclass(frozen=True)
class Signature:
    kind: str
    stage: str
    pass_name: str | None
    message: str

    @classmethod
    def of(cls, violation: Violation) -> "Signature":
        # A stage may be reported as "(checks)" of another: the stage itself is what counts.
        # A crash's or mutation's detail names the place, not the bug: kind/stage/pass do.
        message = "" if violation.kind in ("crash", "timeout", "mutated") else \
            normalize(violation.detail)
        return cls(violation.kind, violation.stage, violation.pass_name, message)

    def found_in(self, result: Result) -> bool:
        return any(Signature.of(violation) == self for violation in result.violations)

    def describe(self) -> str:
        where = f"{self.stage}" + (f", pass {self.pass_name}" if self.pass_name else "")
        return f"{self.kind} at {where}" + (f": {self.message}" if self.message else "")

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

"""A failure's signature: what makes two failures the same bug.

The violation kind, the stage and the phase it was seen in, the pass, and the
error message with numbers, addresses and names masked (a reduced graph or
another release renames and reshapes everything). The reducer keeps it so a
reduction cannot slide onto another bug (llvm-reduce's interestingness test,
derived from the failure instead of written by hand); a bisect decides "bad" by
it, so a known bug elsewhere in the pipeline cannot derail the search.

Its text form, printed by `check` for each violation and taken by
`bisect --match` / `bisect-step --match`, is

    KIND:STAGE[/PHASE]:PASS[:MESSAGE]          e.g. mutated:zero-pipeline:tirx.AnnotateEntryFunc

with `-` for no pass; a pattern may leave trailing parts out and use globs in
any part (`crash:*`, `error:convert-layout`).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import re

from harness.result import Result
from harness.verdict import PHASES, VERDICTS, BadInput, Outcome, Phase, Violation

_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"(['\"`])[^'\"`]*\1"), "'?'"),       # quoted names
    (re.compile(r"[%@$][\w.]+"), "%?"),                 # IR value names
    (re.compile(r"\b[A-Za-z_][\w.]*\d+\b"), "name?"),   # generated names (lv12, conv_3)
    (re.compile(r"\d+(\.\d+)?"), "N"),
    (re.compile(r"\s+"), " "),
]
NO_PASS = "-"
# A wrong answer's access path once localized (oracles.answer_localize) names the operator
# and the attributes given at the first framework node whose output differs: its cause,
# which a registry entry may match on any model (catalog.issue_entry).
LOCALIZED = "first wrong node: "


def localized(compared_with: str, cause: str) -> str:
    """The access path of a wrong answer against `compared_with`, traced to `cause`."""
    return f"(answer vs {compared_with}; {LOCALIZED}{cause})"


def normalize(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else ""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text.strip()


def _message(violation: Violation) -> str:
    """What names the bug: a mutation's or timeout's detail names the place (kind, stage
    and pass do that), a crash's is its signal (a typed field, none for a bare exit)."""
    if violation.kind in (Outcome.MUTATED, Outcome.TIMEOUT):
        return ""
    if violation.kind == Outcome.CRASH:
        return violation.signal or ""
    if violation.kind == Outcome.WRONG_RESULT:   # its numbers vary; what it was compared with
        return normalize(violation.access_path)
    return normalize(violation.detail)


@dataclasses.dataclass(frozen=True)
class Signature:
    kind: str
    stage: str
    pass_name: str | None
    message: str
    phase: str = Phase.STAGE

    @classmethod
    def of(cls, violation: Violation) -> "Signature":
        # plain names: a signature crosses processes and files as text
        return cls(str(violation.kind), violation.stage, violation.pass_name,
                   _message(violation), str(violation.phase))

    def found_in(self, result: Result) -> bool:
        return self.first_in(result) is not None

    def first_in(self, result: Result) -> Violation | None:
        """The first violation of `result` with this signature."""
        return next((v for v in result.violations if Signature.of(v) == self), None)

    def text(self) -> str:
        stage = self.stage if self.phase == Phase.STAGE else f"{self.stage}/{self.phase}"
        head = f"{self.kind}:{stage}:{self.pass_name or NO_PASS}"
        return f"{head}:{self.message}" if self.message else head

    def describe(self) -> str:
        where = self.stage + (f" ({self.phase})" if self.phase != Phase.STAGE else "")
        where += f", pass {self.pass_name}" if self.pass_name else ""
        return f"{self.kind} at {where}" + (f": {self.message}" if self.message else "")

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Signature":
        return cls(**data)


def text_of(violation: Violation) -> str:
    return Signature.of(violation).text()


def split(text: str) -> list[str]:
    """A signature text's parts, [kind, stage, pass, message], as many as are written.
    The pass sweep's stages are named `pass:NAME`: their colon does not end the stage."""
    kind, sep, rest = text.partition(":")
    parts = [kind]
    if not sep:
        return parts
    if rest.startswith("pass:"):
        name, sep, rest = rest[len("pass:"):].partition(":")
        parts.append("pass:" + name)
    else:
        stage, sep, rest = rest.partition(":")
        parts.append(stage)
    if not sep:
        return parts
    pass_name, sep, message = rest.partition(":")
    return parts + [pass_name] + ([message] if sep else [])


@dataclasses.dataclass(frozen=True)
class Pattern:
    """A `--match` pattern over signature texts: each part a glob (or exact text); parts
    left out match anything."""
    kind: str
    stage: str
    pass_name: str
    message: str
    source: str

    @classmethod
    def parse(cls, text: str) -> "Pattern":
        parts = split(text)
        kind = parts[0]
        if not kind or kind == Outcome.PASS or (kind not in VERDICTS
                                                and not any(c in kind for c in "*?[")):
            raise BadInput(f"--match {text!r}: a signature starts with a violation kind "
                           f"({', '.join(v for v in VERDICTS if v != Outcome.PASS)}), e.g. "
                           "'mutated:zero-pipeline:tirx.AnnotateEntryFunc' or 'crash:*'; "
                           "`check` prints each violation's signature")
        parts += ["*"] * (4 - len(parts))
        stage = parts[1].removesuffix("/stage")   # the default phase is never written
        if "/" in stage and stage.rsplit("/", 1)[1] not in PHASES and "*" not in stage:
            raise BadInput(f"--match {text!r}: the phase after '/' must be one of "
                           f"{', '.join(PHASES)}")
        return cls(kind, stage, parts[2], parts[3], text)

    def matches(self, signature_text: str) -> bool:
        parts = split(signature_text)
        parts += [""] * (4 - len(parts))
        return all(part_matches(value, pattern) for value, pattern in
                   zip(parts, (self.kind, self.stage, self.pass_name, self.message), strict=False))

    def __str__(self) -> str:
        return self.source


def part_matches(value: str, pattern: str) -> bool:
    """One part of a signature against one part of a pattern (also a stage or a pass a
    bisect step reached: versions.bisect.stopped_before)."""
    # exact first: messages hold brackets (`msgs[i]`) that a glob would read as a class
    return value == pattern or fnmatch.fnmatchcase(value, pattern)

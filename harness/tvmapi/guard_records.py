"""What the per-pass guard watches and what it hands back when a stage ends.

Kept apart from the guard's own machinery (pass_guard) so that the runner reads one record
of a stage, not the guard's attributes after the fact.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from harness.classify import HarnessBug
from harness.result import PassRecord
from harness.tvmapi import copiers, structure


class Watched:
    """A module whose fingerprint must not move while a stage runs.

    Its identity map is checked after every pass (cheap). In replay mode (`by_json`) its
    JSON text is too; otherwise no deep fingerprint is taken at all: the stage guard hashes
    the source and the stage input at every stage end anyway, and a hash taken here (a
    structural hash of a possibly 50 MB module per stage) would be that work done twice.
    """

    def __init__(self, label: str, module, by_json: bool = False):
        self.label, self.module = label, module
        self.deep: Callable | None = copiers.save_json if by_json else None
        self.identity = structure.module_identity(module)
        self.expected = self.deep(module) if self.deep else None

    def moved(self) -> bool:
        identity = structure.module_identity(self.module)
        now = self.deep(self.module) if self.deep else None
        if now == self.expected and not structure.identity_changes(self.identity, identity):
            self.identity = identity
            return False
        # Blame the next change on the pass that makes it.
        self.identity, self.expected = identity, now
        return True


@dataclasses.dataclass
class Finding:
    """A pass that changed a module it must not: its record, which module, and how."""
    record: PassRecord
    what: str     # "its input", "source", "stage input"
    how: str


@dataclasses.dataclass
class StageEnd:
    """A stage's guard, handed over at its end (PassGuard.end_stage)."""
    passes: list[PassRecord]              # every pass the stage ran, in run order
    findings: list[Finding]               # passes that changed what they must not
    edited_in_place: list = dataclasses.field(default_factory=list)   # pieces edited in
    #                                       place, seen at the stage's end only (pass unnamed)
    tvm_error: tuple | None = None        # (TVM's error in the guard's own calls, (pass, index))
    bug: HarnessBug | None = None         # the guard's own exception, kept from TVM's callbacks

"""Invariant 1: a module object must look the same after a stage as before it.

A structural hash alone ignores fields that structural equality skips (spans,
some attrs); the full JSON text does not, so both are kept. The snapshot for a
readable mismatch path is rebuilt from that text only when something changed.
"""
from __future__ import annotations

import dataclasses

from . import compat


@dataclasses.dataclass(frozen=True)
class Fingerprint:
    hash: int
    json_text: str

    @classmethod
    def of(cls, mod) -> "Fingerprint":
        return cls(compat.structural_hash(mod), compat.save_json(mod))

    def changed_path(self, mod) -> str | None:
        """None if `mod` is unchanged, else where it first differs from the snapshot."""
        if compat.structural_hash(mod) == self.hash:
            if compat.save_json(mod) == self.json_text:
                return None
            return "(a field outside structural equality; JSON text differs)"
        snapshot = compat.load_json(self.json_text)
        return compat.first_mismatch(snapshot, mod) or "(structural hash differs)"

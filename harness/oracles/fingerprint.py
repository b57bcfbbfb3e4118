"""Invariant 1: a module object must look the same after a stage as before it.

After every stage the structural hash is re-taken (milliseconds even for 50 MB of
weights). The full JSON text, which also sees fields outside structural
equality (spans, attrs fields excluded from SEqual), is compared once at the
end: save_json costs more than a whole stage on weight-heavy models. The
snapshot that names the mismatching access path is rebuilt from the text only
when something changed.
"""
from __future__ import annotations

import dataclasses

from harness.tvmapi import copiers, structure


@dataclasses.dataclass(frozen=True)
class Fingerprint:
    hash: int
    json_text: str | None = None

    @classmethod
    def of(cls, mod, with_json: bool = False) -> "Fingerprint":
        return cls(structure.structural_hash(mod), copiers.save_json(mod) if with_json else None)

    def snapshot(self):
        """A pristine copy of the module as it was fingerprinted (needs the JSON text)."""
        return copiers.load_json(self.json_text) if self.json_text is not None else None

    def hash_changed(self, mod) -> bool:
        return structure.structural_hash(mod) != self.hash

    def changed_path(self, mod, snapshot=None) -> str | None:
        """None if `mod` is unchanged, else where it first differs from its snapshot."""
        if not self.hash_changed(mod):
            if self.json_text is None or copiers.save_json(mod) == self.json_text:
                return None
            return "(a field outside structural equality: the JSON text differs)"
        snapshot = snapshot if snapshot is not None else self.snapshot()
        if snapshot is None:
            return "(structural hash changed)"
        return structure.first_mismatch(snapshot, mod) or "(structural hash changed)"

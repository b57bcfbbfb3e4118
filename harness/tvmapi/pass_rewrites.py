"""Which passes rewrote: the per-pass guard, also noting each pass whose output differed
from its input (its structural hash moved). The op-program fuzzer's steering signal.

It only adds a record to PassGuard (which records, never raises: the guarded run stays the
run users make): a structural hash of each pass's input before it and of its output
after it, nested passes included. A module TVM cannot hash counts as not rewritten.
"""
from __future__ import annotations

from harness.tvmapi.pass_guard import PassGuard
from harness.tvmapi.seen_pieces import piece_hash


class RewriteNotingGuard(PassGuard):
    """A PassGuard that also collects, over every stage, the names of the passes whose
    output's structural hash differed from their input's (`rewrote`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rewrote: set[str] = set()
        self._inputs: list[tuple[str, int | None]] = []   # (pass, its input's hash), open

    def begin_stage(self, name: str, watched: list) -> None:
        super().begin_stage(name, watched)
        self._inputs = []

    def run_before_pass(self, mod, info, watch: bool = True) -> None:
        super().run_before_pass(mod, info, watch)
        self._inputs.append((str(info.name), piece_hash(mod)[0]))

    def run_after_pass(self, mod, info) -> None:
        super().run_after_pass(mod, info)
        name = str(info.name)
        # Passes opened after this one and never closed raised (an outer pass caught it).
        while self._inputs and self._inputs[-1][0] != name:
            self._inputs.pop()
        if not self._inputs:
            return
        _, before = self._inputs.pop()
        after = piece_hash(mod)[0] if mod is not None else None
        if before is not None and after is not None and before != after:
            self.rewrote.add(name)

"""Every piece of IR a stage's passes were handed: hashed once, verified when the stage ends.

The per-pass guard's deep check, at a fraction of the cost of TVM's own. TVM's
`testing.immutable_module` hashes each pass's whole input before and after the pass: two
structural hashes of the whole module, every constant's weights included, per pass
application. But a pass's output shares its pieces (functions, the module's attrs, its
global infos) with its input: a pass that rewrites one function hands every other one on
as the same object. So each distinct piece is hashed once, when a pass is first handed
it, and once more when the stage ends.

Why that sees what the eager check sees: no code runs between one pass's end and the next
one's start, so the first hash is the piece as it was made. The piece is kept (a
reference), so its handle is not reused and copy-on-write copies it rather than edit it
in place; a piece whose hash moved by the stage's end was therefore written through,
bypassing copy-on-write, by a pass of this stage. Which pass, the runner finds by
replaying the stage under the eager check (paid only then). A rebinding, by contrast,
is seen per pass by the identity maps, as before.
"""
from __future__ import annotations

import dataclasses

from harness.classify import Call
from harness.tvmapi import structure


def piece_hash(piece) -> int | None:
    """The structural hash of one piece, or None for one TVM cannot hash (an attribute of
    a type without hash support): not checked, as the eager check skips such a module.
    Our own exception leaves as a HarnessBug."""
    hashed = Call.of("", structure.structural_hash, piece)
    return hashed.value if hashed.ok else None


@dataclasses.dataclass
class Piece:
    piece: object
    label: str          # the function's name, "(module attrs)" or "(global infos)"
    first_seen: int     # the index of the first pass handed it
    hash: int | None


class SeenPieces:
    def __init__(self):
        self.pieces: dict[int, Piece] = {}   # by handle: the same object, not an equal one

    def add(self, mod, identity: tuple, index: int) -> None:
        """The pieces of a pass's input not seen before in this stage, hashed now.
        `identity`: the module's identity map (structure.module_identity), made already."""
        functions, _attrs, global_infos = identity
        for global_var, function in functions.values():
            self._add(function, global_var.name_hint, index)
        self._add(getattr(mod, "attrs", None), "(module attrs)", index)
        self._add(global_infos, "(global infos)", index)

    def _add(self, piece, label: str, index: int) -> None:
        if piece is None:
            return
        handle = piece.__chandle__()
        if handle not in self.pieces:
            self.pieces[handle] = Piece(piece, label, index, piece_hash(piece))

    def edited(self) -> list[Piece]:
        """The pieces whose structural hash moved since they were first seen."""
        return [entry for entry in self.pieces.values()
                if entry.hash is not None and piece_hash(entry.piece) != entry.hash]

    def __len__(self) -> int:
        return len(self.pieces)

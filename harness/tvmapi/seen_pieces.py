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

Weights are pieces of their own. A Relax function is hashed without its tensors' bytes
(`skip_tensor_content`: yolov3-tiny's legalized main in 0.23 ms instead of 22 ms) and
with the list of its constants' tensors, by identity; each tensor is hashed whole once,
by handle: a pass that rewrites `main` hands on the same weights, so 48 MB of them are
hashed twice per stage, not twice per version of `main`. A tensor written through its
bytes moves its own hash; a constant pointed at another tensor moves the list.
"""
from __future__ import annotations

import dataclasses
import functools

from harness.classify import Call
from harness.tvmapi import ir, structure
from harness.tvmapi.loading import tvm


@functools.cache
def _relax_function():
    return tvm().relax.Function


def piece_hash(piece, weights_apart: bool = False) -> tuple:
    """(the structural hash of one piece, its weights): with `weights_apart` (a Relax
    function) the hash leaves the tensors' bytes out and takes their handles in, and the
    weights are the tensors; else the whole hash and no weights. The hash is None for a
    piece TVM cannot hash (an attribute of a type without hash support): not checked, as
    the eager check skips such a module. Our own exception leaves as a HarnessBug."""
    hashed = Call.of("", _hash_of, piece, weights_apart)
    return hashed.value if hashed.ok else (None, [])


def _hash_of(piece, weights_apart: bool) -> tuple:
    if not weights_apart:
        return structure.structural_hash(piece), []
    tensors = ir.constant_tensors(piece)
    return (structure.structural_hash(piece, skip_tensor_content=True),
            tuple(tensor.__chandle__() for tensor in tensors)), tensors


@dataclasses.dataclass
class Piece:
    piece: object
    label: str          # the function's name, "(module attrs)", "(global infos)", "(a weight of F)"
    first_seen: int     # the index of the first pass handed it
    hash: object        # the structural hash (a Relax function's: see piece_hash), or None
    weights_apart: bool = False


class SeenPieces:
    def __init__(self):
        self.pieces: dict[int, Piece] = {}   # by handle: the same object, not an equal one
        self.map_keys: dict[int, tuple | None] = {}   # a function map's key, by its handle

    def add(self, mod, identity: tuple, index: int) -> tuple | None:
        """The pieces of a pass's input not seen before in this stage, hashed now; returns
        the input's key (each piece's hash as first seen, by name), or None when a piece
        cannot be hashed. `identity`: the module's identity map (structure.module_identity)."""
        functions, _attrs, global_infos = identity
        handle = functions.__chandle__()
        if handle not in self.pieces:   # a map seen whole: no new function
            self.pieces[handle] = Piece(functions, "(functions)", index, None)
            named = [(global_var.name_hint, self._add(function, global_var.name_hint, index))
                     for global_var, function in functions.items()]
            self.map_keys[handle] = None if any(hashed is None for _, hashed in named) \
                else tuple(sorted(named))
        rest = (self._add(getattr(mod, "attrs", None), "(module attrs)", index),
                self._add(global_infos, "(global infos)", index))
        functions_key = self.map_keys[handle]
        return None if functions_key is None or None in rest else (functions_key, rest)

    def _add(self, piece, label: str, index: int):
        """The piece's hash as first seen ("" for no piece), hashing it if new."""
        if piece is None:
            return ""
        handle = piece.__chandle__()
        if handle in self.pieces:
            return self.pieces[handle].hash
        weights_apart = isinstance(piece, _relax_function())
        hashed, weights = piece_hash(piece, weights_apart)
        self.pieces[handle] = Piece(piece, label, index, hashed, weights_apart)
        for tensor in weights:   # hashed whole, once each
            self._add(tensor, f"(a weight of {label})", index)
        return hashed

    def edited(self) -> list[Piece]:
        """The pieces whose structural hash moved since they were first seen."""
        return [entry for entry in self.pieces.values() if entry.hash is not None
                and piece_hash(entry.piece, entry.weights_apart)[0] != entry.hash]

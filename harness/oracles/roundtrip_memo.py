"""Remembered round trips: a module's copies are made once per TVM build.

The sweep runs some 250 passes at each point of each case; most change nothing, so
their outputs are one module copied over and over (TVMScript's parse alone is most
of a small check); a model's report rows (its layouts, both paths) import one module;
the suite guard meets the same modules in many tests. A module text that a built-in
copier carried losslessly once is carried losslessly again by the same build, so the
verdict is kept on disk, like a compiler cache: the key is the copier, the module's JSON
text, this exact TVM build (`loading.build_identity`) and the oracles' own source. Kept: a
lossless verdict, and a copier's refusal to carry the module at all (`unsupported`, with its
reason: TVMScript that cannot print it). A failure is recomputed every time (a parser
refusing its own printer's text is one: oracles.roundtrip), and an injected copier is never
remembered. `rm -r .harness-cache/roundtrip-memo` forgets everything.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import os

from harness import paths
from harness.tvmapi import copiers, loading, structure

_HERE = os.path.dirname(os.path.abspath(__file__))
# The code a remembered verdict was reached by (the oracles and every TVM call they make,
# ir.py's constant handling and the reflection included): change it and the memo starts
# afresh.
_SOURCES = tuple(sorted(
    os.path.join(folder, name)
    for folder in (_HERE, os.path.dirname(os.path.abspath(copiers.__file__)))
    for name in os.listdir(folder) if name.endswith(".py")))


@functools.cache
def _salt() -> str:
    digest = hashlib.sha256(loading.build_identity().encode())
    for path in _SOURCES:
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def memo_dir() -> str:
    return os.path.join(paths.cache_dir(), "roundtrip-memo")


def module_key(json_text: str, module) -> str:
    """The module's part of an entry's key, taken once for all the copiers: hashing a
    weight-heavy module's text is most of a lookup (63 MB for resnet18). With the text,
    the module's structural hash, which sees a reflected field the JSON writer might leave
    out: free variables matched by position (by default a free variable hashes by its
    address, so a module holding one, as tirx.MakePackedAPI's output does, had a key of
    its process alone and was never remembered), tensor bytes left to the text."""
    structural = structure.structural_hash(module, map_free_vars=True, skip_tensor_content=True)
    return hashlib.sha256(f"{structural}\n".encode() + json_text.encode()).hexdigest()


def _entry(copier: str, key: str) -> str:
    digest = hashlib.sha256(f"{copier}\n{key}".encode()).hexdigest()
    return os.path.join(memo_dir(), _salt(), digest[:2], digest)


@dataclasses.dataclass(frozen=True)
class Remembered:
    """What this build's copier did with a module before: carried it losslessly, or
    refused to carry it at all, for `refusal` (the copier's own words)."""
    refusal: str = ""

    @property
    def lossless(self) -> bool:
        return not self.refusal


def remembered(copier: str, key: str) -> Remembered | None:
    """What this build's `copier` did with the module of `key` (module_key) before; None
    when it was not remembered."""
    try:
        with open(_entry(copier, key), encoding="utf-8") as handle:
            return Remembered(handle.read())
    except FileNotFoundError:
        return None


def remember(copier: str, key: str, unsupported: str = "") -> None:
    """Keep a lossless verdict, or with `unsupported` the copier's reason for refusing."""
    paths.write_shared(_entry(copier, key), unsupported)   # shards and workers share it

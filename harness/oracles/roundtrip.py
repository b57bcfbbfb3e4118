"""Invariant 2: a copy of a module is the module, field for field.

The copiers are the two ways users copy modules: `copy.deepcopy` (which TVM
implements through JSON) and an explicit save_json/load_json. A copier that
raises is itself a violation: that was the seed bug ("cannot find field axis").
"""
from __future__ import annotations

from typing import Callable

from harness.tvmapi import compat
from harness.oracles import fieldwise
from harness.verdict import Violation

Copier = Callable[[object], object]


def json_roundtrip(mod):
    return compat.load_json(compat.save_json(mod))


COPIERS: dict[str, Copier] = {"deepcopy": compat.deepcopy, "json": json_roundtrip}


def copy_with(name: str, copier: Copier, mod, stage: str):
    """(copy, None) or (None, violation) when the copier itself fails."""
    try:
        return copier(mod), None
    except Exception as exc:  # noqa: BLE001 - TVM raises many error types
        return None, Violation("lossy-roundtrip", stage, f"({name})",
                               f"{name} copy failed: {type(exc).__name__}: {exc}".strip())


def compare(original, copy, name: str, stage: str) -> Violation | None:
    """First difference between a module and its copy: structure, then attrs fields."""
    path = compat.first_mismatch(original, copy)
    if path is not None:
        return Violation("lossy-roundtrip", stage, path,
                         f"{name} copy is not structurally equal to the original")
    found = fieldwise.compare_module_attrs(original, copy)
    if found is not None:
        where, detail = found
        return Violation("lossy-roundtrip", stage, where, f"{name} copy: {detail}")
    return None

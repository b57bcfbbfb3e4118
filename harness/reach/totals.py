"""Every converter of each frontend on this TVM, and what is known of each before any case
runs: printed as JSON by a child (`python -m harness.reach.totals`), since the frontends
import TVM, torch, tflite and jax, none of which the reach command's parent loads.

For the PyTorch frontend, whether an ATen overload is a core ATen operator: torch.export
decomposes a program to core ATen by default, so a converter of a non-core overload is
reached only by a program exported without that decomposition (the reason the map gives).
"""
from __future__ import annotations

import json
import sys

from harness.tvmapi import frontend_reach, loading

NOT_CORE_ATEN = ("not a core ATen operator: torch.export's default decomposition never "
                 "emits it")


def _not_core_aten(names: list[str]) -> dict[str, str]:
    """{overload name: reason} for the exported-program converters torch.export's default
    decomposition cannot reach (`torch.Tag.core` missing from the overload's tags)."""
    import torch
    notes = {}
    for name in names:
        packet_name, _, overload = name.partition(".")
        packet = getattr(torch.ops.aten, packet_name, None)
        op = getattr(packet, overload or "default", None) if packet is not None else None
        if op is None:
            notes[name] = "no such ATen overload in this torch"
        elif torch.Tag.core not in op.tags and packet_name not in _CORE_BY_DECOMPOSITION:
            notes[name] = NOT_CORE_ATEN
    return notes


# Emitted by torch.export's decomposition though not tagged core (measured with torch
# 2.14.1: these appear in exported programs of torchvision models).
_CORE_BY_DECOMPOSITION = frozenset({"_native_batch_norm_legit_no_training"})


def totals() -> dict:
    """{frontend: {"converters": [...], "notes": {name: reason}, "missing": why or ""}}."""
    found = {}
    for frontend in frontend_reach.FRONTENDS:
        try:
            names = frontend_reach.converters(frontend)
            notes = _not_core_aten(names) if frontend == "exported_program" else {}
            missing = "" if names else "its converter map cannot be read on this TVM"
        except ImportError as exc:   # the frontend's framework is not installed here
            names, notes, missing = [], {}, f"cannot import it here ({exc})"
        found[frontend] = {"converters": names, "notes": notes, "missing": missing}
    return found


def main() -> int:
    loading.tvm()
    json.dump(totals(), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

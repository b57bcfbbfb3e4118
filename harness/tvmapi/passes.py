"""Every pass TVM registers under `relax.transform`, found by reflection.

The list comes from the FFI registry (`relax.transform.*` global functions), never
from a hand-written list of names, so a pass added upstream is swept without
editing this file. Each is built through its Python wrapper with the wrapper's
defaults; the few that need arguments take them from ARGUMENTS; a pass that still
cannot be built (it needs a database, a pattern, a codegen, a function to
differentiate) is listed as skipped with the reason TVM gave.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from harness.tvmapi import compat
from harness.tvmapi.pipelines import LAYOUTS
from harness.verdict import first_line

PREFIX = "relax.transform."
# Arguments for passes whose wrapper has no defaults: the sweep's one table.
ARGUMENTS: dict[str, tuple] = {
    "ConvertLayout": (LAYOUTS["nhwc"],),   # the catalog's own NHWC rewrite
    "BindParams": ("main", {}),
    "BindSymbolicVars": ({},),
    "AlterOpImpl": ({}, {}),
}
# The points of the extract path at which every pass is run on the module held there.
POINTS = ("imported", "legalized", "fused")


@dataclasses.dataclass(frozen=True)
class RegisteredPass:
    name: str                      # short name: FoldConstant
    make: Callable[[], Any] | None  # builds the Pass; None when skipped
    call: str                      # the constructor as a Python expression (reproducers)
    skipped: str = ""              # why it cannot run in the sweep


@functools.cache
def registered() -> tuple[RegisteredPass, ...]:
    tvm = compat.tvm()
    ffi = compat.ffi()
    names = sorted(name[len(PREFIX):] for name in ffi.registry.list_global_func_names()
                   if name.startswith(PREFIX) and "." not in name[len(PREFIX):])
    found = []
    for name in names:
        wrapper = getattr(tvm.relax.transform, name, None)
        args = ARGUMENTS.get(name, ())
        call = f"relax.transform.{name}({', '.join(repr(a) for a in args)})"
        if wrapper is None:
            found.append(RegisteredPass(name, None, call, "no Python wrapper"))
            continue
        try:
            built = wrapper(*args)
        except Exception as exc:  # noqa: BLE001 - TVM's reason is the report
            found.append(RegisteredPass(name, None, call,
                                        f"needs arguments: {first_line(exc)[:200]}"))
            continue
        if not isinstance(built, tvm.transform.Pass):
            found.append(RegisteredPass(name, None, call,
                                        f"not a pass constructor (returns {type(built).__name__})"))
            continue
        found.append(RegisteredPass(name, lambda w=wrapper, a=args: w(*a), call))
    return tuple(found)


def lookup(name: str) -> RegisteredPass:
    for registered_pass in registered():
        if registered_pass.name == name:
            return registered_pass
    raise KeyError(name)

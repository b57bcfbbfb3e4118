"""Relax module files as Python: the names TVMScript uses, and the modules a file defined.

A module file is an ordinary Python file (imports allowed) or bare TVMScript as
`mod.script()` prints it (its imports commented out); running either with these
names bound makes both work, on every release.
"""
from __future__ import annotations

from harness.tvmapi.loading import tvm


def script_globals() -> dict:
    """What TVMScript's own parser binds (I, R, T, tvm, ...) for a bare script."""
    tvm_module = tvm()
    try:
        from tvm.script.parser.core.entry import _default_globals
        return dict(_default_globals())
    except ImportError:   # a release that names its parser's globals otherwise
        script = tvm_module.script
        names = {"tvm": tvm_module, "I": script.ir, "R": script.relax}
        tir = getattr(script, "tirx", None) or getattr(script, "tir", None)
        return {**names, **({"T": tir} if tir is not None else {})}


def modules_in(namespace: dict) -> dict:
    """{name: IRModule} of the module-level values that are IRModules."""
    module_type = tvm().IRModule
    return {name: value for name, value in namespace.items()
            if isinstance(value, module_type) and not name.startswith("__")}

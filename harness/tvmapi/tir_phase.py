"""Which phase of `tvm.compile`'s TIR lowering a module is in, as facts a pass may rely on.

TVM's lowering passes assume what earlier passes of the pipeline made true (FlattenBuffer
wants no blocks left, LowerIntrin a target attribute, BF16StorageLegalize the packed API)
and refuse an input without it by an internal check. Which facts a pass's input has inside
`tvm.compile` is measured (tvmapi.passes.compile_phases), never listed by hand; the sweep
reads a refusal against them (cli.sweep_refusals).
"""
from __future__ import annotations

import functools

from harness.tvmapi import loading, reflection

# Each fact: what is true of every PrimFunc, and the pass of TVM's pipeline that makes it so.
FACTS = {
    "target-bound": "it has a target attribute",
    "no-init-blocks": "no block has an init statement",
    "opaque-blocks": "every block is opaque",
    "no-blocks": "no block is left",
    "packed-api": "it takes no buffer parameter",
}
MADE_BY = {
    "target-bound": "tirx.BindTarget",
    "no-init-blocks": "s_tir.LowerInitBlock",
    "opaque-blocks": "s_tir.ConvertBlocksToOpaque",
    "no-blocks": "s_tir.LowerOpaqueBlock",
    "packed-api": "tirx.MakePackedAPI",
}


def _tir():
    tvm = loading.tvm()
    return tvm.tirx if hasattr(tvm, "tirx") else tvm.tir


def _block_class():
    """The block statement's class: s_tir.SBlock on 0.27, tirx.SBlock on 0.25 and 0.26."""
    s_tir = getattr(loading.tvm(), "s_tir", None)
    return getattr(s_tir, "SBlock", None) or _tir().SBlock


def prim_functions(mod) -> list:
    prim_func = _tir().PrimFunc
    return [func for func in mod.functions.values() if isinstance(func, prim_func)]


def _blocks(stmt, stmt_class, block_class, found: list) -> None:
    """Every block under `stmt`: statements are walked by their reflected fields (the
    visitor API moved between releases; reflection did not)."""
    pending = [stmt]
    while pending:
        node = pending.pop()
        if isinstance(node, block_class):
            found.append(node)
        for name in _stmt_fields(type(node)):
            value = getattr(node, name, None)
            if isinstance(value, stmt_class):
                pending.append(value)
            elif isinstance(value, loading.ffi().Array):
                pending.extend(item for item in value if isinstance(item, stmt_class))


@functools.cache
def _stmt_fields(node_class) -> tuple[str, ...]:
    """The reflected fields of a statement class that may hold statements (not exprs)."""
    key = node_class.__tvm_ffi_type_info__.type_key
    return tuple(name for name, _ in reflection.fields_of_type(key)
                 if name not in ("span", "annotations", "iter_vars", "reads", "writes",
                                 "alloc_buffers", "match_buffers", "buffer", "indices"))


def _takes_buffers(func) -> bool:
    if len(getattr(func, "buffer_map", None) or {}):   # 0.25, 0.26
        return True
    return any("BufferType" in type(getattr(param, "ty", None)).__name__   # 0.27
               for param in func.params)


def facts(mod) -> frozenset[str]:
    """The FACTS true of every PrimFunc of `mod` (all of them when it has none)."""
    stmt_class, block_class = _tir().Stmt, _block_class()
    holds = set(FACTS)
    for func in prim_functions(mod):
        attrs = func.attrs
        if attrs is None or "target" not in attrs:
            holds.discard("target-bound")
        if _takes_buffers(func):
            holds.discard("packed-api")
        blocks: list = []
        _blocks(func.body, stmt_class, block_class, blocks)
        if blocks:
            holds.discard("no-blocks")
        if any(block.init is not None for block in blocks):
            holds.discard("no-init-blocks")
        if any(len(block.iter_vars) for block in blocks):
            holds.discard("opaque-blocks")
    return frozenset(holds)

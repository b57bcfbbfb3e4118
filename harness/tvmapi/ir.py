"""Walking and building Relax IR the same way on every release.

Measured differences: tensor annotations are `relax.TensorStructInfo` in 0.25,
`relax.TensorType` later; 0.27 renamed the boolean well-formedness check.
"""
from __future__ import annotations

from typing import Any

from harness.tvmapi.loading import tvm


def call_attrs(mod) -> list[tuple[str, Any]]:
    """(location, attrs) for every function's attrs and every relax Call's attrs.

    The order is deterministic for structurally equal modules, which is what lets
    two copies be compared pairwise.
    """
    t = tvm()
    relax = t.relax
    out = []
    for gv, func in sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint):
        fname = gv.name_hint
        if getattr(func, "attrs", None) is not None:
            out.append((f"@{fname}.attrs", func.attrs))
        if isinstance(func, relax.Function):
            calls = []

            def visit(expr, calls=calls):
                if isinstance(expr, relax.Call) and expr.attrs is not None:
                    calls.append(expr)
            relax.analysis.post_order_visit(func, visit)
            for index, call in enumerate(calls):
                op = getattr(call.op, "name", None) or getattr(call.op, "name_hint", "?")
                out.append((f"@{fname}/call[{index}]:{op}.attrs", call.attrs))
    return out


def count_calls(mod, op_names: tuple[str, ...]) -> int:
    """How many bindings of the module's relax functions call one of these ops (relax is
    in A-normal form: each call is a binding's value; a walk with a Python callback per
    node cost the fuzzer 50 ms an example)."""
    relax = tvm().relax
    count = 0
    for func in mod.functions.values():
        if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr):
            for block in func.body.blocks:
                for binding in block.bindings:
                    value = binding.value
                    if isinstance(value, relax.Call) and \
                            getattr(value.op, "name", None) in op_names:
                        count += 1
    return count


def tensor_annotation(shape, dtype: str):
    relax = tvm().relax
    if hasattr(relax, "TensorStructInfo"):  # 0.25
        return relax.TensorStructInfo(shape, dtype)
    return relax.TensorType(shape, dtype)


def block_builder():
    return tvm().relax.BlockBuilder()


def relax_op():
    return tvm().relax.op


def well_formed(mod) -> bool:
    """0.27 renamed the boolean check to check_well_formed (well_formed now raises)."""
    analysis = tvm().relax.analysis
    if hasattr(analysis, "check_well_formed"):
        return bool(analysis.check_well_formed(mod))
    return bool(analysis.well_formed(mod))

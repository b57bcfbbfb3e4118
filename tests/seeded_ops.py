"""Seeded faults only an op outside the conv/layout table exposes (for `fuzz --generator ops`).

Injected with --inject-pass tests/seeded_ops.py:NAME (tests/test_op_programs.py): each raises,
as a TVM pass fails, when `main` calls one of its ops; the conv/layout generator's Relax
builders (harness.tvmapi.graph_relax) never emit any of them.
"""
from __future__ import annotations

import tvm

# Scans and reductions: about one application in twenty of the op generator's draws.
REDUCTIONS = ("relax.cumsum", "relax.cumprod", "relax.sum", "relax.mean", "relax.max",
              "relax.min", "relax.prod", "relax.std", "relax.variance", "relax.argmax",
              "relax.argmin")


def _called(mod) -> set[str]:
    found = set()

    def visit(expr):
        if isinstance(expr, tvm.relax.Call) and isinstance(expr.op, tvm.ir.Op):
            found.add(str(expr.op.name))
    tvm.relax.analysis.post_order_visit(mod["main"], visit)
    return found


def fail_on_cumsum(mod):
    """Raises when `main` calls relax.cumsum (one op among the registry's ~170 drawn)."""
    if "relax.cumsum" in _called(mod):
        raise ValueError("seeded failure: main calls relax.cumsum")
    return mod


def fail_on_reduction(mod):
    """Raises when `main` calls a scan or a reduction (REDUCTIONS)."""
    hit = sorted(_called(mod) & set(REDUCTIONS))
    if hit:
        raise ValueError(f"seeded failure: main calls {hit[0]}")
    return mod

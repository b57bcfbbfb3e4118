"""What `fuzz --generator ops` generates: hypothesis's strategy over
harness.catalog.op_programs, the ops it draws from, and a program built as Relax.

The ops drawn are every relax op whose builder reflection can call
(harness.tvmapi.op_registry). `undriven()` says why each other op is left out, and adds
the ops a seeded probe never got TVM to accept (it refused every random application, or
inferred data-dependent shapes): nothing is dropped silently. The probe is not on the
draw's way (about 10 s): such an op only costs the draw a refused attempt. hypothesis is
a test extra: imported when a strategy is made.
"""
from __future__ import annotations

import functools

from harness.catalog import op_programs
from harness.fuzz.fuzz_graphs import _Draws
from harness.tvmapi import op_registry
from harness.tvmapi.op_program_relax import CheckingGraph, RelaxProgram

PROBE_SEED = 0
PROBE_ATTEMPTS = 300   # random applications per op before it is called undriven


@functools.cache
def _probe() -> tuple[tuple, tuple]:
    """(signatures some random application was accepted for, ((op, reason), ...) for the
    rest): each op drawn alone on random inputs until TVM accepts one, at most
    PROBE_ATTEMPTS times (about a second for the whole registry; seeded, so stable)."""
    driven, refused = [], []
    for signature in op_registry.signatures():
        choose = op_programs.RandomChooser(PROBE_SEED)
        graph, reason = CheckingGraph(), ""
        for _ in range(PROBE_ATTEMPTS):
            tensors = [graph.input(*_input(choose)) for _ in range(choose.integer(1, 2))]
            if op_programs.draw_application(choose, [signature], graph, tensors, 1):
                driven.append(signature)
                break
            reason = graph.refusal
        else:
            refused.append((signature.op, f"TVM accepted none of {PROBE_ATTEMPTS} random "
                                          f"applications; the last: {reason}"))
    return tuple(driven), tuple(refused)


def _input(choose) -> tuple[tuple[int, ...], str]:
    shape = tuple(choose.integer(1, 5) for _ in range(choose.integer(0, 4)))
    return shape, choose.choice(op_programs.DTYPES)


def driven() -> list:
    """The op_registry.OpSignature of every op the generator draws."""
    return list(_probe()[0])


def undriven() -> dict[str, str]:
    """{op: why the generator does not draw it}: the registry's skips and the probe's."""
    return {**op_registry.skipped(), **dict(_probe()[1])}


def op_programs_strategy(max_applications: int = 4):
    """A hypothesis strategy of op_programs.OpProgram, every application accepted by TVM."""
    from hypothesis import strategies as st
    signatures = op_registry.signatures()
    return st.composite(lambda draw: op_programs.draw_program(
        _Draws(draw, st), signatures, CheckingGraph(), max_applications))()


def to_relax(program: op_programs.OpProgram):
    """The program built as Relax `main` in one dataflow block (no frontend)."""
    return op_programs.emit(program, RelaxProgram())

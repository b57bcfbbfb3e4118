"""Which pass of `tvm.compile` made the answer wrong: LLVM's -opt-bisect-limit for TVM.

The compile runs with only its first N optional pass applications (tvmapi.execute.Limit;
the required lowering always runs) and N is binary-searched for the first application
after which the answer leaves the reference. The finding names that pass only with its
proof: the answer at N-1 applications agrees, at N it does not. A probe whose build
fails, or whose executable dies, cannot say either way: the search then names nothing.

Each probe runs in a forked child: a partly optimized executable may crash, and that
crash is the probe's, never a finding of the check that asked.
"""
from __future__ import annotations

import dataclasses

from harness.oracles import forked, numbers
from harness.tvmapi import execute

RIGHT, WRONG, BROKEN = "right", "wrong", "broken"


@dataclasses.dataclass
class Culprit:
    pass_name: str | None   # None: not named (`why` says why)
    index: int = 0          # its position among the optional pass applications (1-based)
    why: str = ""
    probes: int = 0


def first_wrong_pass(mod, target, arrays: list, want: list, entry: str = "main") -> Culprit:
    """The optional pass application of `tvm.compile(mod)` after which its answer on
    `arrays` leaves `want` (the reference), with the proof pair; or why none is named."""
    probes = 0

    def probe(limit):
        nonlocal probes
        probes += 1
        ran = forked.call(lambda: _verdict(mod, target, arrays, want, limit, entry))
        return ran.value if ran.ok else (BROKEN, [])

    full, names = probe(None)
    if full != WRONG:
        return Culprit(None, why=f"the full compile's answer is {full} here", probes=probes)
    none, _ = probe(0)
    if none != RIGHT:
        return Culprit(None, why=(
            "the answer is wrong with every optional pass skipped too: the frontend's "
            "conversion or a required lowering pass" if none == WRONG else
            "the compile with every optional pass skipped does not build or run"),
            probes=probes)
    low, high = 0, len(names)   # the answer at `low` applications is right, at `high` wrong
    while high - low > 1:
        middle = (low + high) // 2
        verdict, _ = probe(middle)
        if verdict == BROKEN:
            return Culprit(None, why=f"the compile with {middle} optional pass applications "
                           "does not build or run: the search cannot go on", probes=probes)
        low, high = (middle, high) if verdict == RIGHT else (low, middle)
    return Culprit(names[high - 1], high, probes=probes)


def _verdict(mod, target, arrays, want, limit, entry):
    """(right | wrong, the optional pass names seen) of one limited compile and run."""
    executable, seen = execute.compile_limited(mod, target, limit)
    got = execute.run(executable, arrays, entry)
    agree = numbers.compare(want, got, numbers.DIFFERENT_CODE).agree
    return (RIGHT if agree else WRONG), seen

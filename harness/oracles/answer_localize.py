"""A wrong answer traced to the framework node where it starts: the first node whose own
output TVM computes differently from the framework.

A compiler engineer's first question about a wrong answer is "which operator?" (PyTorch's
minifier in accuracy mode and ONNX Runtime's per-node dumps answer it). The door cuts the
model after each node (door.Cut: that node's output the only output); each cut goes
through the door's frontend and the path's compile like the whole model, runs on the same
inputs, and is compared with the framework's answer for the same cut. A binary search over
the cuts finds the first wrong one (the last is the model's own output, known wrong), in
about log2(nodes) compiles, each in a forked child. Where a cut does not convert, compile
or run, or the framework cannot answer it, the search says so and names nothing.
"""
from __future__ import annotations

import dataclasses

from harness import doors
from harness.oracles import forked, numbers
from harness.tvmapi import calls, execute

RIGHT, WRONG, UNKNOWN = "right", "wrong", "unknown"


@dataclasses.dataclass
class Localized:
    cut: object | None      # door.Cut of the first wrong node, None: not localized
    mismatch: str = ""      # how that node's output differs
    why: str = ""           # why no node is named
    probes: int = 0


def first_wrong_node(model, target, inputs: list, entry: str = "main") -> Localized:
    cuts = doors.cuts(model)
    if not cuts:
        return Localized(None, why="its door cannot cut the model into nodes")
    probes = 0
    verdicts: dict[int, tuple[str, str]] = {}

    def probe(index: int) -> tuple[str, str]:
        nonlocal probes
        if index not in verdicts:
            probes += 1
            verdicts[index] = _verdict(cuts[index].model, target, inputs, entry)
        return verdicts[index]

    last = len(cuts) - 1
    if probe(last)[0] != WRONG:
        return Localized(None, why=f"the cut after its last node ({cuts[last].describe()}) is "
                         f"{probe(last)[0]} alone: the difference needs the path's earlier "
                         "stages or the graph's other outputs", probes=probes)
    low, high = -1, last   # cuts[high] is wrong; every cut up to `low` is right
    while high - low > 1:
        middle = (low + high) // 2
        verdict, _ = probe(middle)
        if verdict == UNKNOWN:   # step past a cut that cannot be decided
            decided = next((index for index in range(middle + 1, high)
                            if probe(index)[0] != UNKNOWN), None)
            if decided is None:
                break
            middle, verdict = decided, probe(decided)[0]
        low, high = (middle, high) if verdict == RIGHT else (low, middle)
    undecided = [index for index in range(low + 1, high) if verdicts.get(index, ("",))[0]
                 == UNKNOWN]
    if undecided:
        return Localized(None, why=f"cuts {undecided[0]}..{high - 1} cannot be decided "
                         "(they do not convert, compile or run, or the framework cannot "
                         "answer them)", probes=probes)
    return Localized(cuts[high], probe(high)[1], probes=probes)


def _verdict(cut_model, target, inputs: list, entry: str) -> tuple[str, str]:
    """(right | wrong | unknown, the mismatch) of one cut."""
    try:
        _, want = doors.answer(cut_model, inputs)
    except doors.ReferenceUnavailable:
        return UNKNOWN, ""
    ran = forked.call(lambda: execute.run(
        calls.compile_module(doors.to_relax(cut_model), target), inputs, entry))
    if not ran.ok:
        return UNKNOWN, ""
    difference = numbers.compare(want, ran.value, numbers.DIFFERENT_CODE)
    return (RIGHT, "") if difference.agree else (WRONG, difference.mismatch)

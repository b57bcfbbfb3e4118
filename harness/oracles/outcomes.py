"""Two outcomes of a path compared as multisets of signatures (tasks, workloads, code).

A task's signature hashes its name, weight and every dispatched function
(tvmapi.calls.task_signature), so a reordering of tasks is not a violation and a
changed workload is.
"""
from __future__ import annotations

from collections import Counter

from harness.verdict import Outcome, Phase, Violation


def difference(expected: list, got: list, label: str, stage: str,
               copier: str) -> Violation | None:
    """None when both are the same multiset; else a lossy-roundtrip naming the difference
    (the outcome of `stage` on a copy made by `copier`)."""
    want, have = Counter(map(tuple, expected)), Counter(map(tuple, got))
    if want == have:
        return None
    lost, extra = sorted(want - have), sorted(have - want)
    detail = (f"{len(lost)} of {sum(want.values())} signatures differ; first expected "
              f"{lost[0] if lost else None}, got {extra[0] if extra else None}")
    return Violation(Outcome.LOSSY_ROUNDTRIP, stage, "tasks", f"on the {label}: {detail}",
                     phase=Phase.COPY, copier=copier)

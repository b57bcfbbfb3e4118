"""Where one run's findings go: the result, and the events a parent process reads.

In the oracles' layer, the lowest that finds anything: the copy checks record through it,
and so does the runner above them (an oracle importing the runner inverted the layers).

The runner, the mutation blame and the copy checks all record through one Recorder,
so a violation is added to the result and emitted at once, and work after a stage
(a copy, the determinism run) is bracketed by phase events: a crash or a hang in it
is then reported in that phase (process.isolate reads them).
"""
from __future__ import annotations

import contextlib
from typing import Callable

from harness.result import Result
from harness.verdict import Violation

Emit = Callable[[dict], None]


def no_emit(event: dict) -> None:
    """For runs nobody watches (the fuzzer's in-process checks, replays)."""


class Recorder:
    def __init__(self, result: Result, emit: Emit = no_emit):
        self.result, self.emit = result, emit

    def violate(self, violation: Violation) -> None:
        self.result.add(violation)
        self.emit({"event": "violation", **violation.to_json()})

    @contextlib.contextmanager
    def phase(self, phase: str, stage: str, copier: str | None = None):
        """Events around work after a stage: a crash or hang in it is reported in this
        phase, for this stage (and copier)."""
        self.emit({"event": "phase-start", "phase": phase, "stage": stage, "copier": copier})
        try:
            yield
        finally:
            self.emit({"event": "phase-end", "phase": phase})

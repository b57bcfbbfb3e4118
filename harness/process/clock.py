"""The time a child has had, for time caps a paused or loaded machine cannot trip falsely.

A cap on wall time kills a healthy child when the machine is loaded (two cores shared by a
TVM build and a test run) or when the parent was paused (Ctrl-Z, a suspended laptop,
a CI runner descheduled): the next poll sees the whole pause at once. A cap on CPU
time never kills a hang. This counts wall time, so a hang still runs out, but in steps of
at most `longest` seconds and scaled by the share of a core a process gets now.
"""
from __future__ import annotations

import os
import time


def fair_share() -> float:
    """The part of a core a process gets on this machine now (1.0 unless more processes
    are runnable than there are cores: the 1-minute load average over the core count)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return min(1.0, (os.cpu_count() or 1) / load) if load > 0 else 1.0


class Clock:
    """The time a child has had: wall time counted in steps of at most `longest` seconds
    (a machine or parent paused past that counts that much, not the pause) and scaled
    by the fair share of a core (a loaded machine's second counts less). A hang still
    runs out: its wall time counts. Time caps use it, so that neither a paused nor a
    loaded machine trips one falsely."""

    def __init__(self, longest: float = 1.0):
        self.longest, self.used, self.last = longest, 0.0, time.monotonic()

    def tick(self) -> float:
        now = time.monotonic()
        self.used += min(now - self.last, self.longest) * fair_share()
        self.last = now
        return self.used

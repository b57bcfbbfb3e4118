"""The per-pass guard: a PassInstrument that watches every pass a stage runs.

TVM's own `testing.immutable_module` check (on in `compat.pass_context`) hashes
each pass's input before and after it and raises naming the pass. This
instrument adds what that check cannot do:
  * it names the pass and its position for everything else (exceptions, crashes:
    a `pass-start` event reaches the parent before the pass runs);
  * after each pass it compares the identity maps of the watched modules (the path's
    source and the stage's input), which a pass may mutate without touching its own
    input;
  * in replay mode (`json_watch`), after each pass it compares the JSON text of the
    pass's input and of the watched modules, which sees the fields structural
    hashing skips (spans) — only run when the final JSON check found a change;
  * it records each pass's name, position and time (`--json`'s `passes`).
"""
from __future__ import annotations

import os
import time
from typing import Callable

from harness.tvmapi import compat
from harness.verdict import PassRecord


class Watched:
    """A module whose fingerprint must not move while a stage runs.

    Two fingerprints: the module's identity map (cheap, checked after every pass)
    and its structural hash, or in replay mode its JSON text (checked after
    top-level passes, or after every pass when replaying).
    """

    def __init__(self, label: str, module, by_json: bool = False):
        self.label, self.module = label, module
        self.deep: Callable = compat.save_json if by_json else compat.structural_hash
        self.identity = compat.module_identity(module)
        self.expected = self.deep(module)

    def moved(self, deep: bool = True) -> bool:
        identity = compat.module_identity(self.module)
        now = self.deep(self.module) if deep else self.expected
        if now == self.expected and not compat.identity_changes(self.identity, identity):
            self.identity = identity
            return False
        # Blame the next change on the pass that makes it.
        self.identity, self.expected = identity, self.deep(self.module)
        return True


class PassGuard:
    def __init__(self, emit: Callable[[dict], None], crash_input_path: str | None = None,
                 json_watch: bool = False):
        self.emit = emit
        self.crash_input_path = crash_input_path
        self.json_watch = json_watch
        self.stage = ""
        self.records: list[PassRecord] = []
        self.stack: list[tuple] = []
        self.findings: list[tuple[PassRecord, str]] = []   # (the pass, what it mutated)
        self.watched: list[Watched] = []
        self.counter = 0

    # ---- the stage around the passes --------------------------------------

    def begin_stage(self, name: str, watched: list[Watched]) -> None:
        self.stage, self.watched = name, watched
        self.records, self.stack, self.findings, self.counter = [], [], [], 0

    def running(self) -> tuple[str, int] | None:
        """(name, index) of the innermost pass still running (after an exception)."""
        return (self.stack[-1][0], self.stack[-1][1]) if self.stack else None

    def end_stage(self) -> list[PassRecord]:
        """Every pass the stage ran, in run order; those an exception cut short included."""
        now = time.perf_counter()
        for name, index, started, *_ in self.stack:
            self.records.append(PassRecord(self.stage, name, index, round(now - started, 5)))
        self.stack = []
        return sorted(self.records, key=lambda record: record.index)

    # ---- the PassInstrument interface --------------------------------------

    def run_before_pass(self, mod, info) -> None:
        self.counter += 1
        name = str(info.name)
        self.emit({"event": "pass-start", "stage": self.stage, "name": name,
                   "index": self.counter})
        if self.crash_input_path:
            self._keep_input(mod)
        before = compat.save_json(mod) if self.json_watch else None
        self.stack.append((name, self.counter, time.perf_counter(), mod,
                           compat.module_identity(mod), before))

    def run_after_pass(self, mod, info) -> None:
        name, index, started, input_mod, identity, before = self.stack.pop()
        record = PassRecord(self.stage, name, index, round(time.perf_counter() - started, 5))
        if compat.identity_changes(identity, compat.module_identity(input_mod)) or (
                before is not None and compat.save_json(input_mod) != before):
            record.mutated_input = True
            self.findings.append((record, "its input"))
        # Cheap identity maps after every pass; the deep fingerprint (a structural hash
        # of a possibly 50 MB source) only when replaying: the stage guard hashes at
        # every stage end anyway, and TVM's own check hashes every pass's input.
        deep = self.json_watch
        for watched in self.watched:
            if watched.moved(deep):
                record.mutated_input = record.mutated_input or watched.label == "stage input"
                self.findings.append((record, watched.label))
        self.records.append(record)
        self.emit({"event": "pass-end", **record.__dict__})

    def _keep_input(self, mod) -> None:
        """The module this pass receives, on disk before it runs: a crash's evidence."""
        partial = self.crash_input_path + ".partial"
        with open(partial, "w") as handle:
            handle.write(compat.save_json(mod))
        os.replace(partial, self.crash_input_path)

    def instrument(self):
        """This guard as a TVM PassInstrument object."""
        guard = self

        @compat.pass_instrument
        class HarnessPassGuard:
            def run_before_pass(self, mod, info):
                guard.run_before_pass(mod, info)

            def run_after_pass(self, mod, info):
                guard.run_after_pass(mod, info)
        return HarnessPassGuard()

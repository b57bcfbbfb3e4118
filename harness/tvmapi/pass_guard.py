"""The per-pass guard: a PassInstrument that watches every pass a stage runs.

It records, never raises: a guarded run must make exactly the calls a plain run
makes. (TVM's own `testing.immutable_module` check raises instead, and inside
FoldConstant's nested build of each constant subgraph FoldConstant's try/catch
swallows that error and folds nothing, so a run under it extracts other tasks
than the run users make. The harness does not turn it on.)

For every pass, nested ones included (a Sequential, the zero pipeline,
FoldConstant's nested builds):
  * the input's identity map (which function objects it maps to: it moves when a pass
    rebinds a function in place even to an equal one with another span, which hashing
    cannot see);
  * the structural hash of every piece of its input (function, attrs, global infos) the
    first time a pass of the stage is handed it, and again at the stage's end
    (seen_pieces: it sees every in-place edit TVM's check, which hashes the whole input
    before and after every pass, sees, at a fraction of its cost); an edit found there
    is `edited_in_place` and the runner replays the stage under the `eager` check, the
    hash of each pass's whole input before and after it, to name the pass. The suite
    guard and the JSON replay are eager throughout. A pass application that repeats
    one already checked in the stage (the same pass, in the same enclosing passes, on an
    input of the same hash: FoldConstant's nested builds of equal subgraphs) has its
    nested passes watched by identity only while they run the names the first one ran
    (_Repeat);
  * after it, the identity maps of the watched modules (the path's source and the
    stage's input), which a pass may mutate without touching its own input;
  * in replay mode (`json_watch`), the JSON text of the pass's input and of the
    watched modules, which sees fields structural hashing skips (spans): only run
    when the final JSON check found a change;
  * a `pass-start` event before it runs (a crash or a hang names the pass), and its
    name, position and time (`--json`'s `passes`); a pass whose exception an outer
    pass caught (FoldConstant does) is recorded as `raised`.

A caught exception is invisible to an instrument: the pass that raised stays open until
its outer pass ends (then it is closed as `raised`), so a crash in that outer pass in
between is reported at the pass that raised last. For the same reason the guard's own bug
is never raised into TVM (FoldConstant's nested build would swallow it, fold nothing, and
the run would silently differ: measured): it is kept as `bug`, the guard stops, and the
runner raises it once the stage ends (harness-error). TVM failing in the guard's own calls
is kept the same way (`tvm_error`) and reported after the stage (an `error` in the checks),
so the stage itself runs as it would unguarded.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Callable

from harness.classify import Call, HarnessBug
from harness.result import PassRecord
from harness.tvmapi import calls, copiers, structure
from harness.tvmapi.guard_records import Finding, StageEnd, Watched
from harness.tvmapi.seen_pieces import Piece, SeenPieces, piece_hash


def _hash(mod) -> int | None:
    """The structural hash of a pass's input, or None for a module TVM cannot hash (an
    attribute of a type without hash support): the guard must not fail a run a plain
    PassContext would finish; the checks after the stage report such a module. Our own
    exception is no "no hash": it leaves as a HarnessBug (the stage is the caller's).
    The same rule as for one piece (seen_pieces.piece_hash), over the whole module."""
    return piece_hash(mod)[0]


class _Repeat:
    """A pass application that repeats one already checked in this stage: the same pass, at
    the same place (its enclosing applications alike), on an input with the same structural
    hash. Its passes are followed against the names the first one ran; while they match,
    each is watched by its identity map only (no deep hash). The first name that differs
    ends the repeat: that pass and every later one are hashed as usual."""

    def __init__(self, names: list[str]):
        self.names, self.position, self.broken = names, 0, False

    def follows(self, name: str) -> bool:
        if not self.broken and self.position < len(self.names) \
                and self.names[self.position] == name:
            self.position += 1
            return True
        self.broken = True
        return False


@dataclasses.dataclass
class _Open:
    """A pass that has started and not yet ended."""
    name: str
    index: int
    started: float
    module: object          # None: not watched
    identity: tuple
    hash: int | None
    json_text: str | None
    context: tuple | None = None    # (name, input key, the enclosing one's context): a memo key
    trace: list | None = None       # the names of the passes it ran, while it runs (a memo value)
    repeat: _Repeat | None = None   # the repeat it is, or runs inside
    # (watched label, how) of changes seen as a pass nested in it began: its own body's
    moved: list = dataclasses.field(default_factory=list)


class PassGuard:
    """`shared_only` (the suite guard): watch a pass's input only when someone besides
    the pass holds it. Holding it (the fingerprints keep references) would make a
    copy-on-write pass copy an input it could have changed in place, which a test that
    counts references sees (TVM's test_cow_pass does); a change to an input nobody else
    holds is invisible anyway. `check` watches every input, as TVM's own check does, so
    it also sees a pass that breaks copy-on-write on an input that happens to be unique."""

    def __init__(self, emit: Callable[[dict], None], crash_input_path: str | None = None,
                 json_watch: bool = False, shared_only: bool = False, eager: bool = False):
        self.emit = emit
        self.shared_only = shared_only
        self.crash_input_path = crash_input_path
        self.json_watch = json_watch
        # Eager: each pass's whole input hashed before and after it (names the pass at
        # once). Otherwise each piece once and at the stage's end (seen_pieces).
        self.eager = eager or json_watch or shared_only
        self.seen = SeenPieces()
        self.memo: dict[tuple, list[str]] = {}   # context -> the names its first one ran
        self.edited_in_place: list[Piece] = []   # found at the stage's end, pass unnamed
        self.stage = ""
        self.records: list[PassRecord] = []
        self.stack: list[_Open] = []
        self.findings: list[Finding] = []
        self.watched: list[Watched] = []
        self.counter = 0
        self.followed = 0   # applications inside a repeat, watched by identity only
        # (module, its hash) a no-op pass handed on, kept only until the next pass starts
        self.last_hashed: tuple | None = None
        self.bug: HarnessBug | None = None   # ours, in a callback: kept, never raised into TVM
        self.tvm_error: tuple | None = None  # (TVM's exception in our calls, the pass running)

    # ---- the stage around the passes --------------------------------------

    def begin_stage(self, name: str, watched: list[Watched]) -> None:
        self.stage, self.watched = name, watched
        self.records, self.stack, self.findings, self.counter = [], [], [], 0
        self.followed = 0
        self.last_hashed, self.bug, self.tvm_error = None, None, None
        self.seen, self.memo, self.edited_in_place = SeenPieces(), {}, []

    def running(self) -> tuple[str, int] | None:
        """(name, index) of the innermost pass still running (after an exception)."""
        return (self.stack[-1].name, self.stack[-1].index) if self.stack else None

    def end_stage(self) -> StageEnd:
        """What the stage's guard saw: every pass it ran, in run order (those an exception
        cut short included), and what it found. The pieces the passes were handed are
        verified here (once, not per pass)."""
        self._close(self.stack, time.perf_counter())
        self.stack, self.last_hashed = [], None
        if self.bug is None and self.tvm_error is None:
            verified = Call.of(self.stage, self.seen.edited)   # ours: a HarnessBug
            if verified.ok:
                self.edited_in_place = verified.value
            else:
                self.tvm_error = (verified.error, None)
        self.seen, self.memo = SeenPieces(), {}   # the references go with the stage
        return StageEnd(sorted(self.records, key=lambda record: record.index), self.findings,
                        self.edited_in_place, self.tvm_error, self.bug)

    def _close(self, raised: list[_Open], now: float) -> None:
        for entry in raised:
            record = PassRecord(self.stage, entry.name, entry.index,
                                round(now - entry.started, 5), raised=True)
            self._blame_own_body(entry, record)
            self.records.append(record)
            self.emit({"event": "pass-end", **record.__dict__})

    def _blame_own_body(self, entry: _Open, record: PassRecord) -> None:
        for label, how in entry.moved:
            record.mutated_input = record.mutated_input or label == "stage input"
            self.findings.append(Finding(record, label, how))

    # ---- the PassInstrument interface --------------------------------------

    def run_before_pass(self, mod, info, watch: bool = True) -> None:
        """`watch` False: record the pass, but do not watch its input (the suite guard's
        for a module outside the invariants: not well-formed)."""
        self.counter += 1
        name = str(info.name)
        self.emit({"event": "pass-start", "stage": self.stage, "name": name,
                   "index": self.counter})
        if self.crash_input_path:
            self._keep_input(mod)
        if self.stack:   # moved before a nested pass began: the enclosing pass's own body
            # did it (SplitHostDevice's mod->Update before its ConvertSSA), not the nested one
            self.stack[-1].moved += [(watched.label, "a function was rebound in place")
                                     for watched in self.watched if watched.moved()]
        last, self.last_hashed = self.last_hashed, None
        if not watch or (self.shared_only and not structure.held_elsewhere(mod)):
            self.stack.append(_Open(name, self.counter, time.perf_counter(), None, (), None,
                                    None))
            return
        identity = structure.module_identity(mod)
        if not self.eager:
            self.stack.append(self._open_deferred(name, mod, identity))
            return
        # The previous pass changed nothing and handed this very module on: its hash,
        # taken after that pass, is this input's (one structural hash per no-op pass).
        known = last[1] if last is not None and last[0].same_as(mod) else None
        self.stack.append(_Open(name, self.counter, time.perf_counter(), mod, identity,
                                known if known is not None else _hash(mod),
                                copiers.save_json(mod) if self.json_watch else None))

    def _open_deferred(self, name: str, mod, identity: tuple) -> _Open:
        """Its input's pieces hashed as first seen (seen_pieces), or, inside a repeat whose
        names still match (_Repeat), its identity map only: FoldConstant builds each
        constant subgraph through a whole nested pipeline, the same one many times over
        (light_resnet50: 373 builds of 120 distinct inputs, 22,007 of its 22,030 pass
        applications), and each repeat would hash some sixty new functions twice."""
        def opened(**fields) -> _Open:   # started once its input is hashed
            return _Open(name, self.counter, time.perf_counter(), mod, identity, None, None,
                         **fields)
        parent = self.stack[-1] if self.stack else None
        for entry in self.stack:
            if entry.trace is not None:
                entry.trace.append(name)
        inside = parent.repeat if parent is not None else None
        if inside is not None and inside.follows(name):
            self.followed += 1
            return opened(repeat=inside)
        key = self.seen.add(mod, identity, self.counter)
        context = None
        if key is not None and (parent is None or parent.context is not None):
            context = (name, key, parent.context if parent is not None else None)
        first = self.memo.get(context) if context is not None else None
        if first is not None:
            return opened(context=context, repeat=_Repeat(first))
        return opened(context=context, trace=[] if context is not None else None)

    def run_after_pass(self, mod, info) -> None:
        now, name = time.perf_counter(), str(info.name)
        if not self.stack:   # opened before this guard's stage began: nothing to compare
            return
        # Passes opened after this one and never closed raised, and an outer pass caught
        # it (FoldConstant's nested build does): they end here, marked.
        position = len(self.stack) - 1   # the innermost, unless it raised
        if self.stack[position].name != name:
            position = next((i for i in range(position - 1, -1, -1)
                             if self.stack[i].name == name), position)
        entry = self.stack[position]
        self._close(self.stack[position + 1:], now)
        del self.stack[position:]
        record = PassRecord(self.stage, entry.name, entry.index, round(now - entry.started, 5))
        if entry.trace is not None:   # ran to its end: a later repeat can follow it
            self.memo.setdefault(entry.context, entry.trace)
        self._blame_own_body(entry, record)
        how, after_hash = self._how_input_moved(entry)
        if how:
            record.mutated_input = True
            self.findings.append(Finding(record, "its input", how))
        elif after_hash is not None and mod is not None and entry.module.same_as(mod):
            self.last_hashed = (mod, after_hash)   # a no-op pass: its output is its input
        # The watched modules' identity maps after every pass (their JSON text too when
        # replaying: Watched).
        for watched in self.watched:
            if watched.moved():
                record.mutated_input = record.mutated_input or watched.label == "stage input"
                self.findings.append(Finding(record, watched.label,
                                             "a function was rebound in place"))
        self.records.append(record)
        self.emit({"event": "pass-end", **record.__dict__})

    @staticmethod
    def _how_input_moved(entry: _Open) -> tuple[str, int | None]:
        """How the pass's input changed under it, or "" (the cheapest telling test first),
        and its structural hash after the pass when it was taken."""
        module = entry.module
        if module is None:   # not watched (shared_only): nobody else could see a change
            return "", None
        rebound = structure.identity_changes(entry.identity, structure.module_identity(module))
        if rebound:
            if any(not name.startswith("(") for name in rebound):
                return f"a function was rebound in place ({', '.join(rebound)})", None
            return f"{' and '.join(rebound)} replaced in place", None   # module-level
        after = _hash(module) if entry.hash is not None else None
        if after != entry.hash:
            return "its structural hash changed (an in-place edit)", None
        if entry.json_text is not None and copiers.save_json(module) != entry.json_text:
            return "its JSON text changed (a field outside structural equality)", None
        return "", after

    def _keep_input(self, mod) -> None:
        """The module this pass receives, on disk before it runs: a crash's evidence."""
        # Evidence, not a check: where TVM cannot serialize the input, say so in its place.
        saved = Call.of("", copiers.save_json, mod)
        text = saved.value if saved.ok else json.dumps(
            {"harness": f"this pass's input does not serialize: {saved.detail}"})
        partial = self.crash_input_path + ".partial"
        with open(partial, "w") as handle:
            handle.write(text)
        os.replace(partial, self.crash_input_path)

    def _from_tvm(self, step, mod, info) -> None:
        """One callback from inside TVM. Nothing is raised into TVM (a pass catching it,
        as FoldConstant's nested build does, would run differently than unguarded): our
        exception is kept (`bug`), TVM's in the guard's own calls too (`tvm_error`, with
        the pass running), and the guard stops for the rest of the stage."""
        if self.bug is not None or self.tvm_error is not None:
            return
        try:
            called = Call.of(self.stage, step, mod, info)
        except HarnessBug as bug:
            self.bug = bug
            return
        if not called.ok:
            self.tvm_error = (called.error, self.running())

    def instrument(self):
        """This guard as a TVM PassInstrument object."""
        return calls.pass_instrument(
            "HarnessPassGuard",
            lambda mod, info: self._from_tvm(self.run_before_pass, mod, info),
            lambda mod, info: self._from_tvm(self.run_after_pass, mod, info))

"""Reduce a failing input while its failure keeps its signature; resumable.

One loop (`Reducer.run`) over the phases of harness.reduce.phases, a table in the order
they run: the ONNX graph's (an ONNX case: prefix, start, node drops, weights as
inputs), the import to Relax, then the Relax module's (after the ONNX phases, or first
for a PyTorch model or a Relax module file, which have no ONNX graph; skipped when the
failure is in the frontend itself: there is no module). A phase runs on the model of
its kind (kinds: one adapter per kind of model, so nothing here asks a model's type).

Every candidate runs through the one runner in an isolated child (a segfault while
reducing is a data point, not the end); each distinct candidate (by its digest) is
checked once, and each distinct edit of a Relax module asked of a child once: one cache,
`seen`, for every phase. A harness-error (ours) stops the reduction: HarnessStopped.

The best input so far is on disk after every accepted step (`best.onnx`, then
`best.py` or `best.json`; `reduce-state.json` records the case, the options, the
signature, the level and the phases done), so an interrupted reduction loses
nothing and `--resume` continues from it, refusing a folder that holds another
reduction.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time

from harness.options import Options
from harness.process.isolate import run_isolated
from harness.process.work import Work
from harness.reduce import kinds, phases
from harness.result import Result
from harness.signature import Signature
from harness.verdict import BadInput, Outcome, Phase

STATE = "reduce-state.json"
BEST = kinds.ONNX.best
RELAX_BEST = kinds.STEM       # best.py (TVMScript) or best.json


@dataclasses.dataclass
class State:
    signature: dict
    original_nodes: int
    nodes: int
    case: str = ""          # the case (or ONNX file) being reduced
    options: dict = dataclasses.field(default_factory=dict)   # its check's Options
    candidates: int = 0
    accepted: int = 0
    seconds: float = 0.0
    phases_done: list = dataclasses.field(default_factory=list)
    door: str = "onnx"      # onnx, or relax: a PyTorch model or a Relax module (no ONNX)
    best: str = BEST        # the file in the folder holding the best input ("": none yet)
    original_bindings: int = 0   # main's bindings as imported (where the Relax phases start)
    bindings: int = 0
    constant_elements: int = 0   # elements of the constants left in main
    constants: int = 0
    edits: int = 0          # Relax edits asked of children (candidates are what they made)
    relax_skipped: str = ""  # why the Relax phases did not run


class HarnessStopped(Exception):
    """A candidate's check, or an edit's child, ended in a harness-error: a bug of ours.
    The reduction stops (exit 4, its best so far kept) rather than read our bug as "not
    interesting" and quietly reduce worse."""


def _stop_if_ours(result: Result, what: str) -> None:
    if result.verdict == Outcome.HARNESS_ERROR:
        detail = next((v.detail for v in result.violations if v.kind == Outcome.HARNESS_ERROR), "")
        raise HarnessStopped(f"{what} ended in a harness error: {detail}")


class Seen:
    """The one cache of a reduction: each candidate's verdict by its digest, and the
    edits asked of children (what an edit made was judged when it was asked)."""

    def __init__(self):
        self.verdicts: dict[str, bool] = {}   # candidate digest -> interesting
        self.asked: set[tuple] = set()        # (module digest, edit, args)

    def is_new_question(self, key: tuple) -> bool:
        """True the first time `key` is asked (and remembered), False after."""
        if key in self.asked:
            return False
        self.asked.add(key)
        return True


class Reducer:
    """One reduction: the state on disk, the phases run in order, each candidate checked in
    a child. `run_child` is how a child is run (process.isolate.run_isolated; a test hands
    a fake one in, with the same signature)."""

    def __init__(self, case: str, options: Options, out_dir: str, budget: float,
                 timeout: float, log=None, run_child=None):
        self.case, self.options, self.out_dir = case, options, out_dir
        self.run_child = run_child or run_isolated
        self.budget, self.timeout = budget, timeout
        self.log = log or (lambda text: print(f"reduce: {text}", file=sys.stderr, flush=True))
        self.started = time.monotonic()
        self.state: State | None = None
        self.signature: Signature | None = None
        self.seen = Seen()
        self.best_digest: str | None = None

    # ---- children and interestingness ------------------------------------------------

    def ask(self, source: str, task: dict, what: str) -> Result:
        """A child's answer to a reducer's task on `source` (HarnessStopped: ours failed)."""
        result = self.run_child(source, self.options, timeout=self.timeout,
                                work=Work.task(task))
        _stop_if_ours(result, what)
        return result

    def check(self, model) -> Result:
        path = kinds.of(model).write(model, os.path.join(self.out_dir, "candidate"))
        return self.run_child(path, self.options, timeout=self.timeout)

    def interesting(self, model) -> bool:
        kind = kinds.of(model)
        digest = kind.digest(model)
        if digest not in self.seen.verdicts:
            self.state.candidates += 1
            try:
                interesting = kind.valid(model)
                if interesting:
                    result = self.check(model)
                    _stop_if_ours(result, f"the check of candidate {self.state.candidates}")
                    interesting = self.signature.found_in(result)
            except BadInput:   # the child refused the file: nothing to check
                interesting = False
            self.seen.verdicts[digest] = interesting
        return self.seen.verdicts[digest]

    def out_of_time(self) -> bool:
        return self.elapsed() > self.budget

    def elapsed(self) -> float:
        return self.state.seconds + time.monotonic() - self.started

    # ---- state on disk ---------------------------------------------------------

    def save(self, best) -> None:
        """`best` (None: only the state) and the state, each written atomically."""
        if best is not None:
            kind = kinds.of(best)
            kind.record(best, self.state)
            written = kind.write(best, os.path.join(self.out_dir, kinds.STEM))
            self.state.best = os.path.basename(written)
            self.best_digest = kind.digest(best)
        else:
            self.best_digest = None
        saved = dataclasses.replace(self.state, seconds=round(self.elapsed(), 1))
        with open(os.path.join(self.out_dir, STATE + ".partial"), "w") as handle:
            json.dump(dataclasses.asdict(saved), handle, indent=1)
        os.replace(os.path.join(self.out_dir, STATE + ".partial"),
                   os.path.join(self.out_dir, STATE))

    def resume(self) -> bool:
        """Take up the reduction in the folder (False: there is none)."""
        path = os.path.join(self.out_dir, STATE)
        if not os.path.exists(path):
            return False
        with open(path) as handle:
            state = State(**json.load(handle))
        if (state.case, state.options) != (self.case, self.options.to_json()):
            raise BadInput(f"{self.out_dir} holds the reduction of {state.case or '?'} "
                           f"({_differences(state.options, self.options.to_json())}), "
                           f"not of {self.case} with these options: --resume continues a "
                           "reduction in its own folder; give another --out")
        self.state = state
        self.signature = Signature.from_json(self.state.signature)
        return True

    def best(self):
        """The best input on disk: an onnx.ModelProto, a RelaxModule, or None (a reduction
        without ONNX that has not written its module yet)."""
        if not self.state.best:
            return None
        kind = kinds.of_file(self.state.best)
        model = kind.read(os.path.join(self.out_dir, self.state.best), self.state)
        self.best_digest = kind.digest(model)
        return model

    def best_path(self) -> str:
        """The best input's file, or the case itself when nothing was written."""
        return os.path.join(self.out_dir, self.state.best) if self.state.best else self.case

    # ---- the reduction -------------------------------------------------------------

    def start(self, model, target: Signature, door: str = "onnx") -> None:
        self.signature = target
        nodes = kinds.ONNX.size(model) if door == "onnx" else 0
        self.state = State(target.to_json(), nodes, nodes, self.case, self.options.to_json(),
                           door=door, best=BEST if door == "onnx" else "")
        self.log(f"signature: {target.text()}")
        if self.frontend_failure():
            self.state.relax_skipped = "the failure is in the frontend: no Relax module"
            self.log(f"the Relax phases are skipped: {self.state.relax_skipped}")

    def describe(self, model) -> str:
        return kinds.of(model).describe(model, self.state)

    def accept(self, label: str, candidate):
        self.state.accepted += 1
        described = self.describe(candidate)   # before save: it reads the previous best's
        self.save(candidate)
        self.log(f"{label}: {described} "
                 f"({self.state.candidates} candidates, {self.elapsed():.0f} s)")
        return candidate

    def frontend_failure(self) -> bool:
        """The failure is in the door's frontend: there is no Relax module to reduce."""
        return self.signature.stage == "import" and self.signature.phase == Phase.STAGE

    def applies(self, phase: phases.ReductionPhase, model) -> bool:
        """A phase reduces a model of its kind; the import to Relax (no kind) needs a
        failure past the frontend."""
        if phase.kind is None:
            return not self.frontend_failure()
        return phase.kind.owns(model)

    def reduce(self, phase: phases.ReductionPhase, model):
        """`model` after one phase (its best candidate accepted and saved)."""
        return phase.walk(self, phase, model)

    def run(self, model):
        """Every phase not done yet, in the table's order, while the budget lasts."""
        for phase in phases.PHASES:
            if phase.name in self.state.phases_done:
                continue
            if self.out_of_time():
                self.log(f"budget of {self.budget:g} s spent; the best so far is kept")
                break
            if not self.applies(phase, model):
                continue   # not its kind of model (state.relax_skipped says why, if Relax)
            model = self.reduce(phase, model)
            if self.out_of_time():   # cut short: --resume runs the rest of this phase
                self.log(f"budget of {self.budget:g} s spent in {phase.name}; "
                         "the best so far is kept")
                break
            self.state.phases_done.append(phase.name)
            self.save(model)
        return model


def _differences(saved: dict, wanted: dict) -> str:
    changed = [f"{key}={saved.get(key)!r}" for key in sorted(set(saved) | set(wanted))
               if saved.get(key) != wanted.get(key)]
    return "options " + ", ".join(changed[:4]) if changed else "the same options"

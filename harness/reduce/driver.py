"""Reduce a failing input while its failure keeps its signature; resumable.

Every candidate runs through the one runner in an isolated child (a segfault
while reducing is a data point, not the end), and each distinct candidate (by the
hash of its bytes) runs once. Two levels, each phase kept only if the signature
survives:

- ONNX (onnx_steps; an ONNX case): binary search for the shortest prefix of the
  graph that still fails, then for the latest start; single-node drops, staying at
  the same position after an accepted drop (cvise's advance-on-success) and
  repeating rounds until one accepts nothing; weights turned into inputs.
- Relax (relax_steps; after the ONNX phases, or first for a PyTorch model or a Relax
  module file, which have no ONNX graph): the module the door imports, written as
  TVMScript (or JSON), edited binding by binding in children. Skipped when the
  failure is in the frontend itself: there is no module to reduce.

The best input so far is on disk after every accepted step (`best.onnx`, then
`best.py` or `best.json`; `reduce-state.json` records the case, the options, the
signature, the level and the phases done), so an interrupted reduction loses
nothing and `--resume` continues from it, refusing a folder that holds another
reduction.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import time

import onnx

from harness.options import Options
from harness.process.isolate import run_isolated
from harness.reduce import onnx_steps, relax_steps
from harness.reduce.relax_steps import RelaxModule
from harness.signature import Signature
from harness.verdict import BadInput, Result

STATE = "reduce-state.json"
BEST = "best.onnx"
RELAX_BEST = "best"           # best.py (TVMScript) or best.json
TO_RELAX = "import to Relax"


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
    if result.verdict == "harness-error":
        detail = next((v.detail for v in result.violations if v.kind == "harness-error"), "")
        raise HarnessStopped(f"{what} ended in a harness error: {detail}")


class Reducer:
    def __init__(self, case: str, options: Options, out_dir: str, budget: float,
                 timeout: float, log=None):
        self.case, self.options, self.out_dir = case, options, out_dir
        self.budget, self.timeout = budget, timeout
        self.log = log or (lambda text: print(f"reduce: {text}", file=sys.stderr, flush=True))
        self.started = time.monotonic()
        self.state: State | None = None
        self.signature: Signature | None = None
        self.seen: dict[str, bool] = {}    # candidate bytes' hash -> interesting
        self.edited: set[tuple] = set()    # (module hash, edit, args) asked of a child once
        self.best_digest: str | None = None

    # ---- interestingness -----------------------------------------------------

    def check(self, model) -> Result:
        if isinstance(model, RelaxModule):
            path = model.write(os.path.join(self.out_dir, "candidate" + model.suffix))
        else:
            path = os.path.join(self.out_dir, "candidate.onnx")
            onnx.save(model, path)
        return run_isolated(path, self.options, timeout=self.timeout)

    def interesting(self, model) -> bool:
        digest = _digest(model)
        if digest not in self.seen:
            self.state.candidates += 1
            try:
                if not isinstance(model, RelaxModule):
                    onnx.checker.check_model(model)
                result = self.check(model)
                _stop_if_ours(result, f"the check of candidate {self.state.candidates}")
                self.seen[digest] = self.signature.found_in(result)
            except (BadInput, onnx.checker.ValidationError):
                self.seen[digest] = False
        return self.seen[digest]

    def out_of_time(self) -> bool:
        return self.elapsed() > self.budget

    def elapsed(self) -> float:
        return self.state.seconds + time.monotonic() - self.started

    @staticmethod
    def size(model):
        return model.size() if isinstance(model, RelaxModule) else onnx_steps.size(model)

    # ---- state on disk ---------------------------------------------------------

    def save(self, best) -> None:
        if isinstance(best, RelaxModule):
            self.state.best = RELAX_BEST + best.suffix
            best.write(os.path.join(self.out_dir, self.state.best))
            self.state.bindings, self.state.constant_elements = best.size()
            self.state.constants = best.constants
        elif best is not None:
            self.state.nodes = onnx_steps.size(best)
            onnx.save(best, os.path.join(self.out_dir, BEST + ".partial"))
            os.replace(os.path.join(self.out_dir, BEST + ".partial"),
                       os.path.join(self.out_dir, BEST))
            self.state.best = BEST
        self.best_digest = _digest(best) if best is not None else None
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
        path = os.path.join(self.out_dir, self.state.best)
        if self.state.best == BEST:
            model = onnx.load(path)
        else:
            with open(path, "rb") as handle:
                model = RelaxModule(handle.read(), os.path.splitext(path)[1],
                                    self.state.bindings, self.state.constant_elements,
                                    self.state.constants)
        self.best_digest = _digest(model)
        return model

    def best_path(self) -> str:
        """The best input's file, or the case itself when nothing was written."""
        return os.path.join(self.out_dir, self.state.best) if self.state.best else self.case

    # ---- the reduction -------------------------------------------------------------

    def start(self, model, target: Signature, door: str = "onnx") -> None:
        self.signature = target
        nodes = onnx_steps.size(model) if door == "onnx" else 0
        self.state = State(target.to_json(), nodes, nodes, self.case, self.options.to_json(),
                           door=door, best=BEST if door == "onnx" else "")
        self.log(f"signature: {target.text()}")
        if self.frontend_failure():
            self.state.relax_skipped = "the failure is in the frontend: no Relax module"
            self.log(f"the Relax phases are skipped: {self.state.relax_skipped}")

    def describe(self, model) -> str:
        if isinstance(model, RelaxModule):
            constants = f", {model.constants} constants ({model.elements} elements)" \
                if model.constants or self.state.constants else ""   # the previous best's
            return f"{self.state.original_bindings} -> {model.bindings} Relax bindings" + constants
        return f"{self.state.original_nodes} -> {onnx_steps.size(model)} nodes"

    def accept(self, label: str, candidate):
        self.state.accepted += 1
        described = self.describe(candidate)   # before save: it reads the previous best's
        self.save(candidate)
        self.log(f"{label}: {described} "
                 f"({self.state.candidates} candidates, {self.elapsed():.0f} s)")
        return candidate

    def frontend_failure(self) -> bool:
        """The failure is in the door's frontend: there is no Relax module to reduce."""
        return self.signature.stage == "import" and self.signature.phase == "stage"

    def phases(self) -> list:
        found = []
        if self.state.door == "onnx":
            found += [("shortest failing prefix", self._prefix),
                      ("latest failing start", self._start),
                      ("node drops", self._drops), ("weights as inputs", self._weights)]
        if not self.frontend_failure():
            found += [(TO_RELAX, self._to_relax)] + relax_steps.phases(self)
        return found

    def run(self, model):
        for name, phase in self.phases():
            if name in self.state.phases_done:
                continue
            if self.out_of_time():
                self.log(f"budget of {self.budget:g} s spent; the best so far is kept")
                break
            if name.startswith("relax:") and not isinstance(model, RelaxModule):
                continue   # no Relax module to reduce (state.relax_skipped says why)
            model = phase(model)
            if self.out_of_time():   # cut short: --resume runs the rest of this phase
                self.log(f"budget of {self.budget:g} s spent in {name}; the best so far is kept")
                break
            self.state.phases_done.append(name)
            self.save(model)
        return model

    def search(self, model, positions, make, label=None):
        """Binary search over `positions` for the extreme one whose candidate (`make`)
        still fails (the failure is assumed monotone in the cut; each accepted step is
        re-checked)."""
        low, high, best = 0, len(positions) - 1, None
        while low <= high and not self.out_of_time():
            middle = (low + high) // 2
            candidate = make(positions[middle])
            if candidate is not None and self.size(candidate) < self.size(model) \
                    and self.interesting(candidate):
                best = (middle, candidate)
                high = middle - 1
            else:
                low = middle + 1
        if best is None:
            return model
        return self.accept(label(best[0]) if label else best[1].label, best[1])

    # ---- ONNX phases -----------------------------------------------------------

    def _bisect(self, model, make, positions, label):
        infos = onnx_steps.value_infos(model)
        return self.search(model, positions, lambda position: make(model, position, infos),
                           lambda index: f"{label} {index}")

    def _prefix(self, model):
        cuts = onnx_steps.topological_outputs(model)
        return self._bisect(model, lambda m, name, infos: onnx_steps.with_outputs(m, [name], infos),
                            cuts, "end the graph at node")

    def _start(self, model):
        cuts = onnx_steps.topological_outputs(model)[::-1]   # latest start first
        return self._bisect(model, onnx_steps.with_input_at, cuts, "start the graph after node")

    def _drops(self, model):
        """Rounds of single-node drops; after an accepted drop the same position is tried
        again (it now holds the next node), so a round is one walk over the graph."""
        progress = True
        while progress and not self.out_of_time():
            progress, index, infos = False, 0, onnx_steps.value_infos(model)
            while index < onnx_steps.size(model) and not self.out_of_time():
                candidate = onnx_steps.without_node(model, index, infos)
                if candidate is not None and self.interesting(candidate):
                    label = f"drop node {index} ({model.graph.node[index].op_type})"
                    model, progress = self.accept(label, candidate), True
                    infos = onnx_steps.value_infos(model)
                else:
                    index += 1
        return model

    def _weights(self, model):
        candidate = onnx_steps.weights_as_inputs(model)
        if candidate is not None and self.interesting(candidate):
            return self.accept("weights as graph inputs", candidate)
        return model

    # ---- Relax: the module, and edits of it in children --------------------------------

    def _to_relax(self, model):
        """The module the door imports (the reduced ONNX model's, or the case's own),
        written as TVMScript, else as JSON: the first form that still fails is where the
        Relax phases start; neither, and they are skipped (the input stays as it is)."""
        source = os.path.join(self.out_dir, BEST) if self.state.door == "onnx" else self.case
        reasons = []
        for form in relax_steps.FORMS:
            result = run_isolated(source, self.options, timeout=self.timeout, task={
                "task": "export", "out": os.path.join(self.out_dir, relax_steps.EDIT_OUT),
                "form": form})
            _stop_if_ours(result, f"writing the imported module as {form}")
            answer = result.task_output
            if not answer or not answer.get("path"):
                violation = result.violations[0].one_line() if result.violations else "?"
                reasons.append(f"{form}: the module could not be written ({violation})")
                continue
            module = RelaxModule.read(answer["path"], answer)
            os.remove(answer["path"])
            if self.interesting(module):
                self.state.original_bindings = module.bindings
                self.save(module)
                self.log(f"{TO_RELAX}: {module.bindings} bindings, "
                         f"{module.constants} constants ({module.elements} elements), "
                         f"as {form} ({self.state.candidates} candidates, "
                         f"{self.elapsed():.0f} s)")
                return module
            reasons.append(f"as {form} it does not fail as {self.signature.text()}")
        self.state.relax_skipped = "; ".join(reasons)
        self.log(f"the Relax phases are skipped: {self.state.relax_skipped}")
        return model

    def edit(self, module: RelaxModule, edit: str, *args) -> RelaxModule | None:
        """The candidate a child makes by one edit of `module` (None: the edit does not
        apply, or was asked before: what it made was judged then)."""
        key = (module.digest, edit, json.dumps(args))
        if key in self.edited:
            return None
        self.edited.add(key)
        if self.state.best and module.digest == self.best_digest:
            source = os.path.join(self.out_dir, self.state.best)
        else:
            source = module.write(os.path.join(self.out_dir, relax_steps.EDIT_IN + module.suffix))
        self.state.edits += 1
        try:
            result = run_isolated(source, self.options, timeout=self.timeout, task={
                "task": "edit", "module": source, "edit": edit, "args": list(args),
                "out": os.path.join(self.out_dir, relax_steps.EDIT_OUT), "form": module.form})
        except BadInput as exc:   # the child refused the file: nothing to check
            self.log(f"edit {edit} {list(args)}: refused: {exc}")
            return None
        _stop_if_ours(result, f"edit {edit} {list(args)}")
        answer = result.task_output
        if answer is None:   # the child died (a crash of TVM's in the edit): say so, go on
            what = result.violations[0].one_line() if result.violations else result.verdict
            self.log(f"edit {edit} {list(args)} made nothing: {what}")
            return None
        if not answer.get("path"):
            return None
        candidate = RelaxModule.read(answer["path"], answer)
        os.remove(answer["path"])
        return candidate


def _digest(model) -> str:
    if isinstance(model, RelaxModule):
        return model.digest
    return hashlib.sha256(model.SerializeToString()).hexdigest()


def _differences(saved: dict, wanted: dict) -> str:
    changed = [f"{key}={saved.get(key)!r}" for key in sorted(set(saved) | set(wanted))
               if saved.get(key) != wanted.get(key)]
    return "options " + ", ".join(changed[:4]) if changed else "the same options"

"""Reduce a failing input while its failure keeps its signature; resumable.

Every candidate runs through the one runner in an isolated child (a segfault
while reducing is a data point, not the end), and each distinct candidate (by the
hash of its bytes) runs once. Phases, each kept only if the signature survives:
binary search for the shortest prefix of the graph that still fails, then for the
latest start; single-node drops, staying at the same position after an accepted
drop (cvise's advance-on-success) and repeating rounds until one accepts nothing;
weights turned into inputs. The best model so far is on disk after every accepted
step (`best.onnx`, `reduce-state.json`, which records the case, the options and
the signature), so an interrupted reduction loses nothing and `--resume`
continues from it, refusing a folder that holds another reduction.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import time

import onnx

from harness.process.isolate import run_isolated
from harness.reduce import onnx_steps
from harness.signature import Signature
from harness.tvmapi.pipelines import Options
from harness.verdict import BadInput, Result

STATE = "reduce-state.json"
BEST = "best.onnx"


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

    # ---- interestingness -----------------------------------------------------

    def check(self, model: onnx.ModelProto) -> Result:
        path = os.path.join(self.out_dir, "candidate.onnx")
        onnx.save(model, path)
        return run_isolated(path, self.options, timeout=self.timeout)

    def interesting(self, model: onnx.ModelProto) -> bool:
        digest = hashlib.sha256(model.SerializeToString()).hexdigest()
        if digest not in self.seen:
            self.state.candidates += 1
            try:
                onnx.checker.check_model(model)
                self.seen[digest] = self.signature.found_in(self.check(model))
            except (BadInput, onnx.checker.ValidationError):
                self.seen[digest] = False
        return self.seen[digest]

    def out_of_time(self) -> bool:
        return self.elapsed() > self.budget

    def elapsed(self) -> float:
        return self.state.seconds + time.monotonic() - self.started

    # ---- state on disk ---------------------------------------------------------

    def save(self, best: onnx.ModelProto) -> None:
        self.state.nodes = onnx_steps.size(best)
        onnx.save(best, os.path.join(self.out_dir, BEST + ".partial"))
        os.replace(os.path.join(self.out_dir, BEST + ".partial"),
                   os.path.join(self.out_dir, BEST))
        saved = dataclasses.replace(self.state, seconds=round(self.elapsed(), 1))
        with open(os.path.join(self.out_dir, STATE + ".partial"), "w") as handle:
            json.dump(dataclasses.asdict(saved), handle, indent=1)
        os.replace(os.path.join(self.out_dir, STATE + ".partial"),
                   os.path.join(self.out_dir, STATE))

    def resume(self) -> onnx.ModelProto | None:
        path = os.path.join(self.out_dir, STATE)
        if not os.path.exists(path):
            return None
        with open(path) as handle:
            state = State(**json.load(handle))
        if (state.case, state.options) != (self.case, self.options.to_json()):
            raise BadInput(f"{self.out_dir} holds the reduction of {state.case or '?'} "
                           f"({_differences(state.options, self.options.to_json())}), "
                           f"not of {self.case} with these options: --resume continues a "
                           "reduction in its own folder; give another --out")
        self.state = state
        self.signature = Signature.from_json(self.state.signature)
        return onnx.load(os.path.join(self.out_dir, BEST))

    # ---- the reduction -------------------------------------------------------------

    def start(self, model: onnx.ModelProto, target: Signature) -> None:
        self.signature = target
        self.state = State(target.to_json(), onnx_steps.size(model), onnx_steps.size(model),
                           self.case, self.options.to_json())
        self.log(f"signature: {target.text()}")

    def accept(self, label: str, candidate: onnx.ModelProto) -> onnx.ModelProto:
        self.state.accepted += 1
        self.save(candidate)
        self.log(f"{label}: {self.state.original_nodes} -> {onnx_steps.size(candidate)} nodes "
                 f"({self.state.candidates} candidates, {self.elapsed():.0f} s)")
        return candidate

    def run(self, model: onnx.ModelProto) -> onnx.ModelProto:
        phases = [("shortest failing prefix", self._prefix), ("latest failing start", self._start),
                  ("node drops", self._drops), ("weights as inputs", self._weights)]
        for name, phase in phases:
            if name in self.state.phases_done:
                continue
            if self.out_of_time():
                self.log(f"budget of {self.budget:g} s spent; the best so far is kept")
                break
            model = phase(model)
            if self.out_of_time():   # cut short: --resume runs the rest of this phase
                self.log(f"budget of {self.budget:g} s spent in {name}; the best so far is kept")
                break
            self.state.phases_done.append(name)
            self.save(model)
        return model

    def _bisect(self, model, make, positions, label):
        """Binary search over `positions` for the extreme one whose candidate still fails
        (the failure is assumed monotone in the cut; each accepted step is re-checked)."""
        low, high, best = 0, len(positions) - 1, None
        infos = onnx_steps.value_infos(model)
        while low <= high and not self.out_of_time():
            middle = (low + high) // 2
            candidate = make(model, positions[middle], infos)
            if candidate is not None and onnx_steps.size(candidate) < onnx_steps.size(model) \
                    and self.interesting(candidate):
                best = (middle, candidate)
                high = middle - 1
            else:
                low = middle + 1
        if best is None:
            return model
        return self.accept(f"{label} {best[0]}", best[1])

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


def _differences(saved: dict, wanted: dict) -> str:
    changed = [f"{key}={saved.get(key)!r}" for key in sorted(set(saved) | set(wanted))
               if saved.get(key) != wanted.get(key)]
    return "options " + ", ".join(changed[:4]) if changed else "the same options"

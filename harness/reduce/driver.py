"""Reduce a failing input while its failure keeps its signature; resumable.

Every candidate runs through the one runner in an isolated child (a segfault
while reducing is a data point, not the end). Phases, each kept only if the
signature survives: binary search for the shortest prefix of the graph that
still fails, then for the latest start; greedy single-node drops until none
helps; weights turned into inputs. The best model so far is on disk after
every accepted step (`best.onnx`, `reduce-state.json`), so an interrupted
reduction loses nothing and `--resume` continues from it.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time

import onnx

from harness.process.isolate import run_isolated
from harness.reduce import onnx_steps
from harness.reduce.signature import Signature
from harness.tvmapi.pipelines import Options
from harness.verdict import BadInput, Result

STATE = "reduce-state.json"
BEST = "best.onnx"


@dataclasses.dataclass
class State:
    signature: dict
    original_nodes: int
    nodes: int
    candidates: int = 0
    accepted: int = 0
    seconds: float = 0.0
    phases_done: list = dataclasses.field(default_factory=list)


class Reducer:
    def __init__(self, options: Options, out_dir: str, budget: float, timeout: float,
                 log=None):
        self.options, self.out_dir, self.budget, self.timeout = options, out_dir, budget, timeout
        self.log = log or (lambda text: print(f"reduce: {text}", file=sys.stderr, flush=True))
        self.started = time.monotonic()
        self.state: State | None = None
        self.signature: Signature | None = None

    # ---- interestingness -----------------------------------------------------

    def check(self, model: onnx.ModelProto) -> Result:
        path = os.path.join(self.out_dir, "candidate.onnx")
        onnx.save(model, path)
        return run_isolated(path, self.options, timeout=self.timeout)

    def interesting(self, model: onnx.ModelProto) -> bool:
        self.state.candidates += 1
        try:
            onnx.checker.check_model(model)
            return self.signature.found_in(self.check(model))
        except (BadInput, onnx.checker.ValidationError):
            return False

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
            self.state = State(**json.load(handle))
        self.signature = Signature(**self.state.signature)
        return onnx.load(os.path.join(self.out_dir, BEST))

    # ---- the reduction -------------------------------------------------------------

    def start(self, model: onnx.ModelProto, first: Result) -> None:
        failing = [v for v in first.violations if v.kind != "unsupported"]
        if not failing:
            raise BadInput(f"nothing to reduce: the check's verdict is {first.verdict}")
        self.signature = Signature.of(failing[0])
        self.state = State(self.signature.to_json(), onnx_steps.size(model),
                           onnx_steps.size(model))
        self.log(f"signature: {self.signature.describe()}")

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
        progress = True
        while progress and not self.out_of_time():
            progress = False
            for label, candidate in onnx_steps.node_drops(model):
                if self.out_of_time():
                    break
                if self.interesting(candidate):
                    model, progress = self.accept(label, candidate), True
                    break
        return model

    def _weights(self, model):
        candidate = onnx_steps.weights_as_inputs(model)
        if candidate is not None and self.interesting(candidate):
            return self.accept("weights as graph inputs", candidate)
        return model

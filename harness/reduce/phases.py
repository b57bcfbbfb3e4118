"""The reduction's phases, as data: one table, in the order they run.

A phase names the kind of model it reduces (kinds.ONNX, kinds.RELAX; None for the import
to Relax, which makes the module from whatever came before), where it makes candidates
(positions, and variants at each), how (make), and which of the walks tries them:

- `search`: a binary search over the positions for the first whose candidate still
  fails (the failure assumed monotone in the cut: a prefix, a start; the accepted
  candidate was checked like any other);
- `each`: every position in turn, the variants in order at each. With `stay`, an
  accepted candidate keeps the walk at the same position, which now holds what came
  next (cvise's BinaryState.advance_on_success); with `rounds`, walks repeat until one
  accepts nothing (a fixed point, as hypothesis's shrinker runs its passes).

Every candidate goes through the reducer's one cache (by digest) and one check, so
adding a phase is one row here. A phase's name is what reduce-state.json's
`phases_done` records (a resumed reduction skips the phases done).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from harness.reduce import kinds, onnx_steps, relax_steps


@dataclasses.dataclass(frozen=True)
class ReductionPhase:
    name: str
    kind: object                # the kind of model it reduces; None: the import to Relax
    walk: Callable              # search, each, or relax_steps.to_relax
    make: Callable | None = None   # (reducer, model, context, position, variant) -> candidate
    positions: Callable = lambda model: [None]
    variants: tuple = (None,)   # tried in order at a position; the first kept wins
    context: Callable = lambda model: None   # what `make` reads of a model, once per model
    label: Callable | None = None   # (model, index, candidate) -> str; None: the candidate's
    stay: bool = False          # after an accepted candidate, the same position again
    rounds: bool = False        # walks repeat until one accepts nothing
    smaller: bool = True        # a candidate must be smaller than the model to be kept


def _kept(reducer, phase: ReductionPhase, model, candidate) -> bool:
    if candidate is None:
        return False
    if phase.smaller and not phase.kind.size(candidate) < phase.kind.size(model):
        return False
    return reducer.interesting(candidate)


def _label(phase: ReductionPhase, model, index: int, candidate) -> str:
    return phase.label(model, index, candidate) if phase.label else candidate.label


def search(reducer, phase: ReductionPhase, model):
    """The first position (in the phase's order) whose candidate still fails, by
    bisection: O(log n) checks."""
    positions, context = phase.positions(model), phase.context(model)
    low, high, best = 0, len(positions) - 1, None
    while low <= high and not reducer.out_of_time():
        middle = (low + high) // 2
        candidate = phase.make(reducer, model, context, positions[middle], None)
        if _kept(reducer, phase, model, candidate):
            best, high = (middle, candidate), middle - 1
        else:
            low = middle + 1
    if best is None:
        return model
    return reducer.accept(_label(phase, model, *best), best[1])


def each(reducer, phase: ReductionPhase, model):
    """Every position in turn; see the module's docstring for `stay` and `rounds`."""
    progress = True
    while progress and not reducer.out_of_time():
        progress, index, context = False, 0, phase.context(model)
        while not reducer.out_of_time():
            positions = phase.positions(model)
            if index >= len(positions):
                break
            candidate = _first_kept(reducer, phase, model, context, positions[index])
            if candidate is not None:
                label = _label(phase, model, index, candidate)
                model, progress = reducer.accept(label, candidate), True
                context = phase.context(model)
            if candidate is None or not phase.stay:
                index += 1
        if not phase.rounds:
            break
    return model


def _first_kept(reducer, phase: ReductionPhase, model, context, position):
    """The candidate of the first variant kept at `position`, or None."""
    for variant in phase.variants:
        candidate = phase.make(reducer, model, context, position, variant)
        if _kept(reducer, phase, model, candidate):
            return candidate
    return None


def _edit(name: str):
    """make: a child's edit `name` of the module at the position (and variant)."""
    def make(reducer, module, context, position, variant):
        args = [arg for arg in (position, variant) if arg is not None]
        return relax_steps.edit(reducer, module, name, *args)
    return make


def _bindings(skip_last: bool = False, reverse: bool = False):
    def positions(module):
        found = list(range(module.bindings - 1 if skip_last else module.bindings))
        return found[::-1] if reverse else found
    return positions


def _if_constants(module) -> list:
    return [None] if module.constants else []


ONNX, RELAX = kinds.ONNX, kinds.RELAX
TO_RELAX = "import to Relax"

# The names are the ones reduce-state.json has always recorded ("relax: ..." included:
# a phase's kind, not its name, says which model it reduces).
PHASES = (
    ReductionPhase("shortest failing prefix", ONNX, search,
          positions=onnx_steps.topological_outputs, context=onnx_steps.value_infos,
          make=lambda reducer, model, infos, name, _: onnx_steps.with_outputs(
              model, [name], infos),
          label=lambda model, index, _: f"end the graph at node {index}"),
    ReductionPhase("latest failing start", ONNX, search,
          positions=lambda model: onnx_steps.topological_outputs(model)[::-1],
          context=onnx_steps.value_infos,
          make=lambda reducer, model, infos, name, _: onnx_steps.with_input_at(
              model, name, infos),
          label=lambda model, index, _: f"start the graph after node {index}"),
    ReductionPhase("node drops", ONNX, each, stay=True, rounds=True,
          positions=lambda model: list(range(onnx_steps.size(model))),
          context=onnx_steps.value_infos,
          make=lambda reducer, model, infos, index, _: onnx_steps.without_node(
              model, index, infos),
          label=lambda model, index, _: f"drop node {index} "
                                        f"({model.graph.node[index].op_type})"),
    ReductionPhase("weights as inputs", ONNX, each, smaller=False,
          make=lambda reducer, model, *_: onnx_steps.weights_as_inputs(model),
          label=lambda *_: "weights as graph inputs"),
    ReductionPhase(TO_RELAX, None, relax_steps.to_relax),
    ReductionPhase("relax: constants as parameters", RELAX, each, smaller=False,
          positions=_if_constants, make=_edit("params")),
    ReductionPhase("relax: shortest failing prefix", RELAX, search,
          positions=_bindings(skip_last=True), make=_edit("cut")),
    ReductionPhase("relax: latest failing start", RELAX, search,
          positions=_bindings(skip_last=True, reverse=True), make=_edit("start")),
    ReductionPhase("relax: binding drops", RELAX, each, stay=True, rounds=True,
          positions=_bindings(), variants=("arg", "param"), make=_edit("drop")),
    ReductionPhase("relax: constants one by one", RELAX, each, stay=True,
          positions=lambda module: [[index] for index in range(module.constants)],
          make=_edit("params")),
    ReductionPhase("relax: constants as zeros", RELAX, each, smaller=False,
          positions=_if_constants, make=_edit("zeros")),
)


def named(name: str) -> ReductionPhase:
    return next(phase for phase in PHASES if phase.name == name)

"""Input doors: how a model becomes the Relax IRModule a path starts from.

The data flow's first step (door -> module -> path -> oracles -> verdict -> report).
Each door is one module behind one interface (door.Door: validate, load, to Relax,
how its reproducer loads it, what it needs installed): ONNX (onnx_door), TFLite
(tflite_door), JAX's StableHLO (stablehlo_door), PyTorch's torch.export and its ONNX twin
(torch_door), torch.fx and torch.compile's relax_dynamo (torch_routes),
`relax.frontend.nn` models as MLC-LLM writes them (nn_door), Relax modules as files
(relax_door).
The catalog's sources (darknet, builders, the onnx wheel, torchvision, ...) make
models for these doors; a user's file picks its door by itself (`for_file`) or
names it (`DOOR:FILE`). Everything else asks this module, never a door's types.
"""
from __future__ import annotations

from harness.doors import (
    nn_door,
    onnx_door,
    relax_door,
    stablehlo_door,
    tflite_door,
    torch_door,
    torch_routes,
)
from harness.doors.door import Door, ExtraUnavailable, ReferenceUnavailable
from harness.doors.torch_models import ExportRefused, TorchModel, TorchUnavailable
from harness.verdict import BadInput

__all__ = ["DOORS", "Door", "ExportRefused", "ExtraUnavailable", "ReferenceUnavailable",
           "TorchModel", "TorchUnavailable", "answer", "converter_map", "cuts", "described",
           "for_file", "named",
           "of_model", "second_answer", "to_relax"]

# The order files are offered in: each door that shares .py files claims those that
# define its names (tflite_model, jax_function, example_inputs, MODEL), before the Relax
# door takes every other .py. The twins and routes are asked for by name.
DOORS: tuple[Door, ...] = (onnx_door.DOOR, tflite_door.DOOR, stablehlo_door.DOOR,
                           torch_door.DOOR, torch_door.TWIN, torch_routes.FX,
                           torch_routes.DYNAMO, nn_door.DOOR, relax_door.DOOR)
_BY_NAME = {door.name: door for door in DOORS}


def described() -> str:
    """The files the doors read, for help texts ("ONNX, TFLite, ... or Relax model file"):
    written from DOORS, so a new door is in every help at once."""
    kinds = list(dict.fromkeys(door.frontend for door in DOORS if not door.by_name_only))
    return ", ".join(kinds[:-1]) + f" or {kinds[-1]} model file"


def named(name: str) -> Door:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise BadInput(f"unknown door {name!r}; one of {', '.join(_BY_NAME)}") from None


def for_file(path: str) -> Door:
    """The door a file belongs to, by its suffix (and for .py, what it defines)."""
    door = next((door for door in DOORS if door.claims(path)), None)
    if door is None:
        suffixes = sorted({suffix for door in DOORS for suffix in door.suffixes})
        raise BadInput(f"{path}: no input door reads this kind of file (known: "
                       f"{', '.join(suffixes)}); or name a catalog case")
    return door


def of_model(model) -> Door:
    """The door whose model this is (what a catalog source or `Door.load` returned)."""
    door = next((door for door in DOORS if door.owns(model)), None)
    if door is None:
        raise TypeError(f"no input door owns a {type(model).__name__}")   # our bug
    return door


def answer(model, arrays: list) -> tuple[str, list]:
    """(the framework's name, its answer) for `model`: ReferenceUnavailable when its door
    has none or it cannot run here."""
    door = of_model(model)
    if not door.reference:
        raise ReferenceUnavailable(f"the {door.name} door has no framework to compare with")
    return door.reference, door.answer(model, arrays)


def second_answer(model, arrays: list) -> tuple[str, list]:
    """(the second reference's name, its answer): an implementation independent of the
    first, asked when TVM and the first disagree; ReferenceUnavailable when there is none."""
    door = of_model(model)
    if not door.second_reference:
        raise ReferenceUnavailable(f"the {door.name} door has no second reference")
    return door.second_reference, door.second_answer(model, arrays)


def cuts(model) -> list:
    """The model cut after each of its nodes (door.Cut), in order; [] where its door
    cannot cut."""
    return of_model(model).cuts(model)


def converter_map(model) -> str | None:
    """The frontend converter map this model's import goes through (None: none)."""
    return of_model(model).converter_map


def to_relax(model):
    """The IRModule TVM's frontend for this model's door makes of it."""
    return of_model(model).to_relax(model)

"""Which of a TVM frontend's converters an import really used: the reach map's measurement.

Each Relax frontend sends every operator through one dict (operator name -> converter) and
reads it with `map[key]`; its unsupported-operator checks only test `key in map`. While
`recording(frontend)` is open, that dict is a subclass that notes each key it hands out,
so what is counted is what the frontend converted, not a name in a list. Nothing else
changes: the same converters run on the same arguments (tests/test_reach.py holds the
imported module structurally equal with and without the recording), and every patched
attribute is put back on exit.

A converter counts when it is looked up, also when it then fails (its failure is the
case's verdict). Not counted: a converter another one calls directly, ONNX's `If` and
`Constant` (handled outside the map), StableHLO's return ops (handled before the lookup).
The patch points are private names of the frontends (0.25-0.27 and main 5d4dc87213 share
them); where one is missing the record says `measurable=False`, never a guess.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
from typing import Iterator, Literal

from harness.result import ConverterRecord
from harness.tvmapi.loading import tvm

Frontend = Literal["onnx", "exported_program", "fx", "tflite", "stablehlo"]
FRONTENDS: tuple[Frontend, ...] = ("onnx", "exported_program", "fx", "tflite", "stablehlo")

_MISSING = object()


def key_name(key) -> str:
    """Keys are operator names, and in from_fx's map also nn.Module classes (by name)."""
    return key.__name__ if isinstance(key, type) else str(key)


class _NotingDict(dict):
    """A dict whose `d[key]` notes the key; `in`, get, len and iteration are dict's own."""

    def __init__(self, data, reached: ConverterRecord):
        super().__init__(data)
        self._reached = reached

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)   # a KeyError is not a use
        name = key_name(key)
        if name not in self._reached.used:
            self._reached.used.append(name)
        return value


@contextlib.contextmanager
def _patched(owner, name: str, new) -> Iterator[None]:
    """owner.name = new for the block; what was there is put back exactly (an attribute a
    class inherited is deleted again, not copied down)."""
    saved = owner.__dict__.get(name, _MISSING)
    setattr(owner, name, new)
    try:
        yield
    finally:
        if saved is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, saved)


@dataclasses.dataclass(frozen=True)
class _PatchPoint:
    module: str          # under tvm.relax.frontend
    owner: str           # "" the module itself, else a class in it
    attribute: str
    assigns: bool = False   # it sets `self.convert_map` (else it returns the map)


_POINTS: dict[str, _PatchPoint] = {
    # the module-level map function both the unsupported check and the lookup call
    "onnx": _PatchPoint("onnx.onnx_frontend", "", "_get_convert_map"),
    # BaseFXGraphImporter.__init__: self.convert_map = self.create_convert_map()
    "exported_program": _PatchPoint("torch.exported_program_translator",
                                    "ExportedProgramImporter", "create_convert_map"),
    "fx": _PatchPoint("torch.fx_translator", "TorchFXImporter", "create_convert_map"),
    # OperatorConverter.__init__ builds self.convert_map (nested subgraphs make their own)
    "tflite": _PatchPoint("tflite.tflite_frontend", "OperatorConverter", "__init__",
                          assigns=True),
    # StableHLOImporter.create_convert_map assigns self.convert_map
    "stablehlo": _PatchPoint("stablehlo.stablehlo_translator", "StableHLOImporter",
                             "create_convert_map", assigns=True),
}


def _owner(point: _PatchPoint):
    tvm()
    module = importlib.import_module(f"tvm.relax.frontend.{point.module}")
    return getattr(module, point.owner) if point.owner else module


def _available(point: _PatchPoint) -> bool:
    try:
        owner = _owner(point)
    except (ImportError, AttributeError):
        return False
    return point.attribute in vars(owner)


@contextlib.contextmanager
def recording(frontend: str | None,
              reached: ConverterRecord | None = None) -> Iterator[ConverterRecord]:
    """Notes in `reached` (a new record if None) the converters `frontend` looks up inside
    the block (None: a door with no converter map, nn and Relax files: nothing to note)."""
    reached = ConverterRecord("") if reached is None else reached
    reached.frontend, reached.used, reached.measurable = frontend or "", [], True
    if frontend is None:
        reached.measurable = False
        yield reached
        return
    point = _POINTS[frontend]   # KeyError: our bug (a door naming an unknown map)
    if not _available(point):
        reached.measurable = False
        yield reached
        return
    owner = _owner(point)
    original = vars(owner)[point.attribute]
    with _patched(owner, point.attribute, _noting(point, original, reached)):
        yield reached


def _noting(point: _PatchPoint, original, reached: ConverterRecord):
    """`original` wrapped so that the map it returns, or sets on `self`, notes its uses."""
    if not point.assigns:
        return lambda *args: _NotingDict(original(*args), reached)

    def assigning(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.convert_map = _NotingDict(self.convert_map, reached)
    return assigning


def converters(frontend: str) -> list[str]:
    """Every converter `frontend` has on this TVM, by name ([] where it cannot be read)."""
    point = _POINTS[frontend]
    if not _available(point):
        return []
    owner = _owner(point)
    if frontend == "onnx":
        keys = owner._get_convert_map()
    elif frontend == "tflite":
        keys = owner(None, None, None, None).convert_map   # __init__ only stores its args
    else:
        keys = owner().convert_map
    return sorted({key_name(key) for key in keys})

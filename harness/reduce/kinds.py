"""The kinds of model a reduction holds, one adapter each: what the driver asks of a model.

An ONNX graph (onnx.ModelProto, held in this process) and a Relax module (RelaxModule:
its file's text, TVM holds the module only in children) differ in how they are sized,
hashed, validated, written and described; each adapter answers that for its kind, so the
driver and the phases ask `kinds.of(model)`, never the model's type.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import sys

from harness.reduce import onnx_steps  # imports onnx only where a step runs

STEM = "best"   # best.onnx, best.py (TVMScript) or best.json: the best input so far


@dataclasses.dataclass
class RelaxModule:
    """A Relax module as the parent sees it: its file's text and its size."""
    text: bytes
    suffix: str                 # .py (TVMScript) or .json
    bindings: int
    elements: int = 0           # of the constants printed in the metadata section
    constants: int = 0
    label: str = ""             # what the edit that made it did

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text).hexdigest()

    @property
    def form(self) -> str:
        return "json" if self.suffix == ".json" else "tvmscript"

    def size(self) -> tuple[int, int]:
        return self.bindings, self.elements

    @classmethod
    def read(cls, path: str, answer: dict) -> "RelaxModule":
        with open(path, "rb") as handle:
            text = handle.read()
        return cls(text, os.path.splitext(path)[1], answer["bindings"], answer["elements"],
                   answer["constants"], answer.get("label", ""))

    def write(self, path: str) -> str:
        with open(path + ".partial", "wb") as handle:
            handle.write(self.text)
        os.replace(path + ".partial", path)
        return path


class OnnxKind:
    name = "onnx"
    suffixes = (".onnx",)
    best = STEM + ".onnx"

    def owns(self, model) -> bool:
        onnx = sys.modules.get("onnx")   # not imported: no model here is a ModelProto
        return onnx is not None and isinstance(model, onnx.ModelProto)

    def size(self, model) -> int:
        return onnx_steps.size(model)

    def digest(self, model) -> str:
        return hashlib.sha256(model.SerializeToString()).hexdigest()

    def valid(self, model) -> bool:
        """ONNX's checker accepts it (a candidate it refuses is not worth a child)."""
        import onnx  # here, as every use below: not by every CLI start (0.7 s)
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError:
            return False
        return True

    def write(self, model, stem: str) -> str:
        import onnx
        path = stem + ".onnx"
        onnx.save(model, path + ".partial")
        os.replace(path + ".partial", path)
        return path

    def read(self, path: str, state):
        import onnx
        return onnx.load(path)

    def record(self, model, state) -> None:
        state.nodes = self.size(model)

    def describe(self, model, state) -> str:
        return f"{state.original_nodes} -> {self.size(model)} nodes"


class RelaxKind:
    name = "relax"
    suffixes = (".py", ".json")

    def owns(self, model) -> bool:
        return isinstance(model, RelaxModule)

    def size(self, model: RelaxModule) -> tuple[int, int]:
        return model.size()

    def digest(self, model: RelaxModule) -> str:
        return model.digest

    def valid(self, model: RelaxModule) -> bool:
        return True   # each edit's child kept only a well-formed module

    def write(self, model: RelaxModule, stem: str) -> str:
        return model.write(stem + model.suffix)

    def read(self, path: str, state) -> RelaxModule:
        """The module on disk, its size as the state recorded it (the parent cannot count
        bindings: that takes TVM)."""
        with open(path, "rb") as handle:
            return RelaxModule(handle.read(), os.path.splitext(path)[1], state.bindings,
                               state.constant_elements, state.constants)

    def record(self, model: RelaxModule, state) -> None:
        state.bindings, state.constant_elements = model.size()
        state.constants = model.constants

    def describe(self, model: RelaxModule, state) -> str:
        constants = f", {model.constants} constants ({model.elements} elements)" \
            if model.constants or state.constants else ""   # the previous best's
        return f"{state.original_bindings} -> {model.bindings} Relax bindings" + constants


ONNX, RELAX = OnnxKind(), RelaxKind()
KINDS = (ONNX, RELAX)


def of(model):
    """The kind of `model` (an input the reduction holds)."""
    return next(kind for kind in KINDS if kind.owns(model))


def of_file(name: str):
    """The kind of the best input written as `name`."""
    return next(kind for kind in KINDS if name.endswith(kind.suffixes))

"""Where a case's model comes from: the source kinds, the door each feeds, the model built.

The catalog's own sources make models (an ONNX graph from a darknet cfg, a builder, the
onnx wheel; a torchvision or transformers model); `file:` is a user's file, its door
picked by the file itself, and `DOOR:FILE` (onnx:, tflite:, stablehlo:, torch:,
torch-onnx:, torch-fx:, torch-dynamo:, nn:, relax:)
names the door (the catalog's `relax.frontend.nn` models are `nn:` files in cases/nn/).
Kept apart from the catalog's reading (catalog.cases) so that what only needs the kinds
(the manifests) does not import the catalog back.
"""
from __future__ import annotations

import functools
import importlib.util
import os

from harness import doors
from harness.verdict import BadInput

TORCH_KINDS = ("torchvision", "torchvision-onnx", "torchvision-fx", "torchvision-dynamo",
               "transformers", "transformers-fx", "transformers-dynamo")
# Source kinds and the door their model goes through.
SOURCE_DOORS = {"darknet": "onnx", "builder": "onnx", "onnx-wheel": "onnx", "onnx-node": "onnx",
                "torchvision": "torch", "transformers": "torch",
                "torchvision-onnx": "torch-onnx", "torchvision-fx": "torch-fx",
                "torchvision-dynamo": "torch-dynamo", "transformers-fx": "torch-fx",
                "transformers-dynamo": "torch-dynamo", "relax-file": "relax",
                "torch-op": "torch"}
FILE_KINDS = ("file", "relax-file") + tuple(door.name for door in doors.DOORS)
# Kinds whose model is made from another kind's: an ONNX twin is exported from its
# model's torch.export program (one cached export serves both).
# (torch.fx and torch.compile trace the module itself: their rows share no work with it.)
MADE_FROM = {"torchvision-onnx": "torchvision", "torch-onnx": "torch"}


def model_group(source: str) -> str:
    """The model a source's rows share work with: the same source in another layout or
    on another path imports the same module, and a twin shares its model's export."""
    kind, sep, ref = source.partition(":")
    return f"{MADE_FROM.get(kind, kind)}{sep}{ref}"


def onnx_data_dir() -> str:
    """The onnx wheel's model folder, found without importing onnx: listing the catalog
    (every CLI start) would pay its import, 0.7 s."""
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise BadInput("the onnx package is not installed: pip install onnx")
    return os.path.join(spec.submodule_search_locations[0], "backend", "test", "data")


def model(case):
    """The model `case`'s door imports (an onnx.ModelProto, a torch model, a Relax module)."""
    kind, _, ref = case.source.partition(":")
    if kind in FILE_KINDS:
        return case.door.load(case.file)
    if kind in TORCH_KINDS:
        from harness.catalog import torch_cases
        try:
            return torch_cases.model_of(kind, ref)
        except KeyError:
            raise BadInput(f"case {case.id}: {kind} has no model {ref!r}") from None
    if kind == "torch-op":   # PyTorch's OpInfo sample, exported once (catalog.torch_ops)
        from harness.catalog import torch_ops
        from harness.doors import torch_door, torch_models
        torch_models.require("torch", "expecttest")   # op_db imports expecttest
        model = torch_door.SavedProgram(torch_ops.program_path(ref))
        if not os.path.exists(model.path):
            raise doors.ExportRefused(f"case {case.id}: this torch exports no program for "
                                      f"{ref} (cases/torch_ops.json lists it for torch "
                                      f"{torch_ops.listing().get('torch')})")
        try:
            model.export()
        except BadInput as refused:   # a program only the process that made it can load
            raise doors.ExportRefused(f"case {case.id}: torch cannot load the exported "
                                      f"sample here: {refused}") from None
        return model
    if kind == "darknet":
        from harness.catalog import darknet
        with open(os.path.join(case.base, "darknet", ref)) as handle:
            return darknet.build(handle.read())
    if kind == "builder":
        module, _, func = ref.rpartition(":")
        builders = _builders(os.path.join(case.base, module or "handwritten.py"))
        if not hasattr(builders, func):
            raise BadInput(f"case {case.id}: {module or 'handwritten.py'} in {case.base} "
                           f"has no builder {func!r}")
        return getattr(builders, func)()
    if kind == "onnx-wheel":
        import onnx
        return onnx.load(os.path.join(onnx_data_dir(), ref))
    if kind == "onnx-node":
        import onnx

        from harness.catalog import onnx_node
        return onnx.load(onnx_node.model_path(ref))
    raise BadInput(f"case {case.id}: unknown source kind {kind!r}")


@functools.cache
def _builders(path: str):
    """A catalog's builder file (cases/handwritten.py for the built-in one), imported."""
    if not os.path.exists(path):
        raise BadInput(f"no builder file {path}")
    name = "harness_cases_" + str(abs(hash(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

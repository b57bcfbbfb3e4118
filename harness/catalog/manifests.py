"""What `list --json` says of a case beyond its id: its inputs, from metadata only.

Listing must be instant and never fail: no export, no TVM import, no model built
but a builder's small graph. A darknet model's input comes from its cfg, an ONNX
file's from its graph (weights not loaded), a PyTorch model's from the door's
input shapes, with the refusal of an earlier export when one is cached; a file that
is gone is listed with the reason.
"""
from __future__ import annotations

import os

import onnx

from harness.catalog import sources
from harness.doors import onnx_door, torch_models
from harness.verdict import BadInput


def metadata(case) -> dict:
    """{"inputs": {name: shape}} and, where known, "refused" (torch's reason) or "error"
    (why the inputs cannot be read)."""
    kind, _, ref = case.source.partition(":")
    try:
        return _by_kind(case, kind, ref)
    except (BadInput, OSError, ValueError, onnx.checker.ValidationError) as exc:
        return {"inputs": {}, "error": str(exc).splitlines()[0] if str(exc) else repr(exc)}


def _by_kind(case, kind: str, ref: str) -> dict:
    if kind == "darknet":
        from harness.catalog import darknet
        with open(os.path.join(case.base, "darknet", ref)) as handle:
            return {"inputs": {darknet.INPUT: darknet.input_shape(handle.read())}}
    if kind == "builder":
        return {"inputs": onnx_door.graph_inputs(case.model())}
    if kind in ("onnx-wheel", "onnx-node"):
        from harness.catalog import onnx_node
        path = os.path.join(sources.onnx_data_dir(), ref) if kind == "onnx-wheel" \
            else onnx_node.model_path(ref)
        return {"inputs": onnx_door.graph_inputs(onnx.load(path, load_external_data=False))}
    if kind in sources.TORCH_KINDS:
        return _torch(kind, ref)
    if case.file is not None:
        if not os.path.exists(case.file):
            return {"inputs": {}, "error": f"no such file: {case.file}"}
        return {"inputs": case.door.inputs(case.file)}
    return {"inputs": {}}


def _torch(kind: str, name: str) -> dict:
    """The door's example input shapes (`input0`, ...) and a cached refusal, if any."""
    if kind.startswith("transformers"):
        model = torch_models.TorchModel("transformers", name)
    else:
        family = next((family for family, names in torch_models.listing().items()
                       if name in names), "classification")
        model = torch_models.TorchModel(family, name)
    out = {"inputs": {f"input{index}": list(shape)
                      for index, shape in enumerate(model.input_shapes())}}
    # (torch.fx and torch.compile trace afresh: torch.export's cached refusal is not theirs)
    refusal = None if kind.endswith(("-fx", "-dynamo")) else \
        model.refusal(twin=kind == "torchvision-onnx")
    return {**out, "refused": refusal} if refusal else out

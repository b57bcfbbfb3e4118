"""The PyTorch door's catalog cases: every torchvision model, small transformers, twins.

For each model `torchvision.models.list_models()` returns, `tv-NAME` (torch.export ->
TVM's PyTorch frontend) and `tv-NAME-onnx`, its twin: the same exported program
through `torch.onnx.export` -> TVM's ONNX frontend, so a bug only one frontend
triggers shows as such (report.md sets the two side by side). `hf-NAME` are the
small transformers configurations (doors.torch_models.TRANSFORMERS). Where torchvision
is not installed, the rule's default sample is still listed: checking it says why it
cannot be tested (the pytest plugin skips it, naming the extra to install).
"""
from __future__ import annotations

from harness.doors import torch_models

PREFIX = {"torchvision": "tv-", "transformers": "hf-"}
TWIN = "-onnx"


def discover(rule: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    """(case id, source, tags) for every model of the door, before layouts."""
    found = []
    listing = torch_models.listing()
    names = {name: family for family, names in listing.items() for name in names}
    if not names:   # torchvision not installed: the sample, to be skipped saying why
        names = {case_id.removeprefix("tv-").removesuffix(TWIN): "classification"
                 for case_id in rule.get("default", []) if case_id.startswith("tv-")}
    for name, family in sorted(names.items()):
        found.append((f"tv-{name}", f"torchvision:{name}", ("torch-export", family)))
        found.append((f"tv-{name}{TWIN}", f"torchvision-onnx:{name}", ("torch-onnx", family)))
    for name in torch_models.TRANSFORMERS:
        found.append((f"hf-{name}", f"transformers:{name}", ("torch-export", "transformers")))
    return found


def model_of(kind: str, name: str):
    """The model a torch source names: a TorchModel (exported now, so a refusal is the
    check's verdict before any TVM call) or, for the twin, its ONNX model."""
    if kind == "transformers":
        if name not in torch_models.TRANSFORMERS:
            raise KeyError(name)
        torch_models.require("torch", "transformers")   # a cached export needs torch too
        model = torch_models.TorchModel("transformers", name)
        model.export()
        return model
    torch_models.require("torch", "torchvision")
    family = next((family for family, names in torch_models.listing().items()
                   if name in names), None)
    if family is None:
        raise KeyError(name)
    model = torch_models.TorchModel(family, name)
    if kind == "torchvision-onnx":
        return model.onnx_twin()
    model.export()
    return model


def _split(case_id: str) -> tuple[str, str]:
    return (case_id[:-5], "-nhwc") if case_id.endswith("-nhwc") else (case_id, "")


def is_twin(case_id: str) -> bool:
    """A torchvision model through the ONNX door (tv-X-onnx, tv-X-onnx-nhwc)."""
    return case_id.startswith("tv-") and _split(case_id)[0].endswith(TWIN)


def twin_of(case_id: str) -> str | None:
    """The other door's case id of the same model (tv-X <-> tv-X-onnx), layouts kept."""
    if not case_id.startswith("tv-"):
        return None
    base, layout = _split(case_id)
    other = base.removesuffix(TWIN) if is_twin(case_id) else base + TWIN
    return other + layout

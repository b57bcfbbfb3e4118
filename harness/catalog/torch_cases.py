"""The PyTorch door's catalog cases: every torchvision model, small transformers, twins.

For each model `torchvision.models.list_models()` returns, `tv-NAME` (torch.export ->
TVM's PyTorch frontend) and its twins, the same model by PyTorch's other routes:
`tv-NAME-onnx` (the exported program through `torch.onnx.export` -> TVM's ONNX
frontend), `tv-NAME-fx` (torch.fx -> `from_fx`) and `tv-NAME-dynamo` (torch.compile's
relax_dynamo import), so a bug only one route triggers shows as such (report.md sets
them side by side). `hf-NAME` are the small transformers configurations
(doors.torch_models.TRANSFORMERS), also by the routes as `hf-NAME-fx`, `hf-NAME-dynamo`.
Where torchvision is not installed, the rule's default sample is still listed: checking it
says why it cannot be tested (the pytest plugin skips it, naming the extra to install).
"""
from __future__ import annotations

from harness.doors import torch_models

PREFIX = {"torchvision": "tv-", "transformers": "hf-"}
TWIN = "-onnx"
# A twin's case id suffix -> (its source kind, the door it goes through, its tag).
TWINS = {TWIN: ("torchvision-onnx", "torch-onnx"), "-fx": ("torchvision-fx", "torch-fx"),
         "-dynamo": ("torchvision-dynamo", "torch-dynamo")}
# The transformers models by PyTorch's other routes (their ONNX export is not offered).
ROUTES = {"-fx": ("transformers-fx", "torch-fx"),
          "-dynamo": ("transformers-dynamo", "torch-dynamo")}


def discover(rule: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    """(case id, source, tags) for every model of the door, before layouts."""
    found = []
    listing = torch_models.listing()
    names = {name: family for family, names in listing.items() for name in names}
    if not names:   # torchvision not installed: the sample, to be skipped saying why
        names = {_model_name(case_id): "classification"
                 for case_id in rule.get("default", []) if case_id.startswith("tv-")}
    for name, family in sorted(names.items()):
        found.append((f"tv-{name}", f"torchvision:{name}", ("torch-export", family)))
        for suffix, (kind, tag) in TWINS.items():
            found.append((f"tv-{name}{suffix}", f"{kind}:{name}", (tag, family)))
    for name in torch_models.TRANSFORMERS:
        found.append((f"hf-{name}", f"transformers:{name}", ("torch-export", "transformers")))
        for suffix, (kind, tag) in ROUTES.items():
            found.append((f"hf-{name}{suffix}", f"{kind}:{name}", (tag, "transformers")))
    return found


def _model_name(case_id: str) -> str:
    base = case_id.removeprefix("tv-")
    return next((base.removesuffix(suffix) for suffix in TWINS if base.endswith(suffix)), base)


def model_of(kind: str, name: str):
    """The model a torch source names: a TorchModel (exported now, so a refusal is the
    check's verdict before any TVM call), for the ONNX twin its ONNX model, for a route
    its traced model (doors.torch_routes)."""
    source, _, route = kind.partition("-")
    if source == "transformers":
        if name not in torch_models.TRANSFORMERS:
            raise KeyError(name)
        torch_models.require("torch", "transformers")   # a cached export needs torch too
        model = torch_models.TorchModel("transformers", name)
        if route:
            return _routed(route, model)
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
    if route:
        return _routed(route, model)
    model.export()
    return model


def _routed(route: str, model):
    from harness.doors import torch_routes
    return (torch_routes.FX if route == "fx" else torch_routes.DYNAMO).of_catalog(model)


def _split(case_id: str) -> tuple[str, str]:
    return (case_id[:-5], "-nhwc") if case_id.endswith("-nhwc") else (case_id, "")


def is_twin(case_id: str) -> bool:
    """A torchvision model by another route (tv-X-onnx, tv-X-fx-nhwc, ...)."""
    return case_id.startswith("tv-") and _split(case_id)[0].endswith(tuple(TWINS))


def twins_of(case_id: str) -> dict[str, str]:
    """{route tag: case id} of the same model by the other routes (tv-X -> tv-X-onnx,
    tv-X-fx, tv-X-dynamo), layouts kept; {} for a twin or a model not torchvision's."""
    if not case_id.startswith("tv-") or is_twin(case_id):
        return {}
    base, layout = _split(case_id)
    return {tag: base + suffix + layout for suffix, (_, tag) in TWINS.items()}

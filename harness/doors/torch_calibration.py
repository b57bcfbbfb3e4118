"""BatchNorm statistics from the example batch: a torchvision model that answers with spread.

Freshly initialized and in eval mode, a torchvision model normalizes with running
statistics of 0 and 1 that fit no activation: through dozens of layers its answer
shrinks to ~1e-7 whatever the input (mnasnet0_5: 1e-7, moving by 4e-8), so comparing it
with TVM's says nothing (the answers oracle marks it insensitive). One forward pass in
training mode on the seeded example batch sets every BatchNorm's statistics to that
batch's; the model then answers at unit scale, and its answer moves with its input.
A model that cannot run in training mode (a detector wants targets, a BatchNorm1d over
one value) is built again as it was. repro.py runs this same function (its source).
"""
from __future__ import annotations

import inspect


def calibrated(make, inputs):
    """`make()`'s model in eval mode, its BatchNorms' statistics taken from `inputs`; the
    model as made, when it cannot run in training mode. `make` is seeded: called again,
    it makes the same model."""
    import torch
    model = make()
    norms = [module for module in model.modules()
             if isinstance(module, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model.eval()
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None   # a cumulative average: exactly this batch's statistics
    try:
        with torch.no_grad():
            model.train()(*inputs)
    except Exception:  # noqa: BLE001 - the model's own refusal: keep its initialization
        return make().eval()
    return model.eval()


def torchvision_recipe(name: str, arguments: dict, shapes: list) -> str:
    """Python source that builds a torchvision model as TorchModel.build does
    (for repro.py): the same seeded inputs, `calibrated`'s own text, the same model."""
    listed = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return "\n".join([
        "import torch, torchvision",
        "generator = torch.Generator().manual_seed(0)",
        "inputs = (" + ", ".join(f"torch.randn(*{shape}, generator=generator)"
                                 for shape in shapes) + ",)",
        inspect.getsource(calibrated),
        "def make():",
        "    torch.manual_seed(0)",
        f"    return torchvision.models.get_model({name!r}, {listed})",
        "model = calibrated(make, inputs)"])

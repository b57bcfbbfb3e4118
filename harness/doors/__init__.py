"""Input doors: how a case's model becomes the Relax IRModule a path starts from.

The data flow's first step (door -> module -> path -> oracles -> verdict -> report):
an ONNX model through TVM's ONNX frontend, a torch.export program through its
PyTorch frontend, or a Relax module already (a file of TVMScript or of save_json
text: what the Relax-level reducer checks). `Case.model()` gives the model;
`to_relax` is the "import" stage.
"""
from __future__ import annotations

import dataclasses

from harness.doors.torch_models import TorchModel, TorchUnavailable
from harness.tvmapi import calls, copiers

__all__ = ["RelaxFile", "TorchModel", "TorchUnavailable", "to_relax"]


@dataclasses.dataclass(frozen=True)
class RelaxFile:
    """A Relax IRModule on disk: TVMScript (.py) or save_json text (.json)."""
    path: str


def to_relax(model):
    """The IRModule TVM's frontend for this model's door makes of it."""
    if isinstance(model, TorchModel):
        program = model.program()    # TorchUnavailable: torch is not installed here
        return calls.from_exported_program(program)
    if isinstance(model, RelaxFile):
        return copiers.load_module_file(model.path)
    return calls.from_onnx(model)

"""The PyTorch door: torch.export's program through TVM's PyTorch frontend
(`relax.frontend.torch.from_exported_program`), and its ONNX twin.

Models: the catalog's torchvision and transformers models (torch_models.TorchModel),
a user's Python file, or a saved ExportedProgram (`.pt2`, `torch.export.save`).

A user's model file is ordinary Python that defines, at module level,
    model            a torch.nn.Module (put in eval mode before export)
    example_inputs   a tuple of tensors to export it with (static shapes)
It is run with torch seeded (`torch.manual_seed(0)`), so random weights are the same
on every run. The twin (source kind `torch-onnx:FILE`) is the same exported program
through `torch.onnx.export` and the ONNX door: a bug only one frontend triggers shows.
A model torch refuses to export is `unsupported` with torch's reason (exit 125).
"""
from __future__ import annotations

import dataclasses
import os
import tempfile
import zipfile

from harness.doors import onnx_door, python_file
from harness.doors.door import Door, ReferenceUnavailable
from harness.doors.torch_models import ExportRefused, TorchModel, require
from harness.tvmapi import calls
from harness.verdict import BadInput, first_line

MODEL, INPUTS = "model", "example_inputs"   # the names a user's model file defines


@dataclasses.dataclass(eq=False)
class _UserProgram:
    """A user's PyTorch model file: its exported program, made once, on first use."""
    path: str
    _program: object = dataclasses.field(default=None, repr=False)

    def export(self) -> None:
        """Export now, so that torch's refusal is the check's verdict."""
        self.program()

    def program(self):
        if self._program is None:
            require("torch")
            self._program = self._make()
        return self._program

    def onnx_twin(self):
        return _onnx_twin(self.program(), self.path)

    def _make(self):
        raise NotImplementedError


class TorchFile(_UserProgram):
    """A user's Python file defining `model` and `example_inputs`."""

    def build(self) -> tuple:
        """(the module in eval mode, its example inputs as a tuple), the file run seeded;
        what is the file's to fix is a BadInput."""
        import torch
        torch.manual_seed(0)
        namespace = python_file.run(self.path)
        model, inputs = namespace.get(MODEL), namespace.get(INPUTS)
        if not isinstance(model, torch.nn.Module):
            raise BadInput(f"{self.path}: `{MODEL}` must be a torch.nn.Module (it is a "
                           f"{type(model).__name__})")
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        if not isinstance(inputs, (tuple, list)):
            raise BadInput(f"{self.path}: `{INPUTS}` must be a tuple of tensors (it is "
                           f"a {type(inputs).__name__})")
        return model.eval(), tuple(inputs)

    def _make(self):
        return _exported(*self.build(), self.path)

    def recipe(self, export: bool = True) -> str:
        """The file itself, embedded and run as the harness ran it, binding `model` and
        `inputs`; with `export`, `program` (torch.export's)."""
        return "\n".join([
            "import torch",
            "torch.manual_seed(0)",
            f"_source = {python_file.read(self.path)!r}",
            "_namespace = {'__name__': 'model_file'}",
            "exec(compile(_source, 'model.py', 'exec'), _namespace)",
            f"inputs = _namespace[{INPUTS!r}]",
            "inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)",
            f"model = _namespace[{MODEL!r}].eval()"]
            + ["with torch.no_grad():",
               "    program = torch.export.export(model, inputs)"] * export)


class SavedProgram(_UserProgram):
    """A user's saved ExportedProgram (`torch.export.save(program, "model.pt2")`)."""

    def _make(self):
        import torch
        try:
            return torch.export.load(self.path)
        except Exception as exc:  # noqa: BLE001 - torch cannot read the user's file
            raise BadInput(f"{self.path} is not a saved ExportedProgram torch can load "
                           f"({first_line(exc)[:200]}); write it with "
                           "torch.export.save(program, PATH)") from None

    def recipe(self) -> str:
        return f"import torch\nprogram = torch.export.load({os.path.abspath(self.path)!r})"


def _exported(model, inputs: tuple, path: str):
    import torch
    try:
        with torch.no_grad():
            return torch.export.export(model, inputs)
    except Exception as exc:  # noqa: BLE001 - torch's refusal is the case's verdict
        raise ExportRefused(f"torch.export refused {path}: {type(exc).__name__}: "
                            f"{first_line(exc)[:400]}") from None


def _onnx_twin(program, path: str):
    """The exported program through torch.onnx.export, as an onnx.ModelProto."""
    require("torch", "onnxscript")
    import onnx
    import torch
    with tempfile.TemporaryDirectory(prefix="harness-twin-") as folder:
        out = os.path.join(folder, "twin.onnx")
        try:
            torch.onnx.export(program, dynamo=True, verbose=False).save(out)
        except Exception as exc:  # noqa: BLE001 - torch's refusal is the case's verdict
            raise ExportRefused(f"torch.onnx.export refused {path}: {type(exc).__name__}: "
                                f"{first_line(exc)[:400]}") from None
        return onnx.load(out)


class TorchDoor(Door):
    name = "torch"
    frontend = "PyTorch"
    suffixes = (".py", ".pt2")
    py_binds = INPUTS   # any other .py is Relax's
    extra = "torch"
    reference = "PyTorch"
    reproducer = "torch"
    converter_map = "exported_program"

    def validate(self, path: str) -> None:
        if path.endswith(".pt2"):
            if not zipfile.is_zipfile(python_file.existing(path)):
                raise BadInput(f"{path} is not a saved ExportedProgram (not a zip archive); "
                               "write it with torch.export.save(program, PATH)")
            return
        self.require_names(path, "PyTorch", {MODEL: "a torch.nn.Module",
                                             INPUTS: "a tuple of tensors"})

    def load(self, path: str):
        require("torch")
        model = SavedProgram(path) if path.endswith(".pt2") else TorchFile(path)
        model.export()
        return model

    def owns(self, model) -> bool:
        return isinstance(model, (TorchModel, TorchFile, SavedProgram))

    def to_relax(self, model):
        return calls.from_exported_program(model.program())

    def recipe(self, model) -> str | None:
        return model.recipe()

    def answer(self, model, arrays: list) -> list:
        """The exported program run by PyTorch itself (`program.module()`: the graph
        torch.export traced, eager kernels), in inference mode."""
        import torch
        undefined = _undefined_answer(model.program())
        if undefined:
            raise ReferenceUnavailable(f"the program calls {', '.join(undefined)}: its answer "
                                       "is drawn at random or left undefined (excluded by rule)")
        tensors = [torch.from_numpy(array.copy()) for array in arrays]
        try:
            with torch.no_grad():
                output = model.program().module()(*tensors)
        except Exception as exc:  # noqa: BLE001 - PyTorch refusing our inputs is not TVM's
            raise ReferenceUnavailable(f"PyTorch cannot run the exported program on the "
                                       f"drawn inputs: {type(exc).__name__}: "
                                       f"{first_line(exc)[:300]}") from None
        answers = tensors_of(output)
        lacking = _dtypes_numpy_lacks()
        unlike = sorted({str(tensor.dtype) for tensor in answers if tensor.dtype in lacking})
        if unlike:   # compared in float32, its own rounding would read as TVM's error
            raise ReferenceUnavailable(f"PyTorch answers in {', '.join(unlike)}, which numpy "
                                       "has no type for: not compared")
        return [tensor.detach().numpy() for tensor in answers]

    def inputs(self, path: str) -> dict:
        return {}


# ATen operators whose answer no second run repeats: random draws, and memory allocated
# but never written (empty*: PyTorch answered 1.2e31 where TVM wrote 0, 2026-12-07).
_UNDEFINED = ("rand", "normal", "bernoulli", "multinomial", "exponential", "poisson",
              "uniform", "geometric", "cauchy", "log_normal", "dropout", "empty")


def _undefined_answer(program) -> list[str]:
    """The ATen operators of `program` whose answer is random or undefined."""
    found = set()
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        name = getattr(node.target, "__name__", str(node.target)).split(".")[0].strip("_")
        if "dropout" in name and not (len(node.args) > 2 and node.args[2] is True):
            continue   # dropout(x, p, train=False), an eval model's: the identity
        if any(name.startswith(word) or name.endswith(word) for word in _UNDEFINED):
            found.add(name)
    return sorted(found)


def _dtypes_numpy_lacks() -> tuple:
    """torch's dtypes numpy has no type for (`.numpy()` refuses them)."""
    import torch
    return (torch.bfloat16,) + tuple(getattr(torch, name) for name in (
        "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
        if hasattr(torch, name))


def tensors_of(output) -> list:
    """A module's output (a tensor, a Python number, nested tuples, lists or dicts of them)
    flattened, as tensors."""
    if hasattr(output, "detach"):
        return [output]
    if isinstance(output, (bool, int, float)):   # `.item()`'s answer: a 0-d tensor
        import torch
        return [torch.tensor(output)]
    items = output.values() if isinstance(output, dict) else output
    return [tensor for item in items for tensor in tensors_of(item)]


class TorchTwinDoor(TorchDoor):
    """A PyTorch model through torch.onnx.export and the ONNX door (asked for by name:
    `torch-onnx:FILE`); its model is ONNX, which the ONNX door owns."""
    name = "torch-onnx"
    frontend = "ONNX"
    by_name_only = True
    onnx_graph = True
    reference = "onnxruntime"
    reproducer = "onnx"
    converter_map = "onnx"

    def load(self, path: str):
        return super().load(path).onnx_twin()

    def owns(self, model) -> bool:
        return False

    def to_relax(self, model):
        return onnx_door.DOOR.to_relax(model)

    def recipe(self, model) -> str | None:
        return None


DOOR = TorchDoor()
TWIN = TorchTwinDoor()

"""PyTorch's two other routes into Relax: torch.fx (`from_fx`) and torch.compile's Relax
backend (`relax_dynamo`), each a door over the same models as the torch.export door.

A PyTorch user reaches TVM three ways; a converter bug only one route meets shows as
such, and the three answers should agree with eager PyTorch's (each door's reference).
- `torch-fx:FILE`, `tv-NAME-fx`: `torch.fx.symbolic_trace(model)` -> `from_fx`.
- `torch-dynamo:FILE`, `tv-NAME-dynamo`: what `torch.compile(model, backend=relax_dynamo())`
  imports. The backend is handed each graph dynamo captured and its example inputs, and
  calls `from_fx(graph, [(shape, dtype), ...])`; here a recording backend keeps the graphs
  (torch's part: a refusal is `unsupported`) and `to_relax` makes the same `from_fx` call
  (TVM's part). Dynamo lifts parameters to graph inputs, so the module's inputs are the
  graph's; the reference runs the captured graph itself on the same arrays. A model that
  breaks into several graphs is one function per graph (`main`, `graph_1`, ...): each
  alone is what the backend compiles; no whole-model answer is compared.
The models: a user's PyTorch model file (as the torch door reads it: `model` and
`example_inputs`) or a catalog TorchModel, built seeded in eval mode.
"""
from __future__ import annotations

import dataclasses

from harness.doors.door import ReferenceUnavailable
from harness.doors.torch_door import TorchDoor, TorchFile, tensors_of
from harness.doors.torch_models import ExportRefused, TorchModel, require
from harness.tvmapi import calls
from harness.verdict import BadInput, first_line


@dataclasses.dataclass(eq=False)
class RoutedModel:
    """A PyTorch module and its example inputs, traced by one route (`fx` or `dynamo`)
    when loaded; `graphs` are what the route hands TVM: (graph module, input info)."""
    route: str
    label: str          # what a refusal names: the file or the catalog model
    source: object      # a TorchFile or a TorchModel: builds (module, inputs), and its recipe
    graphs: list = dataclasses.field(default_factory=list, repr=False)
    module: object = dataclasses.field(default=None, repr=False)

    def trace(self) -> "RoutedModel":
        require("torch")
        module, inputs = self.source.build()
        self.module = module
        self.graphs = _TRACERS[self.route](module, inputs, self.label)
        return self

    def recipe(self) -> str:
        """Source that builds the model as loaded, traces it by the route and binds
        `module`: the IRModule TVM's frontend makes of it (repro.py's load())."""
        return "\n".join([self.source.recipe(export=False), _ROUTE_RECIPES[self.route]])


def _input_info(tensors) -> list:
    return [(tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."))
            for tensor in tensors]


def _fx_trace(module, inputs, label: str) -> list:
    import torch
    try:
        graph = torch.fx.symbolic_trace(module)
    except Exception as exc:  # noqa: BLE001 - torch.fx's refusal is the case's verdict
        raise ExportRefused(f"torch.fx.symbolic_trace refused {label}: {type(exc).__name__}: "
                            f"{first_line(exc)[:400]}") from None
    return [(graph, _input_info(inputs))]


def _dynamo_capture(module, inputs, label: str) -> list:
    """The graphs torch.compile hands its backend, with their example inputs' shapes and
    dtypes (what relax_dynamo's backend reads), kept by a backend that runs them eagerly."""
    import torch
    graphs = []

    def recording_backend(graph_module, example_inputs):
        graphs.append((graph_module, _input_info(example_inputs)))
        return graph_module.forward
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            torch.compile(module, backend=recording_backend)(*inputs)
    except Exception as exc:  # noqa: BLE001 - dynamo's refusal is the case's verdict
        raise ExportRefused(f"torch.compile refused {label}: {type(exc).__name__}: "
                            f"{first_line(exc)[:400]}") from None
    finally:
        torch._dynamo.reset()
    if not graphs:
        raise ExportRefused(f"torch.compile captured no graph of {label}: nothing reaches "
                            "the backend")
    return graphs


_TRACERS = {"fx": _fx_trace, "dynamo": _dynamo_capture}
_CAPTURE_RECIPE = '''
graphs = []
def recording_backend(graph_module, example_inputs):
    graphs.append((graph_module, [(tuple(t.shape), str(t.dtype).removeprefix("torch."))
                                  for t in example_inputs]))
    return graph_module.forward
with torch.no_grad():
    torch.compile(model, backend=recording_backend)(*inputs)'''
_ROUTE_RECIPES = {
    "fx": "\n".join([
        "from tvm.relax.frontend.torch import from_fx",
        "info = [(tuple(t.shape), str(t.dtype).removeprefix('torch.')) for t in inputs]",
        "module = from_fx(torch.fx.symbolic_trace(model), info)"]),
    "dynamo": _CAPTURE_RECIPE + "\n" + "\n".join([
        "from tvm import IRModule",
        "from tvm.relax.frontend.torch import from_fx",
        "functions = {}",
        "for index, (graph, info) in enumerate(graphs):",
        "    name = 'main' if index == 0 else f'graph_{index}'",
        "    functions[name] = from_fx(graph, info)['main'].with_attr('global_symbol', name)",
        "module = IRModule(functions)"]),
}


class _RouteDoor(TorchDoor):
    """A route's door: a user's PyTorch model file by name (`ROUTE:FILE`), or a catalog
    model's twin; eager PyTorch is the reference."""
    route = ""
    suffixes = (".py",)
    by_name_only = True
    reproducer = "torch_route"
    converter_map = "fx"     # torch.compile's relax_dynamo calls from_fx too
    onnx_graph = False

    def validate(self, path: str) -> None:
        if path.endswith(".pt2"):
            raise BadInput(f"{path}: a saved ExportedProgram has no nn.Module for "
                           f"{self.frontend} to trace; pass the model's Python file")
        super().validate(path)

    def load(self, path: str) -> RoutedModel:
        require("torch")
        return RoutedModel(self.route, path, TorchFile(path)).trace()

    def of_catalog(self, model: TorchModel) -> RoutedModel:
        return RoutedModel(self.route, model.name, model).trace()

    def owns(self, model) -> bool:
        return isinstance(model, RoutedModel) and model.route == self.route

    def to_relax(self, model: RoutedModel):
        return calls.from_fx_graphs(model.graphs)

    def recipe(self, model: RoutedModel) -> str:
        return model.recipe()

    def answer(self, model: RoutedModel, arrays: list) -> list:
        """Eager PyTorch on the same arrays: the module itself (fx: its inputs are the
        module's), or the one captured graph (dynamo: parameters are its inputs too)."""
        if len(model.graphs) > 1:
            raise ReferenceUnavailable(
                f"torch.compile broke the model into {len(model.graphs)} graphs; TVM compiles "
                "each alone, so no whole-model answer is compared")
        import torch
        runnable = model.module if self.route == "fx" else model.graphs[0][0]
        tensors = [torch.from_numpy(array.copy()) for array in arrays]
        try:
            with torch.no_grad():
                output = runnable(*tensors)
        except Exception as exc:  # noqa: BLE001 - PyTorch refusing our inputs is not TVM's
            raise ReferenceUnavailable(f"PyTorch cannot run the model on the drawn inputs: "
                                       f"{type(exc).__name__}: {first_line(exc)[:300]}") \
                from None
        return [tensor.detach().numpy() for tensor in tensors_of(output)]


class FxDoor(_RouteDoor):
    name = "torch-fx"
    route = "fx"
    frontend = "PyTorch FX"


class DynamoDoor(_RouteDoor):
    name = "torch-dynamo"
    route = "dynamo"
    frontend = "torch.compile (relax_dynamo)"


FX = FxDoor()
DYNAMO = DynamoDoor()

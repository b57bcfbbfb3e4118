"""An op program (harness.catalog.op_programs) on TVM: each application checked by TVM's
own struct-info inference, and the whole program built as Relax `main`.

`CheckingGraph` is what the generator draws on: an application is its op's builder called
and normalized by a BlockBuilder; it is accepted when TVM infers tensors (or a tuple of
them) of static shape, and refused otherwise, with TVM's message kept as `refusal`. No
shape rule of ours decides. `RelaxProgram` is the same calls emitted into one dataflow
block of `main`, whose parameters are the program's inputs in order.
"""
from __future__ import annotations

from harness.tvmapi import ir, op_registry
from harness.tvmapi.loading import tvm


def _static_tensor(ty) -> tuple[tuple[int, ...], str] | None:
    """(shape, dtype) of a tensor type of known dtype and all-constant shape, else None."""
    if not isinstance(ty, ir.tensor_type_class()):
        return None
    shape = ty.shape
    if shape is None or not hasattr(shape, "values") or not str(ty.dtype) or \
            str(ty.dtype) == "void":
        return None
    sizes = []
    for value in shape.values:
        if not hasattr(value, "value"):   # a symbolic size (data-dependent output)
            return None
        sizes.append(int(value.value))
    return tuple(sizes), str(ty.dtype)


class CheckingGraph:
    """Struct-info inference only: free vars for inputs, nothing emitted."""

    def __init__(self):
        self.relax = tvm().relax
        self.builder = ir.block_builder()
        self.refusal = ""
        self.types: dict = {}   # id of a tensor expression -> (shape, dtype)

    def input(self, shape: tuple[int, ...], dtype: str):
        var = self.relax.Var(self._input_name(), ir.tensor_annotation(tuple(shape), dtype))
        self.types[var.__hash__()] = (tuple(shape), dtype)
        return var

    def _input_name(self) -> str:
        return "x"

    def type_of(self, tensor) -> tuple[tuple[int, ...], str]:
        return self.types[tensor.__hash__()]

    def _bind(self, expr):
        return self.builder.normalize(expr)

    def _outputs(self, bound, fields: list) -> list:
        """Stand-ins of the inferred types: nothing is emitted, so nothing needs a scope."""
        return [self.relax.Var("y", field) for field in fields]

    def apply(self, op: str, kwargs: dict) -> list | None:
        """The op's outputs (tensor expressions), or None with `refusal` set: TVM refused
        the call, or inferred something other than static-shape tensors."""
        try:
            bound = self._bind(op_registry.builder(op)(**kwargs))
        except Exception as exc:  # noqa: BLE001 - any refusal of TVM's builder or inference
            self.refusal = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}"
            return None
        ty = ir.expr_type(bound)
        fields = list(ty.fields) if hasattr(ty, "fields") else [ty]
        types = [_static_tensor(field) for field in fields]
        if not fields or any(t is None for t in types):
            self.refusal = f"inferred {ty}: not tensors of static shape"
            return None
        if any(size <= 0 for shape, _ in types for size in shape):
            # a zero size, or a negative one inference let through (repeat(x, -1, 0))
            self.refusal = f"inferred {ty}: a zero-size or negative-size tensor"
            return None
        outputs = self._outputs(bound, fields)
        for tensor, found in zip(outputs, types, strict=True):
            self.types[tensor.__hash__()] = found
        return outputs


class RelaxProgram(CheckingGraph):
    """main(inputs...) in one dataflow block, each application emitted as it is applied."""

    def __init__(self):
        super().__init__()
        self.params: list = []
        self.main = ir.DataflowMain(self.builder)

    def _input_name(self) -> str:
        return f"x{len(self.params)}"

    def input(self, shape: tuple[int, ...], dtype: str):
        var = super().input(shape, dtype)
        self.params.append(var)
        return var

    def _bind(self, expr):
        return self.builder.emit(expr)

    def _outputs(self, bound, fields: list) -> list:
        if len(fields) == 1 and not hasattr(ir.expr_type(bound), "fields"):
            return [bound]
        return [self.builder.emit(self.relax.TupleGetItem(bound, index))
                for index in range(len(fields))]

    def finish(self, outputs: list):
        return self.main.finish(outputs, params=self.params)

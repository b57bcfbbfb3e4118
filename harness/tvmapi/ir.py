"""Walking and building Relax IR the same way on every release.

Measured differences: tensor annotations are `relax.TensorStructInfo` in 0.25,
`relax.TensorType` later; 0.27 renamed the boolean well-formedness check.
"""
from __future__ import annotations

from typing import Any

from harness.tvmapi.loading import tvm


def call_attrs(mod) -> list[tuple[str, Any]]:
    """(location, attrs) for every function's attrs and every relax Call's attrs.

    The order is deterministic for structurally equal modules, which is what lets
    two copies be compared pairwise.
    """
    t = tvm()
    relax = t.relax
    out = []
    for gv, func in sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint):
        fname = gv.name_hint
        if getattr(func, "attrs", None) is not None:
            out.append((f"@{fname}.attrs", func.attrs))
        if isinstance(func, relax.Function):
            calls = []

            def visit(expr, calls=calls):
                if isinstance(expr, relax.Call) and expr.attrs is not None:
                    calls.append(expr)
            relax.analysis.post_order_visit(func, visit)
            for index, call in enumerate(calls):
                op = getattr(call.op, "name", None) or getattr(call.op, "name_hint", "?")
                out.append((f"@{fname}/call[{index}]:{op}.attrs", call.attrs))
    return out


def count_calls(mod, op_names: tuple[str, ...]) -> int:
    """How many bindings of the module's relax functions call one of these ops."""
    return sum(1 for name in called_ops(mod) if name in op_names)


def called_ops(mod) -> list[str]:
    """The op name of every binding of the module's relax functions that calls an op
    (relax is in A-normal form: each call is a binding's value; a walk with a Python
    callback per node cost the fuzzer 50 ms an example)."""
    relax = tvm().relax
    names = []
    for func in mod.functions.values():
        if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr):
            for block in func.body.blocks:
                for binding in block.bindings:
                    value = binding.value
                    if isinstance(value, relax.Call):
                        name = getattr(value.op, "name", None)
                        if name is not None:
                            names.append(str(name))
    return names


def tensor_annotation(shape, dtype: str):
    return tensor_type_class()(shape, dtype)


def tensor_type_class():
    """The class of a Relax tensor's annotation and inferred type: `TensorStructInfo` on 0.25
    (where `relax.TensorType` also exists, the older Type a struct info is not), then
    `TensorType`."""
    relax = tvm().relax
    return relax.TensorStructInfo if hasattr(relax, "TensorStructInfo") else relax.TensorType


def block_builder():
    return tvm().relax.BlockBuilder()


class DataflowMain:
    """`main` in one dataflow block of `builder`, held open while a generator emits into it
    binding by binding (not inside one `with`): the conv/layout graph's builder and the op
    program's. `params` now, or (the op program, whose inputs are drawn as it goes) at
    `finish`."""

    def __init__(self, builder, params: list | None = None):
        self.builder = builder
        self._function = builder.function("main", params)
        self._function.__enter__()
        self._dataflow = builder.dataflow()
        self._dataflow.__enter__()

    def finish(self, outputs: list, params: list | None = None):
        """The module whose `main` returns the one output, or a tuple of several."""
        out = outputs[0] if len(outputs) == 1 else \
            self.builder.emit(tvm().relax.Tuple(outputs))
        result = self.builder.emit_output(out)
        self._dataflow.__exit__(None, None, None)
        self.builder.emit_func_output(result, params=params)
        self._function.__exit__(None, None, None)
        return self.builder.get()


def relax_op():
    return tvm().relax.op


def well_formed(mod) -> bool:
    """0.27 renamed the boolean check to check_well_formed (well_formed now raises)."""
    analysis = tvm().relax.analysis
    if hasattr(analysis, "check_well_formed"):
        return bool(analysis.check_well_formed(mod))
    return bool(analysis.well_formed(mod))


def module_well_formed(mod) -> bool:
    """Relax's and TIR's well-formedness, as TVMScript's parser checks a module it built:
    TIR's check lives in s_tir.analysis from 0.27 on, tirx.analysis before."""
    if not well_formed(mod):
        return False
    tvm_module = tvm()
    checkers = [getattr(getattr(tvm_module, name, None), "analysis", None)
                for name in ("s_tir", "tirx")]
    for analysis in checkers:
        verify = getattr(analysis, "verify_well_formed", None)
        if verify is not None:
            return bool(verify(mod, assert_mode=False))
    return True


# ---- reading Relax nodes the same way on every release (0.27 renamed their fields) -------

def expr_type(expr):
    """An expression's (or var's) type: `ty` from 0.27 on, `struct_info` before."""
    return expr.ty if hasattr(expr, "ty") else expr.struct_info


def constant_tensors(func) -> list:
    """The tensors of a Relax function's constants, in visiting order (read only: a visitor,
    not a mutator, so nothing is normalized)."""
    found = []

    def visit(expr):
        tensor = tensor_of(expr)
        if tensor is not None:
            found.append(tensor)
    tvm().relax.analysis.post_order_visit(func.body, visit)
    return found


def tensor_of(expr):
    """The tensor of a constant expression; None for any other expression, and for a
    constant holding another literal (a dtype)."""
    if type(expr).__name__ not in ("Constant", "GenericConst"):   # 0.27: GenericConst
        return None
    return constant_tensor(expr)


def has_type(expr) -> bool:
    """Has normalization given this Relax expression its type yet? One built by hand has
    none until a BlockBuilder normalizes it, which fills it in place: the guard must not
    be the one that does (a test's Normalize then sees other types than unguarded).
    0.27: `ty` is the bare `ir.Type` (Type::Missing) until then; before: `struct_info_`
    is None. Nodes without either (an Op, a GlobalVar) count as typed."""
    if hasattr(expr, "ty"):
        ty = expr.ty
        return ty is None or ty.__tvm_ffi_type_info__.type_key != "ir.Type"
    return not hasattr(expr, "struct_info_") or expr.struct_info_ is not None


def return_type(func):
    """A relax function's return type: `ret_ty` from 0.27 on, `ret_struct_info` before."""
    return func.ret_ty if hasattr(func, "ret_ty") else func.ret_struct_info


def var_name(var) -> str:
    """A relax var's name: `name` from 0.27 on, `name_hint` before."""
    return var.name if hasattr(var, "name") else var.name_hint


def constant_data(const):
    """A constant's payload: `value` of 0.27's GenericConst, `data` of relax.Constant before
    (always a tensor there; from 0.27 on not always: see constant_tensor)."""
    return const.value if hasattr(const, "value") else const.data


def constant_tensor(const):
    """A constant's tensor, or None when it holds another literal. From 0.27 on one node
    type, GenericConst, carries every literal: VM lowering (CallTIRRewrite, VMShapeLower...)
    writes `R.dtype("float32")` as a GenericConst holding a dtype. Before, such literals
    had nodes of their own (DataTypeImm) and a relax.Constant always held a tensor."""
    payload = constant_data(const)
    return payload if isinstance(payload, _tensor_type()) else None


def _tensor_type():
    """The runtime tensor class: `tvm.runtime.Tensor`, `NDArray` before tvm-ffi renamed it."""
    runtime = tvm().runtime
    return getattr(runtime, "Tensor", None) or runtime.NDArray


def with_function(mod, global_var, func):
    """A shallow copy of `mod` with `global_var` bound to `func` (the original untouched)."""
    copy = tvm().IRModule(dict(mod.functions_items()), attrs=mod.attrs,
                          global_infos=mod.global_infos)
    copy[global_var] = func
    return copy

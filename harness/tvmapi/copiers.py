"""The ways a module is copied: deepcopy (TVM's is save_json + load_json), JSON, TVMScript."""
from __future__ import annotations

import concurrent.futures
import copy

from harness.tvmapi.loading import tvm
from harness.verdict import first_line


def save_json(obj) -> str:
    return tvm().ir.save_json(obj)


def load_json(text: str):
    return tvm().ir.load_json(text)


def deepcopy(obj):
    return copy.deepcopy(obj)


def tvmscript(mod) -> str:
    """The module as TVMScript that parses back (`show_meta` carries the constants)."""
    return mod.script(show_meta=True)


_parser_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tvmscript")


def parse_tvmscript(text: str):
    """`tvm.script.from_source(text)`, on a thread of its own: the parser keeps the stack it
    was called from (`inspect.stack()` in `I.ir_module`, freed only by the cycle collector),
    and from a pass instrument that stack holds the pass's input, which a copy-on-write
    pass would then copy instead of changing in place (the suite guard must not)."""
    return _parser_thread.submit(tvm().script.from_source, text).result()


class CopierUnsupported(Exception):
    """This copier cannot carry this module (a construct it cannot print or parse)."""


def tvmscript_copy(mod):
    """Print to TVMScript and parse back, the tensor constants bound outside the text.

    The copier's job is the IR text; the constants' bytes are JSON's (show_meta prints
    them as a JSON metadata section: measured 5.1 s of yolov3-tiny's and 19.8 s of
    light_resnet50's check). Each relax function's non-scalar constants become extra
    parameters (`_harness_constant_N`) before printing and are bound back, the same
    objects, after parsing (Function.bind_params); scalars stay in the text, where the
    printer writes them inline. A copy that then differs from the original is checked
    again by `tvmscript_copy_with_meta` (`tvmscript_copy.confirm`), the whole module
    printed, so a difference is reported only as plain TVMScript shows it."""
    lifted, constants = _lift_constants(mod)
    if not constants:
        return tvmscript_copy_with_meta(mod)
    try:
        text = lifted.script(show_meta=False)
    except Exception as exc:
        raise CopierUnsupported(f"TVMScript cannot print it: {first_line(exc)[:300]}") from exc
    try:
        parsed = parse_tvmscript(text)
    except Exception as exc:
        raise CopierUnsupported(
            f"TVMScript cannot parse its own text: {first_line(exc)[:300]}") from exc
    return _bind_constants(parsed, constants)


def _lift_constants(mod):
    """(mod with each relax function's non-scalar constants as trailing parameters,
    {function name: {parameter name: the Constant}})."""
    relax = tvm().relax
    from tvm.relax.expr_functor import PyExprMutator, mutator

    @mutator
    class Lift(PyExprMutator):
        def __init__(self):
            super().__init__()
            self.found = {}       # id of a Constant -> its parameter (shared uses: one)
            self.params, self.by_name = [], {}

        def visit_constant_(self, op):
            # 0.27: GenericConst(value, ty); before: Constant(data, struct_info)
            data = op.value if hasattr(op, "value") else op.data
            if len(data.shape) == 0:
                return op
            key = op.__hash__()
            if key not in self.found:
                name = f"_harness_constant_{len(self.params)}"
                var = relax.Var(name, op.ty if hasattr(op, "ty") else op.struct_info)
                self.found[key], self.by_name[name] = var, op
                self.params.append(var)
            return self.found[key]

        visit_generic_const_ = visit_constant_   # 0.27's name: relax.Constant is GenericConst

    out, constants = mod, {}
    for global_var, func in mod.functions_items():
        if not isinstance(func, relax.Function):
            continue
        lift = Lift()
        body = lift.visit_expr(func.body)
        if not lift.params:
            continue
        returns = func.ret_ty if hasattr(func, "ret_ty") else func.ret_struct_info  # 0.27: ret_ty
        out = _updated(out, global_var, relax.Function(
            list(func.params) + lift.params, body, returns, func.is_pure, func.attrs,
            func.span))
        constants[global_var.name_hint] = lift.by_name
    return out, constants


def _updated(mod, global_var, func):
    """A shallow copy of `mod` with `global_var` bound to `func` (the original untouched)."""
    copy = tvm().IRModule(dict(mod.functions_items()), attrs=mod.attrs,
                          global_infos=mod.global_infos)
    copy[global_var] = func
    return copy


def _bind_constants(mod, constants: dict):
    for global_var, func in mod.functions_items():
        by_name = constants.get(global_var.name_hint)
        if by_name:
            mod = _updated(mod, global_var, func.bind_params(
                {param: by_name[_name(param)] for param in func.params
                 if _name(param) in by_name}))
    return mod


def _name(var) -> str:
    return var.name if hasattr(var, "name") else var.name_hint    # 0.27: Var.name


def tvmscript_copy_with_meta(mod):
    """Print the whole module to TVMScript (constants in its JSON metadata section: without
    show_meta they are not printed at all and the text does not parse) and parse it."""
    try:
        text = tvmscript(mod)
    except Exception as exc:
        raise CopierUnsupported(f"TVMScript cannot print it: {first_line(exc)[:300]}") from exc
    try:
        return parse_tvmscript(text)
    except Exception as exc:
        raise CopierUnsupported(
            f"TVMScript cannot parse its own text: {first_line(exc)[:300]}") from exc


tvmscript_copy.confirm = tvmscript_copy_with_meta

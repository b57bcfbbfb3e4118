"""Edits of a Relax module's `main` for the Relax-level reducer (harness.reduce.relax_steps).

Each edit returns a new module, or None when it does not apply or its result would not
be well formed (tvm.relax.analysis.well_formed). `main`'s bindings are numbered in order
across its blocks; the module's size is their count, and the elements of the constants
that print in the metadata section (not the scalars TVMScript writes inline) break ties.

- `cut(mod, i)`: main ends at binding i, whose var becomes the output; later bindings go,
  and dead code elimination removes what the output no longer needs.
- `start_after(mod, i)`: main starts after binding i: every value bound up to i that a
  later binding (or the output) uses becomes a new parameter with its type, and everything
  before goes (binding i's var is one of them: a cut of the whole graph, so the latest
  failing start is found by a binary search).
- `drop(mod, i, by)`: binding i goes; its uses read one of its arguments of the very same
  type (`by="arg"`: a shape-preserving op skipped) or a fresh parameter of its type
  (`by="param"`).
- `constants_to_params(mod, which)`: constants (all, or the `which`-th ones) become
  parameters; `constants_to_zeros(mod)`: zeros of the same shape and dtype (the metadata
  then compresses to a run of `A`s).

Parameters nothing uses any more are removed (the number of inputs, `num_input`, follows).
Only `main` is edited; functions it no longer calls go with dead code elimination.
"""
from __future__ import annotations

import functools
import os

from harness import classify
from harness.tvmapi import copiers
from harness.tvmapi.ir import (
    constant_data,
    expr_type,
    return_type,
    var_name,
    well_formed,
    with_function,
)
from harness.tvmapi.loading import tvm
from harness.tvmapi.structure import structural_equal

MAIN = "main"


# ---- reading a module ------------------------------------------------------------------

load = copiers.load_module_file   # a Relax module file: save_json text or TVMScript


def save(mod, stem: str, form: str = "tvmscript") -> str:
    """Write `mod` to STEM.py (TVMScript, constants in its metadata section) or STEM.json;
    the path written. TVMScript that cannot print the module raises."""
    if form == "json":
        path, text = stem + ".json", copiers.save_json(mod)
    else:
        path, text = stem + ".py", copiers.tvmscript(mod)
    with open(path + ".partial", "w") as handle:
        handle.write(text)
    os.replace(path + ".partial", path)
    return path


def values(const):
    """A constant's values as a numpy array."""
    return constant_data(const).numpy()


def _main(mod):
    relax = tvm().relax
    for gv, func in mod.functions.items():
        if gv.name_hint == MAIN and isinstance(func, relax.Function) \
                and isinstance(func.body, relax.SeqExpr):
            return gv, func
    return None, None


def bindings(mod) -> list:
    _, func = _main(mod)
    if func is None:
        return []
    return [binding for block in func.body.blocks for binding in block.bindings]


def _constant_type():
    t = tvm()
    return getattr(t.ir, "GenericConst", None) or t.relax.Constant


def _shape(const) -> tuple[int, ...] | None:
    shape = getattr(expr_type(const), "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return None
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        return None


def constants(mod) -> list:
    """main's tensor constants of at least one dimension, distinct, in order of use."""
    _, func = _main(mod)
    if func is None:
        return []
    found, seen, kind = [], set(), _constant_type()

    def visit(expr):
        if isinstance(expr, kind) and _shape(expr) and expr.__hash__() not in seen:
            seen.add(expr.__hash__())
            found.append(expr)
    tvm().relax.analysis.post_order_visit(func, visit)
    return found


def size(mod) -> tuple[int, int]:
    """(main's bindings, elements of its constants)."""
    elements = 0
    for const in constants(mod):
        count = 1
        for dim in _shape(const):
            count *= dim
        elements += count
    return len(bindings(mod)), elements


def _op_name(value) -> str:
    op = getattr(value, "op", None)
    name = getattr(op, "name", None) or getattr(op, "name_hint", None)
    return str(name) if name is not None else type(value).__name__


def describe(mod, index: int) -> str:
    """'lv3 = relax.nn.relu' for binding `index`."""
    binding = bindings(mod)[index]
    return f"{var_name(binding.var)} = {_op_name(binding.value)}"


def ops(mod) -> list[str]:
    """The op (or expression kind) each binding of main binds, in order."""
    return [_op_name(binding.value) for binding in bindings(mod)]


# ---- the edits -------------------------------------------------------------------------

class _Key:
    """TVM objects by identity (their `==` may build an expression)."""

    @staticmethod
    def of(obj) -> int:
        return obj.__hash__()


@functools.cache
def _rewriter():
    relax = tvm().relax

    @relax.expr_functor.mutator
    class Rewriter(relax.expr_functor.PyExprMutator):
        """Drops bindings, reads other expressions in place of vars and constants, and
        makes dataflow vars visible outside their block (an output needs that)."""

        def __init__(self, mod, drop, remap, promote, replace_constants):
            super().__init__(mod)
            self.drop, self.remap = drop, remap
            self.promote, self.replace_constants = promote, replace_constants

        def visit_var_binding_(self, binding):
            if _Key.of(binding.var) not in self.drop:
                super().visit_var_binding_(binding)

        def visit_match_cast_(self, binding):
            if _Key.of(binding.var) not in self.drop:
                super().visit_match_cast_(binding)

        def visit_var_(self, op):
            if _Key.of(op) in self.remap:
                return self.visit_expr(self.remap[_Key.of(op)])
            return super().visit_var_(op)

        def visit_dataflow_var_(self, op):
            if _Key.of(op) in self.remap:
                return self.visit_expr(self.remap[_Key.of(op)])
            return super().visit_dataflow_var_(op)

        def visit_dataflow_var_def_(self, var):
            if _Key.of(var) in self.promote:
                return relax.Var(var_name(var), expr_type(var))
            return super().visit_dataflow_var_def_(var)

        def visit_generic_const_(self, op):   # 0.27 on
            if _Key.of(op) in self.replace_constants:
                return self.replace_constants[_Key.of(op)]
            return super().visit_generic_const_(op)

        def visit_constant_(self, op):        # before 0.27
            if _Key.of(op) in self.replace_constants:
                return self.replace_constants[_Key.of(op)]
            return super().visit_constant_(op)
    return Rewriter


def _num_input(func) -> int | None:
    attrs = func.attrs
    if attrs is None or "num_input" not in attrs:
        return None
    return int(attrs["num_input"])


def _rebuild(mod, *, keep: int | None = None, output=None, drop=(), remap=(),
             new_params=(), replace_constants=None):
    """main edited: bindings after `keep` gone and `output` (a bound var) returned, `drop`'s
    bindings gone, uses of each var of `remap` ((var, expr) pairs) reading its expression,
    `new_params` added as inputs, constants replaced (by key); then dead code eliminated
    and unused parameters removed. None when TVM refuses to build the result or it is not
    well formed."""
    t = tvm()
    relax = t.relax
    gv, func = _main(mod)
    if func is None:
        return None
    blocks, body = list(func.body.blocks), func.body.body
    if keep is not None:
        kept, count = [], 0
        for block in blocks:
            if count > keep:
                break
            kept.append(type(block)(list(block.bindings)[:keep + 1 - count]))
            count += len(block.bindings)
        blocks, body = kept, output
    # A dataflow var read outside its block (the new output, or one standing in for a
    # plain var) must become a plain var.
    outside = [body] + [expr for var, expr in remap if not isinstance(var, relax.DataflowVar)]
    promote = {_Key.of(var) for expr in outside for var in relax.analysis.free_vars(expr)
               if isinstance(var, relax.DataflowVar)}
    inputs = _num_input(func)
    params = list(func.params)
    position = len(params) if inputs is None else inputs
    params[position:position] = list(new_params)
    ret_ty = expr_type(body) if keep is not None else return_type(func)
    try:
        draft = relax.Function(params, relax.SeqExpr(blocks, body), ret_ty, func.is_pure,
                               func.attrs, func.span)
        rewriter = _rewriter()(mod, {_Key.of(var) for var in drop},
                               {_Key.of(var): expr for var, expr in remap}, promote,
                               dict(replace_constants or {}))
        edited = rewriter.visit_expr(draft)
        out = relax.transform.DeadCodeElimination()(with_function(mod, gv, edited))
        out = _without_unused_params(out, gv, len(new_params), inputs)
        return out if well_formed(out) else None
    except Exception as exc:  # noqa: BLE001 - TVM refusing the edit: it does not apply
        # a bug of the rewriter's is ours (harness-error: the reducer stops), never "does
        # not apply", which would quietly reduce worse
        classify.raise_if_ours(exc, "reduce")
        return None


def _without_unused_params(mod, gv, added: int, inputs: int | None):
    """main without the parameters nothing reads (one whose type defines a symbolic shape
    stays: other types may refer to it); `num_input` counts the inputs left."""
    t = tvm()
    relax = t.relax
    func = mod[gv]
    used = {_Key.of(v) for v in relax.analysis.free_vars(func.body)}
    params = list(func.params)
    analysis = relax.analysis
    definable = getattr(analysis, "definable_tir_vars_in_type", None) or \
        analysis.definable_tir_vars_in_struct_info
    keep = [p for p in params if _Key.of(p) in used or definable(expr_type(p))]
    if len(keep) == len(params) and not added:
        return mod
    new = relax.Function(keep, func.body, return_type(func), func.is_pure, func.attrs, func.span)
    if inputs is not None:
        now = inputs + added
        kept_keys = {_Key.of(p) for p in keep}
        count = sum(1 for p in params[:now] if _Key.of(p) in kept_keys)
        old = func.attrs["num_input"]
        value = t.tirx.IntImm(old.dtype, count) if hasattr(old, "dtype") else count
        new = new.with_attr("num_input", value)
    return with_function(mod, gv, new)


def _fresh_param(var, name: str | None = None):
    return tvm().relax.Var(name or var_name(var), expr_type(var))


def cut(mod, index: int):
    """main ending at binding `index` (its var the output); None if nothing changes."""
    found = bindings(mod)
    if not 0 <= index < len(found) - 1:
        return None
    return _rebuild(mod, keep=index, output=found[index].var)


def _uses(mod, after: int) -> set[int]:
    """Vars read by the bindings after `after` and by main's output."""
    relax = tvm().relax
    _, func = _main(mod)
    used = set()
    for binding in bindings(mod)[after + 1:]:
        used |= {_Key.of(v) for v in relax.analysis.free_vars(binding.value)}
    used |= {_Key.of(v) for v in relax.analysis.free_vars(func.body.body)}
    return used


def start_after(mod, index: int):
    """main starting after binding `index`: what the rest reads of bindings 0..index
    becomes parameters; None if nothing changes."""
    found = bindings(mod)
    if not 0 <= index < len(found) - 1:
        return None
    used = _uses(mod, index)
    remap, params = [], []
    for binding in found[:index + 1]:
        if _Key.of(binding.var) in used:
            param = _fresh_param(binding.var)
            remap.append((binding.var, param))
            params.append(param)
    if not params:
        return None
    return _rebuild(mod, drop=[b.var for b in found[:index + 1]], remap=remap,
                    new_params=params)


def drop(mod, index: int, by: str = "arg"):
    """Binding `index` gone: its uses read an argument of its exact type (`arg`), or a
    new parameter of its type (`param`); None when there is no such argument."""
    relax = tvm().relax
    found = bindings(mod)
    if not 0 <= index < len(found):
        return None
    binding = found[index]
    var = binding.var
    if by == "arg":
        value = binding.value
        # a call's arguments, a tuple's fields, or the var an alias binding (gv = lv) reads
        args = [value] if isinstance(value, relax.Var) else \
            list(getattr(value, "args", []) or getattr(value, "fields", []) or [])
        same = [a for a in args if isinstance(a, (relax.Var, _constant_type()))
                and structural_equal(expr_type(a), expr_type(var))]
        if not same:
            return None
        replacement, params = same[0], []
    elif by == "param":
        replacement = _fresh_param(var)
        params = [replacement]
    else:
        raise ValueError(f"drop by {by!r}: arg or param")
    return _rebuild(mod, drop=[var], remap=[(var, replacement)], new_params=params)


def constants_to_params(mod, which: list[int] | None = None):
    """main's constants (all, or the `which`-th of `constants(mod)`) as new parameters."""
    found = constants(mod)
    chosen = [found[i] for i in which if 0 <= i < len(found)] if which is not None else found
    if not chosen:
        return None
    _, func = _main(mod)
    taken = {var_name(param) for param in func.params}
    names = (f"c{n}" for n in range(len(taken) + len(found) + 1) if f"c{n}" not in taken)
    params = [tvm().relax.Var(name, expr_type(const))
              for name, const in zip(names, chosen, strict=False)]
    return _rebuild(mod, new_params=params,
                    replace_constants={_Key.of(c): p for c, p in zip(chosen, params,
                                                                       strict=True)})


def constants_to_zeros(mod):
    """main's constants as zeros of their shape and dtype; None if all already are."""
    import numpy as np
    relax = tvm().relax
    replaced = {}
    for const in constants(mod):
        try:
            array = values(const)
        except Exception:  # noqa: BLE001 - a dtype numpy cannot hold: left as it is
            continue
        if not array.any():
            continue
        replaced[_Key.of(const)] = relax.const(np.zeros_like(array))
    if not replaced:
        return None
    return _rebuild(mod, replace_constants=replaced)

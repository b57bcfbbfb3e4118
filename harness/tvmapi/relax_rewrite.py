"""Rebuilding a Relax module's `main` after an edit (harness.tvmapi.relax_edit's edits).

One rebuild for every edit, so each result is made the same way: bindings dropped or
cut, uses of a var reading another expression, dataflow vars made visible where an
output needs them, constants replaced; then dead code elimination, the parameters
nothing reads removed (`num_input` follows), and the result kept only when well formed.
"""
from __future__ import annotations

import functools

from harness.tvmapi.ir import expr_type, return_type, var_name, well_formed, with_function
from harness.tvmapi.loading import tvm

MAIN = "main"
ENTRY_NAMES = (MAIN, "forward")   # a module's entry, by the names frontends give it


def key(obj) -> int:
    """A TVM object by identity (its `==` may build an expression)."""
    return obj.__hash__()


def main_of(mod):
    """(global var, function) the reducer edits: `main`, else `forward` (the entry of a
    relax.frontend.nn export), else the public Relax function with the most bindings; a
    Relax function with a body of blocks, or (None, None). By name first, so an edit that
    shrinks the entry does not move the reducer to another function."""
    relax = tvm().relax
    editable = [(gv, func) for gv, func in mod.functions.items()
                if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr)]
    for name in ENTRY_NAMES:
        for gv, func in editable:
            if gv.name_hint == name:
                return gv, func
    public = [(sum(len(block.bindings) for block in func.body.blocks), gv.name_hint, gv, func)
              for gv, func in editable if func.attrs and "global_symbol" in func.attrs]
    if not public:
        return None, None
    _, _, gv, func = max(public, key=lambda item: (item[0], item[1]))
    return gv, func


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
            if key(binding.var) not in self.drop:
                super().visit_var_binding_(binding)

        def visit_match_cast_(self, binding):
            if key(binding.var) not in self.drop:
                super().visit_match_cast_(binding)

        def visit_var_(self, op):
            if key(op) in self.remap:
                return self.visit_expr(self.remap[key(op)])
            return super().visit_var_(op)

        def visit_dataflow_var_(self, op):
            if key(op) in self.remap:
                return self.visit_expr(self.remap[key(op)])
            return super().visit_dataflow_var_(op)

        def visit_dataflow_var_def_(self, var):
            if key(var) in self.promote:
                return relax.Var(var_name(var), expr_type(var))
            return super().visit_dataflow_var_def_(var)

        def visit_generic_const_(self, op):   # 0.27 on
            if key(op) in self.replace_constants:
                return self.replace_constants[key(op)]
            return super().visit_generic_const_(op)

        def visit_constant_(self, op):        # before 0.27
            if key(op) in self.replace_constants:
                return self.replace_constants[key(op)]
            return super().visit_constant_(op)
    return Rewriter


def _num_input(func) -> int | None:
    attrs = func.attrs
    if attrs is None or "num_input" not in attrs:
        return None
    return int(attrs["num_input"])


def rebuild(mod, *, keep: int | None = None, output=None, drop=(), remap=(),
            new_params=(), replace_constants=None):
    """main edited: bindings after `keep` gone and `output` (a bound var) returned, `drop`'s
    bindings gone, uses of each var of `remap` ((var, expr) pairs) reading its expression,
    `new_params` added as inputs, constants replaced (by key); then dead code eliminated
    and unused parameters removed. None when the result is not well formed. TVM refusing
    to build it raises: the edit (relax_edit's classified call) says it does not apply."""
    relax = tvm().relax
    gv, func = main_of(mod)
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
    promote = {key(var) for expr in outside for var in relax.analysis.free_vars(expr)
               if isinstance(var, relax.DataflowVar)}
    inputs = _num_input(func)
    params = list(func.params)
    position = len(params) if inputs is None else inputs
    params[position:position] = list(new_params)
    ret_ty = expr_type(body) if keep is not None else return_type(func)
    draft = relax.Function(params, relax.SeqExpr(blocks, body), ret_ty, func.is_pure,
                           func.attrs, func.span)
    rewriter = _rewriter()(mod, {key(var) for var in drop},
                           {key(var): expr for var, expr in remap}, promote,
                           dict(replace_constants or {}))
    edited = rewriter.visit_expr(draft)
    out = relax.transform.DeadCodeElimination()(with_function(mod, gv, edited))
    out = _without_unused_params(out, gv, len(new_params), inputs)
    return out if well_formed(out) else None


def _without_unused_params(mod, gv, added: int, inputs: int | None):
    """main without the parameters nothing reads (one whose type defines a symbolic shape
    stays: other types may refer to it); `num_input` counts the inputs left."""
    t = tvm()
    relax = t.relax
    func = mod[gv]
    used = {key(v) for v in relax.analysis.free_vars(func.body)}
    params = list(func.params)
    analysis = relax.analysis
    definable = getattr(analysis, "definable_tir_vars_in_type", None) or \
        analysis.definable_tir_vars_in_struct_info
    kept = [p for p in params if key(p) in used or definable(expr_type(p))]
    if len(kept) == len(params) and not added:
        return mod
    new = relax.Function(kept, func.body, return_type(func), func.is_pure, func.attrs,
                         func.span)
    if inputs is not None:
        now = inputs + added
        kept_keys = {key(p) for p in kept}
        count = sum(1 for p in params[:now] if key(p) in kept_keys)
        old = func.attrs["num_input"]
        value = t.tirx.IntImm(old.dtype, count) if hasattr(old, "dtype") else count
        new = new.with_attr("num_input", value)
    return with_function(mod, gv, new)

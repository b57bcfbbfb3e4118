"""Seeded wrong answers: rewrites that compile and change only the numbers.

Each keeps every shape and type, so nothing but running the module shows it (the
structure, the outcome's signatures and the mutation guard all stay quiet). Loaded by the
tests and, through --inject-pass tests/seeded_answers.py:NAME, by the CLI in a child.
"""
from __future__ import annotations

import copy

import tvm
from tvm import relax


def _rewrite_calls(mod, op_name: str, rebuild):
    """A new module whose calls of `op_name` in `main` are `rebuild(call)`."""
    op = tvm.ir.Op.get(op_name)

    @relax.expr_functor.mutator
    class Rewrite(relax.PyExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            return self.builder_.normalize(rebuild(call)) if call.op.same_as(op) else call

    out = tvm.ir.IRModule(dict(mod.functions.items()), attrs=mod.attrs)
    gv = out.get_global_var("main")
    out[gv] = Rewrite().visit_expr(mod[gv])
    return out


def shift_padding(mod):
    """Every conv2d's padding moved to the bottom/right: the same output shape, the
    window shifted by the top/left padding (a pass that silently changes a conv's
    padding)."""
    def rebuild(call):
        attrs = call.attrs
        top, left, bottom, right = (int(value) for value in attrs.padding)
        if top == left == 0:
            return call
        return relax.op.nn.conv2d(
            call.args[0], call.args[1], strides=[int(v) for v in attrs.strides],
            padding=[0, 0, top + bottom, left + right],
            dilation=[int(v) for v in attrs.dilation], groups=int(attrs.groups),
            data_layout=attrs.data_layout, kernel_layout=attrs.kernel_layout,
            out_layout=attrs.out_layout, out_dtype=attrs.out_dtype)
    return _rewrite_calls(mod, "relax.nn.conv2d", rebuild)


def swap_height_width(mod):
    """Every NCHW -> NHWC permute_dims made NCHW -> NWHC: a layout transform with a wrong
    permutation (square images keep every shape)."""
    def rebuild(call):
        axes = [int(axis) for axis in call.attrs.axes] if call.attrs.axes is not None else []
        if axes != [0, 2, 3, 1]:
            return call
        return relax.op.permute_dims(call.args[0], axes=[0, 3, 2, 1])
    return _rewrite_calls(mod, "relax.permute_dims", rebuild)


def shifting_copier(mod):
    """A copier whose copy has every conv2d's padding moved (a copy that lost the
    numbers of an attrs field, keeping its shape)."""
    return shift_padding(copy.deepcopy(mod))


def _max_to_min(func, _mod, _ctx):
    """A TIR miscompile: every max (ReLU's) computed as min."""
    text = func.script()
    if "T.max(" not in text:
        return func
    return tvm.script.from_source(text.replace("T.max(", "T.min("))


def seed_tir_miscompile(monkeypatch) -> str:
    """Put a pass computing max as min into tvm.compile's TIR pipeline, right after its
    StmtSimplify (pytest's `monkeypatch` undoes it); the pass's name."""
    name = "seeded.MaxToMin"
    miscompile = tvm.tirx.transform.prim_func_pass(_max_to_min, opt_level=0, name=name)
    real = tvm.s_tir.transform.StmtSimplify
    monkeypatch.setattr(tvm.s_tir.transform, "StmtSimplify",
                        lambda *args: tvm.transform.Sequential([real(*args), miscompile]))
    return name

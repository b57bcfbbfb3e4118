#!/usr/bin/env python3
"""Reproducer: a Relax binary op with a bool LHS and a non-bool RHS is inferred bool, but it
computes (and legalizes to) the other operand's dtype.

Seen:        python -m harness fuzz --generator ops, triaging floor_divide(int64, bool) (error
             at stage zero-pipeline, pass LegalizeOps): struct-info inference accepts a bool
             operand next to any dtype. With the bool on the LHS, R.add(mask, x) (mask bool, x
             float32) is inferred R.Tensor((2,), "bool"); LegalizeOps lowers it to a call_tir
             whose output is float32, so main's return type changes from bool to float32 (the
             VM returns float32 [1.5, 2.0]), and an op after it that needs the inferred bool
             (R.logical_not) no longer legalizes.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferBinaryArithOpOutDtype (src/relax/op/op_common.h) exempts a bool operand from
             the same-dtype rule (apache/tvm#18328, "Fixing datatype error for gpt-2") but
             still returns the LHS dtype; TIR promotes the bool operand to the other dtype.
Run:         python binary_op_bool_lhs_inferred_dtype.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later


def dtype_of(expr):
    found = getattr(expr, "ty", None)
    return str((found if found is not None else expr.struct_info).dtype)


mask = relax.Var("mask", annotation((2,), "bool"))
x = relax.Var("x", annotation((2,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [mask, x]):
    try:
        out = builder.emit(relax.op.add(mask, x))
    except Exception as exc:  # noqa: BLE001 - an inference that refuses mixed dtypes is a fix
        print(f"does not reproduce: inference refuses add(bool, float32): {type(exc).__name__}")
        sys.exit(0)
    builder.emit_func_output(out)
module = builder.get()
inferred = dtype_of(module["main"].body.body)
legalized = dtype_of(relax.transform.LegalizeOps()(module)["main"].body.body)
if inferred != legalized:
    print(f"reproduces: add(bool, float32) is inferred {inferred}, legalized to {legalized}")
    sys.exit(1)
print(f"does not reproduce: add(bool, float32) is inferred and legalized {inferred}")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: LegalizeOps lowers R.mean of an int32 tensor to an int64 result (inferred int32).

Seen:        error at stage zero-pipeline, pass LegalizeOps: "TypeError: Binary operators must
             have the same datatype for both operands.  However, R.atan2(x0, lv) uses datatype
             T.int32 on the LHS ..., and datatype T.int64 on the RHS" in python -m harness fuzz
             --generator ops --seed 58 (lv = R.mean(x0 int32), inferred int32, then
             R.atan2(x0, lv): after legalization the mean is int64 and re-inference refuses).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the legalization (python/tvm/relax/transform/legalize_ops/statistical.py, _te_mean)
             divides the sum by the product of the reduced extents, an int64 TIR expression
             (shape dims are int64), so TIR promotes an int8/int16/int32 sum to int64; inference
             (InferTypeStatistical) keeps the input dtype. variance (through _te_mean) too.
Run:         python legalize_mean_int_dtype_widened.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
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


x = relax.Var("x", annotation((2, 3), "int32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    out = builder.emit(relax.op.mean(x, axis=[1]))
    builder.emit_func_output(out)
module = builder.get()
inferred = dtype_of(module["main"].body.body)
legalized = dtype_of(relax.transform.LegalizeOps()(module)["main"].body.body)
if inferred != legalized:
    print(f"reproduces: mean(int32 x, axis=[1]) is inferred {inferred}, legalized to {legalized}")
    sys.exit(1)
print(f"does not reproduce: mean(int32 x, axis=[1]) is inferred and legalized {inferred}")
sys.exit(0)

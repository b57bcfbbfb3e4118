#!/usr/bin/env python3
"""Reproducer: LegalizeOps lowers R.eye_like(x, dtype=...) with x's dtype, not the dtype asked for.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "TypeError: Binary operators must
             have the same datatype for both operands. However, R.atan2(lv1, x2) uses datatype
             T.float32 on the LHS ..." in python -m harness fuzz --generator ops --seed 41
             (R.eye_like(x float32, 0, dtype="int64"), inferred int64, then R.atan2 with an
             int64 tensor: after legalization the eye is float32 and re-inference refuses).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the legalization (python/tvm/relax/transform/legalize_ops/create.py, _eye) takes
             dtype = x's dtype for eye_like and never reads call.attrs.dtype, which inference
             (InferTypeEyeLike) honours.
Run:         python legalize_eye_like_dtype_ignored.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
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


x = relax.Var("x", annotation((2, 2), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    out = builder.emit(relax.op.eye_like(x, 0, dtype="int64"))
    builder.emit_func_output(out)
module = builder.get()
inferred = dtype_of(module["main"].body.body)
legalized = dtype_of(relax.transform.LegalizeOps()(module)["main"].body.body)
if inferred != legalized:
    print(f"reproduces: eye_like(float32 x, dtype=int64) is inferred {inferred}, legalized to {legalized}")
    sys.exit(1)
print(f"does not reproduce: eye_like(float32 x, dtype=int64) is inferred and legalized {inferred}")
sys.exit(0)

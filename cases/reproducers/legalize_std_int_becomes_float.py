#!/usr/bin/env python3
"""Reproducer: LegalizeOps computes std of an int tensor in float32 where inference says int:
the result type changes.

Seen:        error at stage compile, pass LegalizeOps: "TypeError: ScatterElements op
             requires the input indices to have integer dtype. However, the given indices
             dtype is T.float32" in python -m harness fuzz --generator ops --path compile,
             seed 115 (R.std of a (1,) int64 tensor used as scatter_elements' indices: int64
             by inference, float32 once legalized).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       python/tvm/relax/transform/legalize_ops/statistical.py:144 at 5d4dc87213:
             std legalizes to topi.sqrt(_te_variance(...)), and the square root of an int
             tensor is float32; InferTypeStatistical keeps the input's dtype. numpy.std and
             torch.std (float only) of ints give a float.
Run:         python legalize_std_int_becomes_float.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((2, 3), "int64"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    builder.emit_func_output(builder.emit(relax.op.std(x, axis=[1])))
module = builder.get()


def returned_dtype(mod):
    function = mod["main"]
    returned = getattr(function, "ret_struct_info", None) or function.ret_ty   # 0.25 | later
    return str(returned.dtype)


inferred = returned_dtype(module)
legalized = returned_dtype(relax.transform.LegalizeOps()(module))
if inferred != legalized:
    print(f"reproduces: std of an int64 tensor is inferred {inferred} and legalized to "
          f"{legalized}")
    sys.exit(1)
print(f"does not reproduce: std of an int64 tensor is {inferred} both inferred and legalized")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: Relax inference accepts R.where whose branches are bool and another dtype (it
infers the x1 dtype), but LegalizeOps refuses it: "x and y must have the same dtype".

Seen:        error at stage zero-pipeline, pass LegalizeOps: "InternalError: Check failed:
             x->dtype == y->dtype (T.float32 vs. T.bool) : x and y must have the same dtype:
             T.float32 vs T.bool" in python -m harness fuzz --generator ops --seed 31
             (shrunk: lv = R.less(x, x); R.where(lv, x, lv), x float32).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the where inference (src/relax/op/tensor/search.cc, InferTypeWhere) takes its
             dtype from InferBinaryArithOpOutDtype (src/relax/op/op_common.h), which exempts a
             bool operand from the same-dtype rule (apache/tvm#18328) and returns the LHS
             dtype; topi.where (include/tvm/topi/transform.h) requires equal dtypes and does
             not promote, so every such where fails to lower, whichever side is bool.
Run:         python legalize_where_bool_branch.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
cond = relax.Var("cond", annotation((2,), "bool"))
x = relax.Var("x", annotation((2,), "float32"))
mask = relax.Var("mask", annotation((2,), "bool"))
builder = relax.BlockBuilder()
with builder.function("main", [cond, x, mask]):
    try:
        out = builder.emit(relax.op.where(cond, x, mask))   # inferred R.Tensor((2,), "float32")
    except Exception as exc:  # noqa: BLE001 - an inference that refuses mixed dtypes is a fix
        print(f"does not reproduce: inference refuses where(bool, float32, bool): {type(exc).__name__}")
        sys.exit(0)
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: where(bool, float32, bool) legalizes")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: LegalizeOps fails on argmax (and argmin) of a 0-d tensor.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "InternalError: Check failed:
             ndim != 0 (0 vs. 0) : Cannot reduce a 0 dim Tensor" in python -m harness fuzz
             --generator ops (R.argmax of a 0-d float32 tensor, which struct-info inference
             accepts as a 0-d int64 tensor; numpy.argmax and torch.argmax of a scalar give 0).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       topi's index reductions refuse a 0-d tensor (include/tvm/topi/reduction.h,
             CommReduceIdx: ICHECK_NE(ndim, 0)), where the value reductions (CommReduce, a few
             lines above: sum, max, min, prod) return the identity for ndim 0. R.max of the
             same tensor legalizes.
Run:         python legalize_argmax_0d.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    out = builder.emit(relax.op.argmax(x))   # inferred R.Tensor((), "int64")
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: argmax of a 0-d tensor legalizes")
sys.exit(0)

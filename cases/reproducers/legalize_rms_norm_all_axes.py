#!/usr/bin/env python3
"""Reproducer: LegalizeOps fails on nn.rms_norm normalizing over every axis (1-D data).

Seen:        error at stage zero-pipeline, pass LegalizeOps: "InternalError: Check failed:
             shape.size() == indices.size() (1 vs. 0) : Tensor dimension mismatch in read
             ndim = 1, indices.size=0" in python -m harness fuzz --generator ops
             (R.nn.rms_norm of a (4,) tensor with a (4,) weight, axes=[-1]).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       include/tvm/topi/nn/rms_norm.h sums the squares with atleast1d=true, so with
             every axis reduced square_sum has shape (1,), then reads it with the (empty)
             list of non-reduced indices.
Run:         python legalize_rms_norm_all_axes.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((4,), "float32"))
weight = relax.Var("weight", annotation((4,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [data, weight]):
    out = builder.emit(relax.op.nn.rms_norm(data, weight, axes=[-1]))   # inferred (4,)
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: rms_norm over every axis legalizes")
sys.exit(0)

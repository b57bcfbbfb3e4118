#!/usr/bin/env python3
"""Reproducer: LegalizeOps fails on nn.adaptive_avg_pool1d with its default output_size.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "TypeError: Cannot convert from
             type `ir.IntImm` to `Array<ir.Expr>`" in python -m harness fuzz --generator ops
             (19 of 24 random applications TVM's inference accepted: every one without an
             output_size).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       with output_size None the legalization (python/tvm/relax/transform/legalize_ops/
             nn.py, te_adaptive_avg_pool1d) defaults it to data.shape[idx_W], one IntImm, where
             topi.nn.adaptive_pool1d takes a list; the 2-D and 3-D ones build a tuple.
Run:         python legalize_adaptive_avg_pool1d_default_output_size.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((1, 4, 8), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [data]):
    out = builder.emit(relax.op.nn.adaptive_avg_pool1d(data))   # output_size=None: (1, 4, 8)
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: adaptive_avg_pool1d without output_size legalizes")
sys.exit(0)

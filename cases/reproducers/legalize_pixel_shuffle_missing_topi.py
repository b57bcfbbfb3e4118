#!/usr/bin/env python3
"""Reproducer: LegalizeOps cannot lower nn.pixel_shuffle: tvm.topi.nn has no pixel_shuffle.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "AttributeError: module
             'tvm.topi.nn' has no attribute 'pixel_shuffle'" on every program of
             python -m harness fuzz --generator ops that applies R.nn.pixel_shuffle
             (7 of 7 random applications TVM's inference accepted).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the legalization (python/tvm/relax/transform/legalize_ops/nn.py) calls
             topi.nn.pixel_shuffle, defined in python/tvm/topi/nn/pixel_shuffle.py, which
             python/tvm/topi/nn/__init__.py never imports.
Run:         python legalize_pixel_shuffle_missing_topi.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
if not hasattr(relax.op.nn, "pixel_shuffle"):
    print("cannot run here: this TVM has no relax.op.nn.pixel_shuffle")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((1, 8, 3, 3), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [data]):
    out = builder.emit(relax.op.nn.pixel_shuffle(data, 2))   # inferred (1, 2, 6, 6)
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: pixel_shuffle legalizes")
sys.exit(0)

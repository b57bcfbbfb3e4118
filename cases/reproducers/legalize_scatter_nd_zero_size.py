#!/usr/bin/env python3
"""Reproducer: LegalizeOps divides by zero lowering scatter_nd on a tensor with a 0-length axis.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "InternalError: Check failed:
             pb->value != 0 (0 vs. 0) : Divide by zero" on tv-swin3d_t-onnx (torchvision's
             swin3d_t through torch.onnx.export: its shifted-window masks are built with
             ScatterND over (28, 21, 0) tensors). The same model through the PyTorch
             frontend (tv-swin3d_t) has no such op and passes.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the scatter_nd legalization divides by the product of the updates' trailing
             extents, 0 here.
Run:         python legalize_scatter_nd_zero_size.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((2, 3, 0), "float32"))
indices = relax.Var("indices", annotation((2, 1), "int64"))
updates = relax.Var("updates", annotation((2, 3, 0), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [data, indices, updates]):
    out = builder.emit(relax.op.scatter_nd(data, indices, updates, "update"))
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: scatter_nd over a zero-size tensor legalizes")
sys.exit(0)

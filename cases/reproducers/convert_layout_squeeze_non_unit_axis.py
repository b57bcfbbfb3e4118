#!/usr/bin/env python3
"""Reproducer: ConvertLayout fails on squeeze along an axis of length 2, which inference
keeps as a no-op ("Cannot operate on an undefined bijective layout").

Seen:        error at stage convert-layout, pass ConvertLayout: "InternalError: Check failed:
             (defined()) is false: Cannot operate on an undefined bijective layout." in python
             -m harness fuzz --generator ops --path compile --seed 13 (R.squeeze(x, axis=[0])
             of a (2,) float32 tensor, with any desired layout for conv2d).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferTypeSqueeze (src/relax/op/tensor/manipulate.cc:1271 at 5d4dc87213) skips an
             axis whose length is not 1, as torch.squeeze does, so the result keeps it: (2,).
             InferLayoutSqueeze (the same file, line 1345) marks every axis given as removed,
             whatever its length, and lays the result out with one axis fewer than it has:
             none here, the undefined layout.
Run:         python convert_layout_squeeze_non_unit_axis.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((2,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    with builder.dataflow():
        kept = builder.emit_output(relax.op.squeeze(x, axis=[0]))   # inferred (2,): a no-op
    builder.emit_func_output(kept)
try:
    relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(builder.get())
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: ConvertLayout raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: ConvertLayout accepts a squeeze that inference kept as a no-op")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: ConvertLayout fails on split into one section ("Invalid Call").

Seen:        error at stage convert-layout, pass ConvertLayout: "InternalError: Check failed:
             (out_tuple != nullptr) is false: Invalid Call" in python -m harness fuzz
             --generator ops (R.split(x, indices_or_sections=1) of a (1,) float32 tensor,
             with any desired layout for conv2d).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferTypeSplit (src/relax/op/tensor/manipulate.cc:1146) types a split into one
             section as the input tensor, not a 1-tuple; InferLayoutSplit (the same file,
             line 1213) then requires a tuple output and refuses the call. torch.split and
             numpy.split into one section give a 1-tuple / a list of one.
Run:         python convert_layout_split_one_section.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((4, 6), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    with builder.dataflow():
        part = builder.emit(relax.op.split(x, indices_or_sections=1, axis=1))
        out = builder.emit_output(part)
    builder.emit_func_output(out)
try:
    relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(builder.get())
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: ConvertLayout raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: ConvertLayout accepts a split into one section")
sys.exit(0)

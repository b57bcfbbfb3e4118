#!/usr/bin/env python3
"""Reproducer: ConvertLayout fails on a reduction of a full reduction ("can't find u").

Seen:        error at stage convert-layout, pass ConvertLayout: "InternalError: Check failed:
             (res != std::string::npos) is false: Invalid SLayout:can't find u in source
             layout" in python -m harness fuzz --generator ops --path compile --seed 2
             (R.std of R.max of a (1,) float32 tensor, with any desired layout for conv2d).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       SLayout's string constructor (src/s_tir/data_layout.cc:124 at 5d4dc87213)
             returns early for the empty name, the scalar layout, before `data_` is set
             (line 215): SLayout("") is the undefined layout, named "__undef__".
             InferLayoutStatistical (src/relax/op/tensor/statistical.cc:150) gives a reduction
             over every axis the layout SLayout(""), and the next statistical op reads
             "__undef__" as a layout name (TransposeSubLayoutStrLike,
             src/relax/transform/infer_layout_utils.cc:46) and fails on its 'u'. Reducing a
             0-d input works: its initial layout is a defined empty one.
Run:         python convert_layout_reduction_of_full_reduction.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((2, 3), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    with builder.dataflow():
        total = builder.emit(relax.op.sum(x))             # every axis: a 0-d tensor
        out = builder.emit_output(relax.op.sum(total))    # sum of that scalar
    builder.emit_func_output(out)
try:
    relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(builder.get())
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: ConvertLayout raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: ConvertLayout accepts a sum of a full sum")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: FuseTIR fails on index_tensor whose indices an elementwise op computes
("Check failed: (func_info_.global_name != "fused")").

Seen:        error at stage zero-pipeline, pass FuseTIRInner: "InternalError: Check failed:
             (func_info_.global_name != "fused") is false" in python -m harness fuzz
             --generator ops, seed 1 on 0.25.0 (R.index_tensor(x, (R.abs(x),)) of a (1, 1)
             int64 tensor); the same module fails on 0.26.0 and 0.27.0.post1.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       FuseOps groups the elementwise op with index_tensor, whose indices are a tuple;
             FuseTIR (src/relax/transform/fuse_tir.cc:977 at 5d4dc87213) then builds the
             group's PrimFunc with no call_tir merged into it: the fused name is still the
             initial "fused" (line 1044; each merged call_tir appends its name, line 702).
             x[x] and abs(x)[x] compile, and so does take(x, abs(x)).
Run:         python fuse_tir_index_tensor_computed_indices.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((3,), "int64"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    with builder.dataflow():
        indices = builder.emit(relax.op.abs(x))
        out = builder.emit_output(relax.op.index_tensor(x, relax.Tuple([indices])))
    builder.emit_func_output(out)
try:
    with tvm.transform.PassContext(opt_level=3):
        relax.get_pipeline("zero")(builder.get())
except Exception as exc:  # noqa: BLE001 - the pipeline's failure is what this reproduces
    print(f"reproduces: the zero pipeline raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: x[abs(x)] fuses and lowers")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: dlight's ApplyDefaultSchedule mutates its input IRModule in place.

Seen:        mutated at stage compile, pass ApplyDefaultSchedule: the pass guard saw a function
             of the pass's input rebound in place (python -m harness check conv-reshape-concat
             --path compile --target cuda; tvm.compile's GPU pipeline runs dlight)
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       python/tvm/s_tir/dlight/base/transform.py, ApplyDefaultSchedule.transform_module:
             `mod[g_var] = func` on the module it was given, instead of on a copy: every
             holder of that module sees the scheduled PrimFunc (with tirx.is_scheduled).
Run:         python dlight_apply_default_schedule_mutates_input.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax
    try:
        from tvm.s_tir import dlight as dl
    except ImportError:   # older trees
        from tvm import dlight as dl
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

# x + 1 over 64 floats, legalized: one PrimFunc for dlight to schedule (built with the
# BlockBuilder, which every release spells the same; TVMScript's TIR syntax differs).
annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
builder = relax.BlockBuilder()
x = relax.Var("x", annotation((64,), "float32"))
with builder.function("main", [x]):
    with builder.dataflow():
        out = builder.emit_output(builder.emit(relax.op.add(x, relax.const(1.0, "float32"))))
    builder.emit_func_output(out)
module = relax.transform.LegalizeOps()(builder.get())

before = tvm_ffi.structural_hash(module)
with tvm.target.Target({"kind": "cuda"}):   # no GPU needed: only the schedule is applied
    dl.ApplyDefaultSchedule(dl.gpu.Fallback())(module)
if tvm_ffi.structural_hash(module) != before:
    print("reproduces: ApplyDefaultSchedule rebound a PrimFunc in the module it was given")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

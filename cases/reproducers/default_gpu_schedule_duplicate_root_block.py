#!/usr/bin/env python3
"""Reproducer: s_tir.DefaultGPUSchedule refuses every PrimFunc whose root block holds more
than one loop nest: "Duplicated block name root in function softmax not supported!".

Seen:        the pass sweep on a GPU target (python -m harness passes conv-reshape-concat
             --target cuda --pass 's_tir.DefaultGPUSchedule'; also metal, opencl, webgpu,
             vulkan, rocm): a legalized conv2d, softmax, silu or rms_norm. No GPU needed.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       WrapBareSBlockBody (src/s_tir/transform/default_gpu_schedule.cc) takes a root
             block whose body is neither a loop nor a block (here a sequence of loop nests)
             for a bare scalar block, and wraps it in a new block also named "root"; the
             block collector then finds two blocks named root. A single loop nest (relu)
             is not wrapped and is scheduled.
Run:         python default_gpu_schedule_duplicate_root_block.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
    from tvm.s_tir.transform import DefaultGPUSchedule
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
TENSOR = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | 0.26 on


def legalized(op):
    """main(x) = op(x), with op lowered to a PrimFunc by LegalizeOps."""
    builder = relax.BlockBuilder()
    x = relax.Var("x", TENSOR((4, 16), "float32"))
    with builder.function("main", [x]):
        with builder.dataflow():
            out = builder.emit_output(builder.emit(op(x)))
        builder.emit_func_output(out)
    return relax.transform.LegalizeOps()(builder.get())


def schedule(module):
    with tvm.target.Target({"kind": "cuda"}):   # no GPU needed: only the schedule is applied
        return DefaultGPUSchedule()(module)


try:
    schedule(legalized(relax.op.nn.relu))   # one loop nest: scheduled
except Exception as exc:  # noqa: BLE001 - without the control the answer means nothing
    print(f"cannot run here: DefaultGPUSchedule refuses a lone relu too: {type(exc).__name__}")
    sys.exit(2)
try:
    schedule(legalized(relax.op.nn.softmax))   # four loop nests in its root block
except Exception as exc:  # noqa: BLE001 - which error it is decides the answer
    said = next((line.strip() for line in str(exc).splitlines() if "Check failed" in line),
                str(exc).strip().splitlines()[-1])
    if "Duplicated block name root" in said:
        print(f"reproduces: relu is scheduled, softmax is refused: {said}")
        sys.exit(1)
    print(f"does not reproduce: softmax fails otherwise: {said}")
    sys.exit(0)
print("does not reproduce: DefaultGPUSchedule schedules the legalized softmax")
sys.exit(0)

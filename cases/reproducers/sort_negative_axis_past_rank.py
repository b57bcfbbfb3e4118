#!/usr/bin/env python3
"""Reproducer: sort / argsort along a negative axis past the rank compile, and the compiled
code reads out of bounds (SIGSEGV on 0.26 and 0.27, garbage on 0.25).

Seen:        triaging python -m harness fuzz --generator ops --path compile (which compiles
             but does not run): R.sort(x, axis=-2) of a (4,) float32 tensor is accepted by
             inference and by tvm.compile; running it kills the process. Along axis 1 the
             runtime refuses ("Axis out of boundary"); topk refuses either at inference.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferTypeSort (src/relax/op/tensor/sorting.cc:56 at 5d4dc87213) checks no axis;
             the CPU kernels tvm.contrib.sort.sort and .argsort
             (src/runtime/extra/contrib/sort/sort.cc:332 and :234) add ndim to a negative
             axis once and check only axis < ndim, so -2 on a 1-d tensor stays -1 and indexes
             the shape out of bounds. topk's kernel (line 477) checks axis >= 0 as well.
Run:         python sort_negative_axis_past_rank.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import os
import sys

try:
    import numpy as np
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((4,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    builder.emit_func_output(builder.emit(relax.op.sort(x, axis=-2)))   # a 1-d tensor
try:
    executable = tvm.compile(builder.get(), target="llvm")
except Exception as exc:  # noqa: BLE001 - refused before running: fixed
    print(f"does not reproduce: tvm.compile refuses it ({type(exc).__name__})")
    sys.exit(0)
sys.stdout.flush()
pid = os.fork()
if pid == 0:   # the run that may kill the process runs in a child
    try:
        machine = relax.VirtualMachine(executable, tvm.cpu())
        values = machine["main"](tvm.runtime.tensor(np.array([3, 1, 2, 0], "float32")))
        print(f"the compiled sort returned {values.numpy()} for [3, 1, 2, 0] along axis -2")
        sys.stdout.flush()
        os._exit(4)
    except Exception as exc:  # noqa: BLE001 - refused at run time, as along axis 1: fixed
        print(f"the run refused it: {type(exc).__name__}: {(str(exc).splitlines() or [''])[-1][:120]}")
        sys.stdout.flush()
        os._exit(0)
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    print(f"reproduces: the compiled sort killed the process (signal {os.WTERMSIG(status)})")
    sys.exit(1)
if os.WEXITSTATUS(status) == 4:
    print("reproduces: the compiled sort ran along an axis the tensor does not have")
    sys.exit(1)
print("does not reproduce: the axis is refused")
sys.exit(0)

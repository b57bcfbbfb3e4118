#!/usr/bin/env python3
"""Reproducer: tirx.transform.NarrowDataType segfaults on any PrimFunc that contains an SBlock.

Seen:        crash (SIGSEGV) in test_block of v0.26.0's
             tests/python/tirx-transform/test_tir_transform_narrow_datatype.py (with or without
             the harness guard); the crash is inside the pass (tvm::ObjectVisitor::VisitExpected)
On:          apache-tvm 0.27.0.post1 (pip wheel, apache-tvm-ffi 0.1.14.post1);
             0.26.0 and 0.25.0 run the same script and return normally
Produced by: python -m pytest tests/python/tirx-transform/test_tir_transform_narrow_datatype.py
             -k test_block, then reduced by hand to one SBlock with one store
Run:         python narrow_datatype_sblock_segfault.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import os
import sys

try:
    import tvm
    from tvm.script import tirx as T

    @T.prim_func(s_tir=True)
    def func(B: T.Buffer((8,), "float32")):
        with T.sblock():
            B[0] = T.float32(1)

    mod = tvm.IRModule.from_expr(func.with_attr("global_symbol", "main"))
    narrow = tvm.tirx.transform.NarrowDataType(32)
except Exception as exc:  # noqa: BLE001 - this TVM cannot build the input: no verdict
    print(f"cannot run here: {type(exc).__name__}: {exc}")
    sys.exit(2)

sys.stdout.flush()
pid = os.fork()
if pid == 0:   # the call that kills the process runs in a child
    try:
        narrow(mod)
    except Exception as exc:  # noqa: BLE001 - raising is acceptable; only a crash is the bug
        print(f"NarrowDataType raised {type(exc).__name__}", flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    print(f"reproduces: NarrowDataType(32) on a PrimFunc with one SBlock killed the process "
          f"(signal {os.WTERMSIG(status)})")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

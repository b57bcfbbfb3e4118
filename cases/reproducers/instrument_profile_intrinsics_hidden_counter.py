#!/usr/bin/env python3
"""Reproducer: s_tir.InstrumentProfileIntrinsics numbers its profile points from a global counter.

Seen:        nondeterministic at stage pass:s_tir.InstrumentProfileIntrinsics (the pass sweep's
             run-twice check): applied twice to the same module it gives two different modules
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness passes conv-reshape-concat --pass 's_tir.*'
             (then reduced by hand to one PrimFunc)
Cause:       the pass hands out `start_profile_intrinsic(id)` ids from a counter that lives
             in the process, not in the pass, so every application continues where the last
             one stopped: the output depends on what ran before (like upstream #17205,
             RealizeVDevice). It runs only when `tirx.instrument_lwp` is set, so the default
             pipelines do not meet it.
Run:         python instrument_profile_intrinsics_hidden_counter.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import re
import sys

try:
    import tvm
    import tvm_ffi
    from tvm.script import ir as I
    from tvm.script import tirx as T
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)


@I.ir_module
class Module:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)


instrument = tvm.s_tir.transform.InstrumentProfileIntrinsics()
first, second = instrument(Module), instrument(Module)
if not tvm_ffi.structural_equal(first, second):
    ids = [re.findall(r"start_profile_intrinsic\((\d+)\)", mod.script()) for mod in (first, second)]
    print(f"reproduces: two applications to the same module differ: profile ids {ids[0]}, "
          f"then {ids[1]}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

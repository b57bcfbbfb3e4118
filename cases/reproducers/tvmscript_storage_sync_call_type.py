#!/usr/bin/env python3
"""Reproducer: TVMScript loses the type and the arity of a tvm_storage_sync call.

Seen:        the pass sweep's `compiled` point on a device-free GPU target (python -m harness
             passes conv-reshape-concat --point compiled --target cuda): the output of
             tirx.ConvertSSA and tirx.LowerWarpMemory on scheduled CUDA TIR does not
             round-trip through TVMScript (access path ...value.ty.dtype).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the passes that insert barriers (s_tir.ThreadSync, LowerThreadAllreduce) build
             Call(int32, tvm_storage_sync, ["shared"]); the printer writes
             T.tvm_storage_sync("shared"), and the parser's T.tvm_storage_sync (tirx/op.py)
             builds call_intrin("void", ..., scope, is_load=False, num_blocks=-1): another
             type and three arguments.
Run:         python tvmscript_storage_sync_call_type.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

tir = tvm.tirx if hasattr(tvm, "tirx") else tvm.tir
# as s_tir.ThreadSync builds it: an int32 call with one argument
sync = tir.call_intrin("int32", f"{tir.__name__.split('.')[-1]}.tvm_storage_sync",
                       "shared")
func = tir.PrimFunc([], tir.Evaluate(sync))
mod = tvm.IRModule({"main": func})
text = mod.script()
copy = tvm.script.from_source(text)
parsed = copy["main"].body.value
if not tvm_ffi.structural_equal(mod, copy):
    print(f"reproduces: {sync} (int32, 1 argument) prints as {text.strip().splitlines()[-1].strip()}"
          f" and parses back as a {(str(parsed.dtype) if hasattr(parsed, 'dtype') else '') or 'void'} call"
          f" with {len(parsed.args)} arguments")
    sys.exit(1)
print("does not reproduce: the call round-trips")
sys.exit(0)

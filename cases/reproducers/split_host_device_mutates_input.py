#!/usr/bin/env python3
"""Reproducer: tirx.SplitHostDevice rebinds functions of its input IRModule in place.

Seen:        mutated at stage suite, pass tirx.SplitHostDevice: a function of the pass's input
             rebound in place (python -m harness guard-suite
             tests/python/tirx-transform/test_tir_transform_split_host_device.py, TVM's own
             tests at v0.26.0: 11 of its tests)
On:          apache-tvm 0.26.0 / apache-tvm-ffi 0.1.14.post1
Cause:       src/tirx/transform/split_host_device.cc, SplitHostDevice's pass function:
             `mod->Update(updates); mod->Update(device_mod);` on the module it was given,
             with no copy-on-write: every holder of that module sees the host function
             split and the kernel added (the same class as tirx.AnnotateEntryFunc).
Run:         python split_host_device_mutates_input.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

# A host function with one device region (TVM's test_split_host_device, v0.26.0).
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def main(n: T.int32):
        T.func_attr({"target": T.target("cuda", host={"kind": "llvm", "opt-level": 0})})
        T.attr(T.target("cuda"), "target", 0)
        T.evaluate(n)
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print(f"cannot run here: the module does not parse on this release: {exc}")
    sys.exit(2)
split = getattr(tvm, "tirx", None) or tvm.tir   # tvm.tir before 0.26

before = tvm_ffi.structural_hash(module)
split.transform.SplitHostDevice()(module)
if tvm_ffi.structural_hash(module) != before:
    print("reproduces: SplitHostDevice changed the module it was given "
          f"(now {len(module.functions)} functions)")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

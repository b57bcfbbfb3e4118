#!/usr/bin/env python3
"""Reproducer: tirx.backend.cuda.LowerIket rebinds functions of its input IRModule in place.

Seen:        mutated at stage suite, pass tirx.backend.cuda.LowerIket: a function of the pass's
             input rebound in place (python -m harness guard-suite
             tests/python/tirx/iket/test_iket_profiler.py, TVM's own tests at v0.26.0:
             test_regular_lowering_strips_annotations_and_tokens and every tvm.compile of an
             annotated kernel with tir_pipeline="tirx")
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       src/backend/cuda/transforms/lower_iket.cc, LowerIketImpl: `module->Update(...)`
             on the module it was given, with no copy-on-write, both when it strips the IKET
             annotations (regular compilation) and when it instruments the kernels (IKET
             enabled): every holder of that module sees the annotations gone (the same class
             as tirx.SplitHostDevice and tirx.AnnotateEntryFunc).
Run:         python lower_iket_mutates_input.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

try:
    from tvm.backend.cuda import transforms as cuda_transforms
    lower_iket = cuda_transforms.LowerIket
except (ImportError, AttributeError) as exc:   # before 0.26: no IKET, no pass
    print(f"cannot run here: this release has no tirx.backend.cuda.LowerIket: {exc}")
    sys.exit(2)

# One IKET mark in an otherwise plain function; IKET is not enabled (no module attribute
# "tirx.iket.enabled", no run-iket environment), so the pass only strips the mark, as
# test_regular_lowering_strips_annotations_and_tokens does (v0.26.0).
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def main(out: T.Buffer((32,), "int32")):
        T.cuda.iket.mark("a")
        out[0] = 1
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print(f"cannot run here: the module does not parse on this release: {exc}")
    sys.exit(2)

before_hash = tvm_ffi.structural_hash(module)
before_main = module["main"]
after = lower_iket()(module)
if tvm_ffi.structural_hash(module) != before_hash or not module["main"].same_as(before_main):
    still_marked = "cuda.iket" in module.script()
    print("reproduces: LowerIket changed the module it was given (its main is now another "
          f"function; the mark is {'still there' if still_marked else 'gone'}; the pass "
          f"returned {'that same module' if after.same_as(module) else 'another module'})")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

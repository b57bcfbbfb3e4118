#!/usr/bin/env python3
"""Reproducer: tirx.AnnotateEntryFunc mutates its input IRModule in place.

Seen:        mutated at stage zero-pipeline, pass tirx.AnnotateEntryFunc (inside FoldConstant's
             nested build): every catalog case whose constants FoldConstant evaluates
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness check Conv2d  (then reduced by hand to one PrimFunc)
Cause:       src/tirx/transform/primfunc_utils.cc: `mod->Update(gvar, WithAttr(...))` on the
             module it was given, with no copy-on-write: every holder of that module sees
             the new `tirx.is_entry_func` attribute. (Under TVM's own
             `testing.immutable_module` check it raises inside FoldConstant's nested
             build, which swallows the error and folds nothing: docs/explanation/findings.md.)
Run:         python annotate_entry_func_mutates_input.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
Workaround:  python annotate_entry_func_mutates_input.py --workaround
             the pass applied to copy.deepcopy(mod): the module you hold stays as it was
             (exit 0: the workaround holds; deepcopy is a JSON round trip, so on tvm-ffi
             0.1.15.x, where that segfaults, it does not)
"""
import copy
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


workaround = "--workaround" in sys.argv[1:]
before = tvm_ffi.structural_hash(Module)
tvm.tirx.transform.AnnotateEntryFunc()(copy.deepcopy(Module) if workaround else Module)
if tvm_ffi.structural_hash(Module) != before:
    print("reproduces: AnnotateEntryFunc added tirx.is_entry_func to its input module in place"
          + (" (with the workaround)" if workaround else ""))
    sys.exit(1)
print("does not reproduce" + (" with the workaround: the module you hold is as it was"
                              if workaround else ""))
sys.exit(0)

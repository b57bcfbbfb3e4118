#!/usr/bin/env python3
"""Reproducer: s_tir.LoopPartition rewrites statements of its input IRModule in place.

Seen:        mutated at stage suite, pass s_tir.LoopPartition: "pass s_tir.LoopPartition changed
             its input: its structural hash changed (an in-place edit)" (python -m harness
             guard-suite, TVM's own tests at v0.26.0:
             tests/python/s_tir/transform/test_s_tir_transform_loop_partition.py, e.g.
             test_loop_partition_unroll_hint, test_loop_partition_recursive_unroll_hint, and
             test_s_tir_transform_compact_buffer_region.py::TestTileAwareCompaction::test_compact;
             16 records)
On:          apache-tvm 0.26.0 and 0.25.0 (apache-tvm-ffi 0.1.14.post1 / 0.1.12); not on
             0.27.0.post1
Cause:       src/s_tir/transform/loop_partition.cc, LoopPartitioner::VisitAndMutate calls
             StmtMutator::operator() again from inside TryPartition (lines 674, 752, 757, 760),
             and operator() (include/tvm/tirx/stmt_functor.h:206-208) sets
             allow_copy_on_write_ = true and never restores the caller's value. After a loop
             nested in another statement is partitioned, the enclosing For/AttrStmt of the
             caller's (shared) module is therefore "copied on write" by
             StmtMutator::CopyOnWrite (stmt_functor.h:242-244: const_cast of the old node) and
             its body is overwritten (src/tirx/ir/stmt_functor.cc:350/354 for a For, :331/333 for
             an AttrStmt) with the partially partitioned body.
Run:         python loop_partition_mutates_input.py
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
    loop_partition = tvm.s_tir.transform.LoopPartition
except AttributeError as exc:   # older releases: tvm.tir.transform.LoopPartition
    print(f"cannot run here: this release has no tvm.s_tir.transform.LoopPartition: {exc}")
    sys.exit(2)

# A loop j with a likely() condition, nested in a loop i. With partition_const_loop (as the
# tests use), j is split into [0, 12) and [12, 16); i itself is not partitioned.
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
        for i in range(4):
            for j in range(16):
                if T.likely(j < 12):
                    B[i, j] = A[i, j]
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print(f"cannot run here: the module does not parse on this release: {exc}")
    sys.exit(2)

before_copy = tvm.ir.load_json(tvm.ir.save_json(module))
before_hash = tvm_ffi.structural_hash(module)
before_main = module["main"]
before_outer_loop = before_main.body          # the For i the caller still holds
before_inner_loop = before_outer_loop.body    # the For j

try:
    with tvm.transform.PassContext(
        config={"s_tir.LoopPartition": {"partition_const_loop": True}}
    ):
        after = loop_partition()(module)
except Exception as exc:  # noqa: BLE001 - pass or config missing/different here
    print(f"cannot run here: LoopPartition did not run: {exc}")
    sys.exit(2)

if tvm_ffi.structural_hash(module) != before_hash:
    mismatch = tvm_ffi.get_first_structural_mismatch(before_copy, module)
    print("reproduces: LoopPartition changed the module it was given; first mismatch "
          f"(before copy, input after the pass): {mismatch}")
    print(f"  the caller's main is still the same function object: "
          f"{module['main'].same_as(before_main)}; its For i is the same object: "
          f"{module['main'].body.same_as(before_outer_loop)}; that For's body is still the "
          f"original For j: {before_outer_loop.body.same_as(before_inner_loop)}")
    print(f"  the pass returned {'that same module' if after.same_as(module) else 'another module'}")
    print("input main after the pass:")
    print(module["main"].script())
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: TVMScript turns a "vthread.x" virtual thread into a real thread_extent.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), passes s_tir.LowerOpaqueBlock,
             tirx.FlattenBuffer, tirx.VectorizeLoop:
             <root>.functions[I.GlobalVar("main")].body.body.attr_key (and
             .body.seq[3].body.attr_key) (python -m harness guard-suite
             tests/python/s_tir/meta_schedule/test_meta_schedule_postproc_verify_gpu_code.py,
             TVM's own tests at v0.26.0 on 0.27.0.post1: test_postproc_check_pass[GmmCuda0])
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured)
Cause:       s_tir.LowerOpaqueBlock lowers T.thread_binding(..., thread="vthread.x") to an
             AttrStmt "virtual_thread" (so do "vthread.y", "vthread.z", "vthread"). The
             printer writes every thread AttrStmt as T.launch_thread("vthread.x", 2) without
             its attr_key, and the parser picks "virtual_thread" only for the exact tag
             "vthread": the copy has "thread_extent", a real GPU thread. The text is the same,
             the module is not, and it lowers differently: InjectVirtualThread expands the
             original and leaves the copy's thread in place (JSON and deepcopy keep the key).
Run:         python tvmscript_launch_thread_vthread_x_becomes_thread_extent.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm.script import tirx as T
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)


@T.prim_func(s_tir=True)
def main(A: T.Buffer((2,), "float32")):
    for vx in T.thread_binding(2, thread="vthread.x"):
        A[vx] = T.float32(0)


module = tvm.s_tir.transform.LowerOpaqueBlock()(tvm.IRModule({"main": main}))
copy = tvm.script.from_source(module.script(show_meta=True))
if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}: attr_key "
          f"{module['main'].body.attr_key!r} in the original, "
          f"{copy['main'].body.attr_key!r} in the copy")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

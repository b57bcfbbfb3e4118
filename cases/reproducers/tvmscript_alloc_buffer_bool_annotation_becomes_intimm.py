#!/usr/bin/env python3
"""Reproducer: TVMScript's T.alloc_buffer turns a bool annotation (True) into T.bool(True).

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass s_tir.LowerThreadAllreduce:
             <root>.functions[I.GlobalVar("main")].body.body.seq[0].annotations["tirx.volatile"]
             (python -m harness guard-suite
             tests/python/s_tir/transform/test_s_tir_transform_lower_thread_all_reduce.py,
             TVM's own tests at v0.26.0 on 0.27.0.post1: 7 tests)
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured)
Cause:       a multi-warp allreduce makes a shared red_result buffer whose AllocBuffer carries
             {"tirx.volatile": True}, a plain bool (lower_thread_allreduce.cc sets `true`;
             StorageRewrite and MergeSharedMemoryAllocations do the same). The printer writes
             annotations={"tirx.volatile": True}, distinct from T.bool(True); the parser's
             alloc_buffer normalizes every Python bool annotation to IntImm("bool", 1), so the
             copy holds T.bool(True) and prints it so. JSON and deepcopy carry the bool exactly.
Run:         python tvmscript_alloc_buffer_bool_annotation_becomes_intimm.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
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
class Before:
    @T.prim_func(private=True, s_tir=True)
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
        T.func_attr({"target": T.target("cuda", host="llvm")})
        threadIdx_x = T.launch_thread("threadIdx.x", 64)   # two warps: needs a shared result
        red = T.alloc_buffer((1,), scope="local")
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.int32(0)):
            T.tvm_thread_allreduce(T.uint32(1), A[threadIdx_x], T.bool(True), red[0], threadIdx_x)
        if threadIdx_x == 0:
            B[0] = red[0]


module = tvm.s_tir.transform.LowerThreadAllreduce()(Before)
text = module.script(show_meta=True)
copy = tvm.script.from_source(text)
mismatch = tvm_ffi.get_first_structural_mismatch(module, copy)
if mismatch is not None and 'annotations["tirx.volatile"]' in str(mismatch[0]):
    original_line = [ln.strip() for ln in text.splitlines() if "tirx.volatile" in ln]
    copy_line = [ln.strip() for ln in copy.script(show_meta=True).splitlines() if "tirx.volatile" in ln]
    print(f"reproduces: the TVMScript copy differs at {mismatch[0]}")
    print(f"  module: {original_line}")
    print(f"  copy:   {copy_line}")
    sys.exit(1)
if mismatch is not None:
    print(f"does not reproduce (the copy differs elsewhere first: {mismatch[0]})")
else:
    print("does not reproduce")
sys.exit(0)

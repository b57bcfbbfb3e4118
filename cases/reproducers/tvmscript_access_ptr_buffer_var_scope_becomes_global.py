#!/usr/bin/env python3
"""Reproducer: TVMScript gives T.tvm_access_ptr of a shared buffer variable a "global" pointer type.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass tirx.StorageRewrite:
             <root>.functions[I.GlobalVar("main")].body.seq[3]...body.value.args[5].ty.storage_scope
             (python -m harness guard-suite
             tests/python/s_tir/meta_schedule/test_meta_schedule_postproc_verify_gpu_code.py,
             TVM's own tests at v0.26.0 on 0.27.0.post1: test_postproc_check_pass[GMMCUDATensorCore],
             the tvm_access_ptr argument of T.tvm_load_matrix_sync)
On:          apache-tvm 0.26.0 and 0.27.0.post1 (measured; 0.25.0 does not reproduce: its
             StorageRewrite writes the pointer variable `A_ptr.data`, not a buffer variable)
Cause:       tirx.StorageRewrite rewrites `T.tvm_access_ptr(..., A.data, ...)` of a shared
             buffer to `T.tvm_access_ptr(..., A, ...)` (the buffer variable itself) and keeps
             the call's type, a pointer to "shared". The printer writes the call without its
             type; the parser's T.tvm_access_ptr takes the pointer's storage scope from its data
             argument only when that is a PointerType, and a buffer variable (BufferType, which
             has storage_scope "shared") gets "global". The text is the same, the module is not
             (JSON and deepcopy carry the type exactly).
Run:         python tvmscript_access_ptr_buffer_var_scope_becomes_global.py
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


@T.prim_func
def main(B: T.Buffer((16,), "float16")):
    A = T.alloc_shared((16,), "float16")
    for i in range(16):
        A[i] = B[i]
    T.evaluate(T.call_extern("int32", "use",
                             T.tvm_access_ptr(T.type_annotation("float16"), A.data, 0, 16, 1)))


module = tvm.tirx.transform.StorageRewrite()(tvm.IRModule({"main": main}))
copy = tvm.script.from_source(module.script(show_meta=True))
if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: the ldg32 call InjectPTXLDG32 makes parses back with the pointer's type.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), output of s_tir.InjectPTXLDG32:
             <root>.functions[I.GlobalVar("main")].body.seq[2].body.seq[4].value.ty
             (test_s_tir_transform_inject_ptx_ldg32.py::test_inject_ptx_ldg32_inserts_alloc_for_no_alloc_func,
             python -m harness guard-suite, TVM's own tests at v0.26.0 on 0.26.0)
On:          apache-tvm 0.26.0 and 0.27.0.post1 (the call's ty: float32 -> T.handle("float32",
             "global")); 0.25.0 (the call's dtype: float32 -> handle)
Cause:       InjectPTXLDG32 builds Call(store->buffer->dtype, ldg32, {store->buffer.data(), ...})
             (src/s_tir/transform/inject_ptx_ldg32.cc:101 @ 5d4dc87213): the call's type is the
             element type, float32. The op has no TScriptDtypePrintLocation
             (src/backend/cuda/op/target_builtin.cc:80), so the printer writes only the arguments,
             `T.s_tir.ldg32(C.data, predicate[0], A[addr[0]], addr[1])` (T.ptx.ldg32 before 0.27),
             and the parser's builder takes the call's type from the first argument,
             `call_intrin(reg.ty, ...)` (python/tvm/backend/cuda/script.py:35): the type of
             C.data, a pointer. Codegen does not read the call's type, so the CUDA source is
             unchanged; the IR is not.
Run:         python tvmscript_ldg32_call_type_becomes_pointer.py
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

# The test's function: an if_then_else load InjectPTXLDG32 turns into an ldg32 call (CUDA target;
# no GPU is needed, only the target's kind).
try:
    @T.prim_func(s_tir=True)
    def where_no_alloc(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tirx.noalias": True, "target": T.target("cuda")})
        for i in range(4):
            C[i] = T.if_then_else(A[i] > T.float32(0), A[i], T.float32(0))

    module = tvm.s_tir.transform.InjectPTXLDG32()(tvm.IRModule.from_expr(where_no_alloc))
except Exception as exc:  # noqa: BLE001 - this release's TVMScript or pass differs
    print(f"cannot run here: {str(exc).strip().splitlines()[-1][:200]}")
    sys.exit(2)


def ldg32_calls(mod):
    calls = []

    def visit(node):
        op = getattr(node, "op", None)
        if isinstance(op, tvm.ir.Op) and op.name.endswith(".ldg32"):
            calls.append(node)

    visitor = getattr(getattr(tvm.tirx, "stmt_functor", None), "post_order_visit", None)
    if visitor is None:  # 0.27: no tvm.tirx.stmt_functor; walk the Evaluate statements by hand
        def walk(stmt):
            for child in getattr(stmt, "seq", None) or []:
                walk(child)
            if hasattr(stmt, "body") and not isinstance(stmt.body, (list, tuple)):
                walk(stmt.body)
            if hasattr(stmt, "value"):
                visit(stmt.value)
        walk(mod["main"].body)
    else:
        visitor(mod["main"].body, visit)
    return calls


def call_type(call):
    ty = getattr(call, "ty", None)
    return str(ty) if ty is not None else str(call.dtype)


originals = ldg32_calls(module)
if len(originals) != 1:
    print(f"cannot run here: InjectPTXLDG32 made {len(originals)} ldg32 calls, expected 1")
    sys.exit(2)
text = module.script(show_meta=True)
try:
    copy = tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the printed text itself is the bug's evidence
    print(f"reproduces: InjectPTXLDG32's output does not parse back: {str(exc).strip().splitlines()[0][:200]}")
    sys.exit(1)
copies = ldg32_calls(copy)
line = next((text_line.strip() for text_line in text.splitlines() if "ldg32(" in text_line), "?")
original_type, copy_type = call_type(originals[0]), call_type(copies[0]) if copies else "(no call)"
if original_type != copy_type or not tvm_ffi.structural_equal(module, copy):
    print(f"reproduces: `{line}` is the ldg32 call of type {original_type} (the stored element); "
          f"parsed back its type is {copy_type}; first difference at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)}")
    sys.exit(1)
print(f"does not reproduce: `{line}` keeps its type {original_type}")
sys.exit(0)

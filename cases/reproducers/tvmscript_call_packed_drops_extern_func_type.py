#!/usr/bin/env python3
"""Reproducer: TVMScript prints a call of a typed ExternFunc as plain R.call_packed; it parses back impure and opaque.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), passes LowerRuntimeBuiltin /
             VMShapeLower / AttachGlobalSymbol:
             <root>.functions[I.GlobalVar("main")].body.blocks[0].bindings[3].value.op.ty.derive_func.name
             (python -m harness guard-suite tests/python/relax/test_dataflow_inplace.py,
             TVM's own tests at v0.26.0 on 0.27.0.post1: test_tensor_storage_ptr_extraction
             [shared_storage_memory_view], test_no_inplace_when_view_ops_share_input
             [relax.memory.view])
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured; on 0.25 the copy loses the
             same purity and derive_func, but 0.25's structural_equal does not compare a
             callee's struct_info_, so there the copy is structurally equal)
Cause:       LowerRuntimeBuiltin lowers R.memory.view to a call of
             ExternFunc("runtime.TVMTensorCreateView") whose type is an opaque, pure FuncType
             with the view's own derive function (infer_view_ty / infer_view_sinfo). The
             printer writes the call as R.call_packed("runtime.TVMTensorCreateView", ...),
             which says nothing of the callee's type (and the opaque R.Callable printer has no
             derive_func either); the parser gives R.call_packed the default callee type:
             impure, derived from ty_args. The text is the same, the module is not (JSON and
             deepcopy carry it exactly).
Run:         python tvmscript_call_packed_drops_extern_func_type.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax
    from tvm.script import ir as I
    from tvm.script import relax as R
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((1, 4), dtype="float32"):
        with R.dataflow():
            lv = R.memory.view(x, R.shape([1, 4]), R.tuple(), R.tuple())
            R.output(lv)
        return lv


# the order relax.build's default pipeline applies them in
module = tvm.transform.Sequential([relax.transform.ToNonDataflow(),
                                   relax.transform.RemovePurityChecking(),
                                   relax.transform.LowerRuntimeBuiltin()])(Module)
copy = tvm.script.from_source(module.script(show_meta=True))


def callee_type(mod):
    op = mod["main"].body.blocks[0].bindings[0].value.op
    ty = getattr(op, "ty", None) or op.struct_info            # later | 0.25
    return f"{op.global_symbol}: purity={ty.purity}, derive_func={ty.derive_func.name}"


if callee_type(module) != callee_type(copy):
    if tvm_ffi.structural_equal(module, copy):
        where = "is structurally equal (0.25's structural_equal compares no callee type), yet"
    else:
        where = f"differs at {tvm_ffi.get_first_structural_mismatch(module, copy)[0]}:"
    print(f"reproduces: the TVMScript copy {where}\n"
          f"  module: {callee_type(module)}\n  copy:   {callee_type(copy)}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

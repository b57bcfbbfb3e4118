#!/usr/bin/env python3
"""Reproducer: TVMScript prints a rank-0 shape type as R.Shape([]); it parses back as R.Shape(ndim=-1).

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), passes KillAfterLastUse /
             LowerRuntimeBuiltin / VMShapeLower / RemovePurityChecking:
             <root>.functions[I.GlobalVar("get_scalar_shape")].ty.ret.values (python -m harness
             guard-suite tests/python/relax/test_relax_operators.py, TVM's own tests at v0.26.0
             on 0.27.0.post1: test_op_shape_of[bytecode], the shape of a 0-d tensor)
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured; 0.25 shows it at the
             parameter's struct_info_)
Cause:       a shape type whose values are known and empty (R.shape_of of a 0-d tensor, or a
             parameter annotated so) is printed as R.Shape([]); the parser's ShapeProxy.as_ty
             tests `if self.values`, so an empty list counts as "values unknown" and it makes a
             shape type of unknown rank (ndim=-1, values None): the copy prints
             R.Shape(ndim=-1) where the module printed R.Shape([]) (JSON and deepcopy carry
             it exactly).
Run:         python tvmscript_empty_shape_type_becomes_unknown_ndim.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "ShapeStructInfo", None) or relax.ShapeType   # 0.25 | later
builder = relax.BlockBuilder()
s = relax.Var("s", annotation([]))           # a shape of rank 0: values [], ndim 0
with builder.function("main", [s]):
    builder.emit_func_output(s)
module = builder.finalize()

copy = tvm.script.from_source(module.script(show_meta=True))


def param_type(mod):
    param = mod["main"].params[0]
    ty = getattr(param, "ty", None) or param.struct_info      # later | 0.25
    return f"{ty} (ndim={ty.ndim}, values={ty.values})"


if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}\n"
          f"  module: {param_type(module)}\n  copy:   {param_type(copy)}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

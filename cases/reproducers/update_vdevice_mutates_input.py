#!/usr/bin/env python3
"""Reproducer: relax.transform.UpdateVDevice rewrites its input's struct info in place.

Seen:        mutated at stage suite, pass UpdateVDevice (python -m harness guard-suite
             tests/python/relax/test_transform_update_vdevice.py, TVM's own test at v0.26.0)
On:          apache-tvm 0.26.0 / apache-tvm-ffi 0.1.14.post1
Cause:       src/relax/transform/update_vdevice.cc, VDeviceMutator::VisitExpr:
             `visited_expr->ty = TensorType(..., new_vdevice_, ...)` writes through the
             node ExprMutator returned, which for an unchanged leaf (a function parameter)
             is the input's own Var: the input module's parameters move to the new device.
Run:         python update_vdevice_mutates_input.py
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

# main(a, b) = a + b on vdevice "llvm" (index 0), built with the BlockBuilder, which every
# release spells the same.
annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
VDevice = getattr(tvm.ir, "VDevice", None) or relax.VDevice   # tvm.ir until 0.26 | 0.27
old, new = VDevice("llvm", 0, "global"), VDevice("llvm", 1, "global")
builder = relax.BlockBuilder()
a = relax.Var("a", annotation((4,), "float32", old))
b = relax.Var("b", annotation((4,), "float32", old))
with builder.function("main", [a, b]):
    out = builder.emit(relax.op.add(a, b))
    builder.emit_func_output(out)
module = builder.get()
module.update_global_info("vdevice", [old, new])

before = tvm_ffi.structural_hash(module)
try:
    relax.transform.UpdateVDevice(new, 0)(module)
except Exception as exc:  # noqa: BLE001 - this release's pass refuses the module: not the bug
    print(f"cannot run here: UpdateVDevice failed: {exc}")
    sys.exit(2)
if tvm_ffi.structural_hash(module) != before:
    print("reproduces: UpdateVDevice changed the struct info of the module it was given")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

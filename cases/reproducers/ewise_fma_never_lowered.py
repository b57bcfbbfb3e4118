#!/usr/bin/env python3
"""Reproducer: relax.op.ewise_fma (x1 * x2 + x3, public and in TVMScript) never compiles:
no pass lowers it, and the VM's code generator cannot emit it.

Seen:        error at stage compile: "InternalError: CodeGenVM cannot emit this Relax
             operator directly. Run the appropriate lowering pass, ..." in python -m harness
             fuzz --generator ops --path compile (R.ewise_fma of three (1,) float32 tensors).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the op is registered with inference only (src/relax/op/tensor/ternary.cc:134);
             no legalization exists under python/tvm/relax/transform/legalize_ops/, so
             LegalizeOps leaves the call and CodeGenVM refuses it. torch.addcmul / x * y + z
             compute it.
Run:         python ewise_fma_never_lowered.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
names = ("x1", "x2", "x3")
params = [relax.Var(name, annotation((2,), "float32")) for name in names]
builder = relax.BlockBuilder()
with builder.function("main", params):
    out = builder.emit(relax.op.ewise_fma(*params))   # inferred R.Tensor((2,), "float32")
    builder.emit_func_output(out)
try:
    tvm.compile(builder.get(), target="llvm")
except Exception as exc:  # noqa: BLE001 - the compile failing is what this reproduces
    print(f"reproduces: tvm.compile raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: ewise_fma compiles for llvm")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: tvm.compile for llvm cannot lower acos (asin, atan, acosh, asinh, sinh,
cosh) of float16: "unknown intrinsic tirx.acos".

Seen:        error at stage compile: "InternalError: unknown intrinsic ir.Op(... name=
             "tirx.acos" ...)" in python -m harness fuzz --generator ops --path compile
             (R.acos of a (1,) float16 tensor).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       these intrinsics lower through DispatchPureExtern<FloatSuffix>
             (src/target/llvm/intrin_rule_llvm.cc, src/target/intrin_rule.cc); FloatSuffix
             (src/target/intrin_rule.h:40) names only float32 (acosf) and float64 (acos) and
             returns "" for float16, so the call is left as it was and codegen has no rule
             for it. cos, sin, exp, log, tan, tanh and atanh of float16 compile (LLVM
             intrinsics or legalized formulas); numpy and torch compute acos of float16.
Run:         python llvm_float16_inverse_trig_unlowered.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((2,), "float16"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    out = builder.emit(relax.op.acos(x))
    builder.emit_func_output(out)
try:
    tvm.compile(builder.get(), target="llvm")
except Exception as exc:  # noqa: BLE001 - the compile failing is what this reproduces
    print(f"reproduces: tvm.compile raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: acos of float16 compiles for llvm")
sys.exit(0)

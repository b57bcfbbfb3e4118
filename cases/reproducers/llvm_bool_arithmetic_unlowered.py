#!/usr/bin/env python3
"""Reproducer: tvm.compile for llvm cannot emit add, subtract, multiply, maximum, minimum or
a comparison of bool tensors: "Check failed: (t.MatchesCode(DLDataTypeCode::kDLFloat))".

Seen:        error at stage compile: "InternalError: Check failed: (t.MatchesCode(
             DLDataTypeCode::kDLFloat)) is false" in python -m harness fuzz --generator ops
             --path compile (R.add of two (1,) bool tensors; R.square of one). Inference and
             LegalizeOps accept it: T_add[i] = a[i] + b[i] over bool buffers.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       CodeGenLLVM's binary and comparison ops (src/target/llvm/codegen_llvm.cc:1577,
             DEFINE_CODEGEN_BINARY_OP, and DEFINE_CODEGEN_CMP_OP below it) handle int and
             uint and take everything else for a float; bool has its own type code, so it
             reaches the float branch's check (and equal of bools is emitted as an fcmp on
             i1, which LLVM rejects). logical_and, bitwise_and and sum of bools compile;
             numpy and torch add and compare bool arrays.
Run:         python llvm_bool_arithmetic_unlowered.py
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
a = relax.Var("a", annotation((2,), "bool"))
b = relax.Var("b", annotation((2,), "bool"))
builder = relax.BlockBuilder()
with builder.function("main", [a, b]):
    out = builder.emit(relax.op.add(a, b))   # inferred R.Tensor((2,), "bool")
    builder.emit_func_output(out)
try:
    tvm.compile(builder.get(), target="llvm")
except Exception as exc:  # noqa: BLE001 - the compile failing is what this reproduces
    print(f"reproduces: tvm.compile raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: add of two bool tensors compiles for llvm")
sys.exit(0)

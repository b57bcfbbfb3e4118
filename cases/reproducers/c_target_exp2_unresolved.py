#!/usr/bin/env python3
"""Reproducer: target "c" cannot compile `T.exp2` (nor `T.exp10`): "Unresolved call tirx.exp2".

Seen:        error at stage compile: InternalError: Unresolved call ir.Op(name="tirx.exp2")
             (python -m harness check nn-llama-tiny --path compile --target c: the paged KV
             cache's attention kernels of tvm.relax.frontend.nn.llm use exp2, so an LLM built
             the way MLC-LLM builds it does not compile for the C target; llvm and the GPU
             targets do).
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured: exit 1).
Cause:       src/target/intrin_rule.cc:36 @ 5d4dc87213: the "default.FLowerIntrinsic" rules,
             which LowerIntrin applies for the C target, lower exp, log2, log10, erf and
             the other libm functions to their C names (DispatchPureExtern<FloatSuffix>) but
             have none for tirx.exp2 and tirx.exp10 (ops of src/tirx/op/op.cc:1200 and
             :1202; llvm, cuda, metal and opencl have rules of their own); CodeGenC then
             meets the op itself (src/target/source/codegen_c.cc:885). C99's math.h has
             exp2f/exp2.
Run:         python c_target_exp2_unresolved.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm.script import ir as I
    from tvm.script import tirx as T
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)


@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = T.exp2(A[i])


build = getattr(tvm, "tirx", None) and getattr(tvm.tirx, "build", None)
if build is None:
    print("cannot run here: this release has no tvm.tirx.build")
    sys.exit(2)
build(Module, target="llvm")   # the same function compiles for llvm
try:
    build(Module, target="c")
except Exception as exc:  # TVM's refusal is the bug (anything else is raised on)
    text = str(exc).strip().splitlines()[-1]
    if "Unresolved call" in text and "exp2" in text:
        print(f"reproduces: llvm compiles T.exp2, target c refuses it: {text[:160]}")
        sys.exit(1)
    raise
print("does not reproduce: target c compiles T.exp2")
sys.exit(0)

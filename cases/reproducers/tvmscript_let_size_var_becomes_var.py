#!/usr/bin/env python3
"""Reproducer: TVMScript prints a let-bound SizeVar as `T.let[T.int32]`; it parses back a plain Var.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), outputs of tirx.MakePackedAPI,
             tirx.FP8StorageLegalize, tirx.LowerTVMBuiltin, tirx.LowerIntrin:
             <root>.functions[I.GlobalVar("main")].body.seq[15].var
             (test_target_codegen_arm.py::test_vmlal_s16; test_target_codegen_llvm.py::
             test_llvm_vadd_pipeline, test_multiple_func (fadd1), and .seq[12].var of
             test_llvm_fp_math) (python -m harness guard-suite, TVM's own tests at v0.25.0 on
             apache-tvm 0.25.0). The tests declare a shape `K = T.int32(is_size_var=True)`;
             MakePackedAPI binds it from the DLTensor's shape with a Bind statement:
             `K: T.let[T.int32] = T.Cast("int32", T.tvm_struct_get(..., 0, 17, "int64"))`.
On:          apache-tvm 0.25.0 (measured: exit 1). 0.26.0 and 0.27.0.post1 have no SizeVar
             (removed by 99869414de "[TIRX] Remove SizeVar in favor of contextual
             constraints (#19930)"): exit 2, the module cannot be written there.
Cause:       src/tirx/script/printer/stmt.cc @ v0.25.0 (the tirx::Bind printer, lines 208-231)
             prints the bound variable as `T.let[<its type annotation>]` and never writes
             `is_size_var`, although the parser accepts `T.let[T.int32(is_size_var=True)]`
             (LetAnnotation.as_var returns the SizeVar; used in
             python/tvm/relax/frontend/nn/llm/_decode_kernels.py:143) and PrintVarCreation
             (src/tirx/script/printer/expr.cc:34) writes it for every other definition.
             The loss is semantic: the analyzer knows a SizeVar is >= 0, not a Var.
Run:         python tvmscript_let_size_var_becomes_var.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

# n is a SizeVar bound by a let (Bind); the text is what 0.25's parser accepts.
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def main(a: T.int32, A: T.Buffer((16,), "int32")):
        n: T.let[T.int32(is_size_var=True)] = a
        A[0] = n
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print(f"cannot run here: the module does not parse on this release (no let-bound SizeVar): "
          f"{next((t.strip() for t in str(exc).splitlines() if 'rror' in t), str(exc).strip()[:200])[:200]}")
    sys.exit(2)

bind = module["main"].body.seq[0] if hasattr(module["main"].body, "seq") else module["main"].body
original_var = bind.var
if type(original_var).__name__ != "SizeVar":
    print(f"cannot run here: the parsed variable is a {type(original_var).__name__}, not a SizeVar")
    sys.exit(2)

text = module.script(show_meta=True)
line = next((t.strip() for t in text.splitlines() if t.strip().startswith("n")), "?")
copy = tvm.script.from_source(text)
if tvm_ffi.structural_equal(module, copy):
    print(f"does not reproduce: prints `{line}` and parses back equal")
    sys.exit(0)
copy_bind = copy["main"].body.seq[0] if hasattr(copy["main"].body, "seq") else copy["main"].body
analyzer = tvm.arith.Analyzer()
print(f"reproduces: the let prints as `{line}`; the copy differs at "
      f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}: the variable is a "
      f"{type(copy_bind.var).__name__} there, a {type(original_var).__name__} in the original "
      f"(analyzer proves n >= 0: original {analyzer.can_prove(original_var >= 0)}, "
      f"copy {analyzer.can_prove(copy_bind.var >= 0)})")
sys.exit(1)

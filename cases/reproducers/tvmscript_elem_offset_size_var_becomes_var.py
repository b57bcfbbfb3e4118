#!/usr/bin/env python3
"""Reproducer: TVMScript drops a buffer's SizeVar elem_offset; it parses back a plain Var.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), the input of
             ApplyDefaultSchedule and tirx.BindTarget and the outputs of tirx.BindTarget,
             tirx.StmtSimplify, s_tir.LowerOpaqueBlock, tirx.FlattenBuffer,
             s_tir.RenormalizeSplitPattern, tirx.StorageRewrite, tirx.CommonSubexprElim,
             tirx.AnnotateEntryFunc, s_tir.PlanAndUpdateBufferAllocationLocation:
             <root>.functions[I.GlobalVar("batch_prefill_paged_kv_cpu")].buffer_map[var_q_indptr].elem_offset,
             ...("batch_decode_paged_kv_cpu")].buffer_map[page_table_indptr_handle].elem_offset
             and the other paged-KV CPU kernels
             (test_runtime_builtin_paged_attention_kv_cache_cpu.py, python -m harness
             guard-suite, TVM's own tests at v0.25.0 on apache-tvm 0.25.0). The kernels of
             tvm.relax.frontend.nn.llm (_decode_kernels.py, _prefill_kernels.py, tree_attn.py)
             declare `q_indptr_elem_offset = T.int32(is_size_var=True)` and
             `T.match_buffer(..., elem_offset=q_indptr_elem_offset)`.
On:          apache-tvm 0.25.0 (measured: exit 1). 0.26.0 and 0.27.0.post1 have no SizeVar
             (removed by 99869414de "[TIRX] Remove SizeVar in favor of contextual
             constraints (#19930)"; their kernels write T.int32()): exit 2.
Cause:       src/tirx/script/printer/buffer.cc @ v0.25.0: a new elem_offset variable used
             only by its buffer is not declared but "inlined" (try_inline_def, lines 65-75;
             the elem_offset branch, lines 153-156): the buffer prints with offset_factor=1
             and no elem_offset, whatever the variable's kind. The parser then makes a fresh
             tirx::Var (src/tirx/ir/buffer.cc:654), never a SizeVar; out of line,
             PrintVarCreation (src/tirx/script/printer/expr.cc:34) would have written
             `T.int32(is_size_var=True)`. The loss is semantic: the analyzer knows a SizeVar
             is >= 0, not a Var.
Run:         python tvmscript_elem_offset_size_var_becomes_var.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

# off is a SizeVar used only as A's elem_offset (as in the paged-KV kernels).
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def main(a: T.handle):
        n = T.int32()
        off = T.int32(is_size_var=True)
        A = T.match_buffer(a, (n,), "int32", elem_offset=off)
        for i in range(n):
            A[i] = 0
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print("cannot run here: the module does not parse on this release (no SizeVar): "
          f"{next((t.strip() for t in str(exc).splitlines() if 'rror' in t), str(exc).strip()[:200])[:200]}")
    sys.exit(2)


def elem_offset(mod):
    func = mod["main"]
    return func.buffer_map[func.params[0]].elem_offset


original = elem_offset(module)
if type(original).__name__ != "SizeVar":
    print(f"cannot run here: the parsed elem_offset is a {type(original).__name__}, not a SizeVar")
    sys.exit(2)

text = module.script(show_meta=True)
line = next((t.strip() for t in text.splitlines() if "match_buffer" in t), "?")
copy = tvm.script.from_source(text)
if tvm_ffi.structural_equal(module, copy):
    print(f"does not reproduce: prints `{line}` and parses back equal")
    sys.exit(0)
analyzer = tvm.arith.Analyzer()
print(f"reproduces: the buffer prints as `{line}`; the copy differs at "
      f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}: elem_offset is a "
      f"{type(elem_offset(copy)).__name__} there, a {type(original).__name__} in the original "
      f"(analyzer proves elem_offset >= 0: original {analyzer.can_prove(original >= 0)}, "
      f"copy {analyzer.can_prove(elem_offset(copy) >= 0)})")
sys.exit(1)

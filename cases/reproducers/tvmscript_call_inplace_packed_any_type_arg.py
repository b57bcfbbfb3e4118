#!/usr/bin/env python3
"""Reproducer: TVMScript cannot parse its own text of R.call_inplace_packed(..., ty_args=R.Any).

Seen:        the tvmscript copier `unsupported` on nn-gpt2-kv-cache (python -m harness check
             nn-gpt2-kv-cache: "TVMScript cannot parse its own text: Mismatched type on
             argument #3 when calling: relax.op.call_inplace_packed"): relax.frontend.nn's
             KVCache.append emits this call with an R.Any result.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       the printer writes the type argument as `ty_args=(R.Any,)` (the name, not a
             call), and the parser hands the callable `R.Any` on as is:
             call_pure_packed turns a callable type argument into its type (`ty() if
             callable(ty)`, python/tvm/relax/op/base.py), call_inplace_packed does not.
             0.25 (struct info) the same with `sinfo_args=(R.Object,)`.
Run:         python tvmscript_call_inplace_packed_any_type_arg.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

if hasattr(relax, "AnyType"):   # 0.26 and later
    any_type, tensor, keyword = relax.AnyType(), relax.TensorType((4,), "float32"), "ty_args"
else:                           # 0.25: struct info
    any_type, keyword = relax.ObjectStructInfo(), "sinfo_args"
    tensor = relax.TensorStructInfo((4,), "float32")

builder = relax.BlockBuilder()
cache, x = relax.Var("cache", any_type), relax.Var("x", tensor)
with builder.function("main", [cache, x]):
    out = builder.emit(relax.op.call_inplace_packed(
        "vm.builtin.attention_kv_cache_append", cache, x, inplace_indices=[0],
        **{keyword: any_type}))
    builder.emit_func_output(out)
module = builder.get()

text = module.script()
try:
    tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    error = next((line.strip() for line in str(exc).splitlines() if "error" in line), str(exc))
    call = next((line.strip() for line in text.splitlines() if "call_inplace_packed" in line), "")
    print(f"reproduces: TVMScript cannot parse its own text ({error}); printed: {call}")
    sys.exit(1)
print("does not reproduce: the module's TVMScript parses back")
sys.exit(0)

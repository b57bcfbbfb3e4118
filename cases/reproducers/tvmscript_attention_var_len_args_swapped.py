#!/usr/bin/env python3
"""Reproducer: TVMScript prints R.nn.attention_var_len's arguments in the call's order and
parses them in the builder's: seqstart_k and max_seqlen_q swap places.

Seen:        lossy-roundtrip at stage import (copy, tvmscript): "...value.args[4]: tvmscript
             copy of the input is not structurally equal to the original" in python -m
             harness fuzz --generator ops (one R.nn.attention_var_len).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the builder relax.op.nn.attention_var_len (python/tvm/relax/op/nn/nn.py:2241)
             takes (queries, keys, values, seqstart_q, max_seqlen_q, seqstart_k,
             max_seqlen_k) but makes the call with (..., seqstart_q, seqstart_k,
             max_seqlen_q, max_seqlen_k); the printer writes the call's arguments
             positionally, and the parser hands them to the builder positionally.
Run:         python tvmscript_attention_var_len_args_swapped.py
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
tensor = relax.Var("tensor", annotation((1, 4, 2, 8), "float32"))
seqstart_q = relax.Var("seqstart_q", annotation((2,), "int32"))
seqstart_k = relax.Var("seqstart_k", annotation((2,), "int32"))
max_q = relax.Var("max_seqlen_q", annotation((), "int32"))
max_k = relax.Var("max_seqlen_k", annotation((), "int32"))
builder = relax.BlockBuilder()
with builder.function("main", [tensor, seqstart_q, seqstart_k, max_q, max_k]):
    out = builder.emit(relax.op.nn.attention_var_len(
        tensor, tensor, tensor, seqstart_q, max_q, seqstart_k, max_k))
    builder.emit_func_output(out)
module = builder.get()
try:
    copy = tvm.script.from_source(module.script())
except Exception as exc:  # noqa: BLE001 - another failure than the one reproduced
    print(f"cannot tell: the printed module does not parse ({type(exc).__name__})")
    sys.exit(2)


def call_args(mod):
    args = mod["main"].body.blocks[0].bindings[0].value.args
    return [str(getattr(arg, "name_hint", None) or arg.name) for arg in args]   # 0.25 | later


print("original:", call_args(module))
print("parsed:  ", call_args(copy))
if call_args(copy) != call_args(module):
    print("reproduces: the parsed call's arguments are in another order")
    sys.exit(1)
print("does not reproduce: the round trip keeps the arguments in place")
sys.exit(0)

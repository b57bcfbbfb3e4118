#!/usr/bin/env python3
"""Reproducer: TVMScript cannot parse its own text of a block whose read/write regions use a
buffer the block allocates.

Seen:        the tvmscript copier `unsupported` on nn-llama-tiny (python -m harness check
             nn-llama-tiny: "TVMScript cannot parse its own text: Variable kv_chunk_len
             already defined in current scope"): the paged-KV-cache decode kernel of
             relax.frontend.nn.llm (_decode_kernels.py) loops up to `kv_chunk_len[0]`, a
             buffer its block allocates, so the block's inferred regions mention it.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       the printer writes T.reads / T.writes before the block's
             T.sblock_alloc_buffer (src/tirx/script/printer/block.cc, steps 3 and 5): a
             region that mentions the allocated buffer declares it first as a
             `n = T.Buffer(...)`, and the allocation then defines `n` again.
Run:         python tvmscript_sblock_region_uses_alloc_buffer.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm.script
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@T.prim_func(s_tir=True)
def func(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for b in range(1):
        with T.sblock("blk"):
            n = T.sblock_alloc_buffer((1,), "int32")
            n[0] = A[0]
            for i in range(n[0]):
                B[i] = A[i]
'''
try:
    func = tvm.script.from_source(SOURCE)
except Exception as exc:  # noqa: BLE001 - a TVMScript without T.sblock cannot run this
    print(f"cannot run here: this TVMScript does not parse the input: {type(exc).__name__}")
    sys.exit(2)
text = func.script()
try:
    tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    error = next((line.strip() for line in str(exc).splitlines() if "error" in line), str(exc))
    block = [line.strip() for line in text.splitlines() if "T.reads" in line or " n = " in line]
    print(f"reproduces: TVMScript cannot parse its own text ({error}); printed: {block}")
    sys.exit(1)
print("does not reproduce: the function's TVMScript parses back")
sys.exit(0)

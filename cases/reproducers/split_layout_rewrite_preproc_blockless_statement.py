#!/usr/bin/env python3
"""Reproducer: SplitLayoutRewritePreproc fails on a PrimFunc with a statement outside any
block under its root block.

Seen:        the pass sweep (python -m harness passes nn-llama-tiny --pass
             SplitLayoutRewritePreproc) at imported and legalized: the paged KV cache's
             hand-written kernels of relax.frontend.nn.llm hold such statements. A pass
             failing an internal check on a well-formed module is a finding (before
             2026-12-07 the sweep read it as a precondition, `rejected`).
On:          apache-tvm 0.26.0, 0.27.0.post1
Cause:       SplitPrimFuncLayoutRewrite::visit_root_block checks every statement of the root
             block's SeqStmt holds a block ("There should be at least a block in the
             subtree"), and the pass visits every PrimFunc of the module, not only those
             meta_schedule rewrote.
Run:         python split_layout_rewrite_preproc_blockless_statement.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@T.prim_func(s_tir=True)
def copy_then_mark(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
                   flag: T.Buffer((1,), "int32")):
    for i in range(4):
        with T.sblock("copy"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    flag[0] = 1
'''

try:
    func = tvm.script.from_source(SOURCE)
except Exception as exc:  # noqa: BLE001 - a TVMScript this release cannot parse
    print(f"cannot run here: this release's TVMScript refuses the kernel: {exc}")
    sys.exit(2)
try:
    relax.transform.SplitLayoutRewritePreproc()(tvm.IRModule({"copy_then_mark": func}))
except Exception as exc:  # noqa: BLE001 - the pass's internal check is what this reproduces
    lines = str(exc).splitlines()
    print("reproduces: " + next((line.strip() for line in lines if "Check failed" in line),
                                lines[-1]))
    sys.exit(1)
print("does not reproduce: SplitLayoutRewritePreproc accepts the kernel")
sys.exit(0)

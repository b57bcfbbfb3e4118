#!/usr/bin/env python3
"""Reproducer: AttachAttrLayoutFreeBuffers leaves a block's layout_free_placeholders on the
old buffers: an equal copy extracts another MetaSchedule workload.

Seen:        lossy-roundtrip at stage extract-tasks (copy, deepcopy): "1 of 1 signatures
             differ ... a second copy made the same way gives another outcome again: it
             follows object identity" on one R.nn.attention (python -m harness fuzz
             --generator ops); the original's own task hash differs from run to run.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       AttachAttrLayoutFreeBuffers renews every called PrimFunc's definitions
             (RenewDefs, src/s_tir/transform/renew_defs.cc), which re-creates a block's
             alloc_buffers but copies its annotations unchanged: topi.nn.batch_matmul's
             "layout_free_placeholders" then names a buffer the new function does not
             define, a free object that structural hashing identifies by its address.
Run:         python attach_layout_free_buffers_dangling_annotation.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import copy
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
structural_equal = getattr(tvm.ir, "structural_equal", None)
structural_hash = getattr(tvm.ir, "structural_hash", None)
if structural_hash is None:   # later releases: tvm_ffi
    import tvm_ffi
    structural_equal, structural_hash = tvm_ffi.structural_equal, tvm_ffi.structural_hash

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
q = relax.Var("q", annotation((1, 2, 2, 4), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [q]):
    out = builder.emit(relax.op.nn.attention(q, q, q))
    builder.emit_func_output(out)
legalized = relax.transform.LegalizeOps()(builder.get())   # one PrimFunc, two batch_matmuls


def workload_hashes(mod):
    """Each PrimFunc's structural hash (what MetaSchedule keys a workload by) after the pass."""
    mod = relax.transform.AttachAttrLayoutFreeBuffers()(mod)
    return sorted(int(structural_hash(func)) for func in mod.functions.values()
                  if not isinstance(func, relax.Function))


copies = [copy.deepcopy(legalized) for _ in range(5)]
assert all(structural_equal(mod, legalized) for mod in copies)
original = workload_hashes(legalized)
differ = [h for h in map(workload_hashes, copies) if h != original]
if workload_hashes(legalized) == original and differ:
    print(f"reproduces: {len(differ)} of {len(copies)} structurally equal deep copies give "
          f"another workload hash; original {original}, a copy {differ[0]}")
    sys.exit(1)
print("does not reproduce: every copy gives the same workload")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: te.create_prim_func leaves a TE ProducerLoad in a loop extent that reads a tensor.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass LegalizeOps:
             <root>.functions[I.GlobalVar("roi_align")].body.block.body.body.body.body.body
             .block.body.extent.value.args[0].a.a.a (python -m harness guard-suite
             tests/python/relax/test_op_vision.py, TVM's own tests at v0.26.0 on 0.26.0:
             test_roi_align_legalize_sample_ratio_zero; the loop over the sampling grid,
             extent ceil(max(rois[i, 4] - rois[i, 2], 1) / 2))
On:          apache-tvm 0.25.0 and 0.26.0 (measured); 0.27.0.post1 does not reproduce
Cause:       create_prim_func builds each loop's (and block iterator's) domain from the TE
             axis's min/extent with Substitute only (src/te/operation/create_primfunc.cc:515
             @ 5d4dc87213); it never runs the ProducerToBufferTransformer that the body gets.
             A reduce axis whose extent reads a tensor (N[0]) keeps a ProducerLoad of the
             te.Tensor in the PrimFunc: it prints as N[0] (parsed back: a BufferLoad, so the
             TVMScript copy differs), the block's reads omit N, and tvm.compile fails.
Run:         python create_prim_func_reduce_extent_keeps_producer_load.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import te
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
tir = getattr(tvm, "tirx", None) or tvm.tir

A = te.placeholder((8,), "float32", name="A")
N = te.placeholder((1,), "int32", name="N")
k = te.reduce_axis((0, N[0]), name="k")
B = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="B")
func = te.create_prim_func([A, N, B])

te_loads = []


def visit(node):
    producer = getattr(node, "producer", None) if type(node).__name__ == "ProducerLoad" else None
    if producer is not None and isinstance(producer, te.Tensor):
        te_loads.append(str(node))


functor = getattr(tir, "stmt_functor", None)
if functor is not None:
    functor.post_order_visit(func.body, visit)
else:  # a release without tirx.stmt_functor (0.27.0.post1: no ProducerLoad class either)
    try:
        tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    except Exception as exc:  # noqa: BLE001
        print(f"reproduces (no stmt_functor here): tvm.compile fails: {type(exc).__name__}: {exc}")
        sys.exit(1)
if te_loads:
    try:
        tvm.compile(tvm.IRModule({"main": func}), target="llvm")
        compiled = "compiles"
    except Exception as exc:  # noqa: BLE001
        compiled = f"tvm.compile fails: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:160]}"
    print(f"reproduces: the PrimFunc holds a te.Tensor ProducerLoad {te_loads} ({compiled})")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: te.create_prim_func(..., index_dtype_override="int64") gives an inner block iterator the domain [v, 1) instead of [v, v + 1).

Seen:        while triaging the lossy-roundtrip of LegalizeOps' output in TVM's own test
             tests/python/relax/test_op_vision.py::test_roi_align_legalize_sample_ratio_zero
             (guard-suite, TVM's tests at v0.26.0 on 0.27.0.post1): the roi_align PrimFunc's
             inner block has `v_ph_1 = T.axis.spatial((v_ph, v_ph + (T.int64(1) - v_ph)), v_ph)`,
             a domain of extent 1 - v_ph (empty for v_ph = 1, which it is bound to).
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured)
Cause:       a TE compute whose reduction extent depends on a spatial axis is lowered to
             nested blocks; the inner block re-binds each outer block variable v with the
             domain Range::FromMinExtent(v, 1). The int64 index rewriter
             (IndexDataTypeRewriter::VisitIterVar) rebuilds every iterator domain as
             Range(min, extent), but that constructor takes (begin, end), so the extent
             becomes 1 - v. Without index_dtype_override the domain is right. Relax's
             BlockBuilder.call_te / emit_te (so LegalizeOps) always passes "int64".
Run:         python create_prim_func_int64_block_iter_domain.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm  # noqa: F401 (the reproducer needs TVM installed)
    from tvm import te
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

data = te.placeholder((2, 8), "float32", name="data")
lens = te.placeholder((2,), "int32", name="lens")


def row_sum(i):   # the reduction's extent depends on i: two nested blocks
    r = te.reduce_axis((0, lens[i]), name="r")
    return te.sum(data[i, r], axis=r)


out = te.compute((2,), row_sum, name="out")


def inner_domain(func):
    """The domain of the first iterator of the block named "out" (walking body/block/seq)."""
    stack = [func.body]
    while stack:
        node = stack.pop()
        if hasattr(node, "iter_vars") and getattr(node, "name_hint", "") == "out":
            return node.iter_vars[0].dom
        for field in ("block", "body", "seq"):
            child = getattr(node, field, None)
            if child is not None:
                stack.extend(child if isinstance(child, (list, tuple)) or
                             type(child).__name__ == "Array" else [child])
    raise LookupError("no block named out")


try:
    expected = inner_domain(te.create_prim_func([data, lens, out]))
    actual = inner_domain(te.create_prim_func([data, lens, out], index_dtype_override="int64"))
except LookupError as exc:   # no nested block "out" here: another lowering
    print(f"cannot run here: {type(exc).__name__}: {exc}")
    sys.exit(2)
def is_one(extent):
    return type(extent).__name__ == "IntImm" and int(extent.value) == 1


if not is_one(actual.extent) and is_one(expected.extent):
    print("reproduces: the inner block's iterator (bound to the outer v_i) has the domain\n"
          f"  min {actual.min}, extent {actual.extent} with index_dtype_override='int64'\n"
          f"  min {expected.min}, extent {expected.extent} without it")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

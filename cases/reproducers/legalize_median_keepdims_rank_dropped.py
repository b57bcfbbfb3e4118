#!/usr/bin/env python3
"""Reproducer: LegalizeOps lowers R.median(x, axis=None, keepdims=True) to a 1-D result (inferred rank kept).

Seen:        error at stage zero-pipeline, pass LegalizeOps: "ValueError: IndexPut requires the
             number of index tensors (2) to match the data tensor dimensions (1)" in python -m
             harness fuzz --generator ops --seed 58 (lv = R.median(x0 (1, 1) int64, keepdims=True),
             inferred (1, 1), then R.index_put(lv, (x0, x0), x0): after legalization the median
             is (1,) and re-inference refuses two index tensors).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       the legalization (python/tvm/relax/transform/legalize_ops/statistical.py, _te_median)
             reshapes x to 1-D when axis is None and, with keepdims, returns that 1-D (1,) median
             as is; inference (InferTypeStatisticalExtension) gives every input dim a 1, as
             np.median(x, axis=None, keepdims=True) does ((1, 1) for a (2, 3) x).
Run:         python legalize_median_keepdims_rank_dropped.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later


def shape_of(expr):
    found = getattr(expr, "ty", None)
    return tuple(int(v) for v in (found if found is not None else expr.struct_info).shape.values)


x = relax.Var("x", annotation((2, 3), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    out = builder.emit(relax.op.median(x, axis=None, keepdims=True))
    builder.emit_func_output(out)
module = builder.get()
inferred = shape_of(module["main"].body.body)
legalized = shape_of(relax.transform.LegalizeOps()(module)["main"].body.body)
if inferred != legalized:
    print(f"reproduces: median(x (2, 3), axis=None, keepdims=True) is inferred {inferred}, "
          f"legalized to {legalized} (numpy: (1, 1))")
    sys.exit(1)
print(f"does not reproduce: median(x (2, 3), axis=None, keepdims=True) is inferred and legalized {inferred}")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: LegalizeOps fails on vision.all_class_non_max_suppression with a (1,)-shaped
score_threshold (the shape ONNX's NonMaxSuppression examples give it).

Seen:        error at stage zero-pipeline, pass LegalizeOps: "TypeError: Mismatched type on
             argument #1 when calling: `prim._OpGT(...)`. Expected `ir.Expr` but got
             `ir.TensorRegion`" in python -m harness fuzz --generator ops.
On:          apache-tvm 0.27.0.post1 (0.25.0 and 0.26.0 legalize it: the same line, read
             differently, see Cause)
Cause:       topi.vision.all_class_non_max_suppression takes score_threshold as a float or a
             te.Tensor, and its helper _get_valid_box_count reads a 0-d tensor with [()] and a
             (1,) tensor with [0] (python/tvm/topi/vision/nms.py, lines 784-789), but _nms_loop
             compares `out_scores[i, j] > score_threshold[()]` (line 766): on a (1,) tensor
             `[()]` is a region, not a value. Relax inference checks nothing of the threshold.
             0.25.0 and 0.26.0 have the same line but legalize (their `[()]` on a (1,) tensor
             gives a load, not a region); what they compute was not checked.
Run:         python legalize_all_class_nms_score_threshold_1d.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
vision = getattr(relax.op, "vision", None)
if vision is None or not hasattr(vision, "all_class_non_max_suppression"):
    print("cannot run here: this TVM has no relax.op.vision.all_class_non_max_suppression")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
boxes = relax.Var("boxes", annotation((1, 4, 4), "float32"))
scores = relax.Var("scores", annotation((1, 2, 4), "float32"))
max_boxes = relax.Var("max_boxes", annotation((), "int64"))
iou = relax.Var("iou_threshold", annotation((), "float32"))
score = relax.Var("score_threshold", annotation((1,), "float32"))   # 0-d legalizes
builder = relax.BlockBuilder()
with builder.function("main", [boxes, scores, max_boxes, iou, score]):
    out = builder.emit(vision.all_class_non_max_suppression(boxes, scores, max_boxes, iou, score))
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: all_class_non_max_suppression with a (1,) score_threshold legalizes")
sys.exit(0)

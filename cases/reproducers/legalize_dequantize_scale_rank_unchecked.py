#!/usr/bin/env python3
"""Reproducer: LegalizeOps fails on dequantize with a scale of rank 2 that inference accepted
("Need to provide 2 index in tensor but 1 was provided").

Seen:        error at stage compile, pass LegalizeOps: "ValueError: Need to provide 2 index in
             tensor but 1 was provided" in python -m harness fuzz --generator ops --path
             compile, seeds 10 and 11 (R.dequantize of a (1, 2) int32 tensor with a (1, 2)
             scale along axis 0; of a (1, 2, 1) tensor with a (1, 2, 1) scale).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferTypeDequantize's check_param_size (src/relax/op/tensor/qdq.cc:240 at
             5d4dc87213) compares only the first dimension of a scale or zero_point that is
             not all ones with the input's dimension at `axis`, never the parameter's rank, so a
             2-d scale whose first dimension matches is accepted; the legalization indexes the
             scale with one index (per-axis quantization) and TE refuses.
Run:         python legalize_dequantize_scale_rank_unchecked.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((1, 2), "int8"))
scale = relax.Var("scale", annotation((1, 2), "float32"))   # rank 2: per-axis wants rank 1
zero_point = relax.Var("zero_point", annotation((), "int8"))
builder = relax.BlockBuilder()
with builder.function("main", [data, scale, zero_point]):
    try:
        out = builder.emit(relax.op.dequantize(data, scale, zero_point, axis=0))
    except Exception as exc:  # noqa: BLE001 - refused at inference: fixed
        print(f"does not reproduce: inference refuses the rank-2 scale ({type(exc).__name__})")
        sys.exit(0)
    builder.emit_func_output(out)
try:
    relax.transform.LegalizeOps()(builder.get())
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).strip().splitlines() or [''])[-1][:160]}")
    sys.exit(1)
print("does not reproduce: LegalizeOps lowers a dequantize with a rank-2 scale")
sys.exit(0)

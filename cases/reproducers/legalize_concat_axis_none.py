#!/usr/bin/env python3
"""Reproducer: LegalizeOps fails on concat with axis=None (the documented flattening form).

Seen:        error at stage zero-pipeline, pass LegalizeOps: "TypeError: Cannot convert from
             type `None` to `int`" in python -m harness fuzz --generator ops (R.concat of
             1-D tensors with axis=None, which struct-info inference accepts).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       relax.op.concat documents axis=None (inputs flattened, then concatenated) and
             its inference accepts it, but the legalization (python/tvm/relax/transform/
             legalize_ops/manipulate.py, _concat) hands None on to topi.concatenate, whose
             axis is an int.
Run:         python legalize_concat_axis_none.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((4,), "float32"))
y = relax.Var("y", annotation((3,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x, y]):
    out = builder.emit(relax.op.concat([x, y], axis=None))   # inferred (7,)
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: concat with axis=None legalizes")
sys.exit(0)

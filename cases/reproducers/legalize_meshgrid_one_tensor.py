#!/usr/bin/env python3
"""Reproducer: LegalizeOps turns meshgrid of one tensor (a 1-tuple) into a bare tensor.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "InternalError: Check failed:
             (opt) is false: The type of Tuple must be TupleType, but expression gv has type
             R.Tensor((3,), dtype="float32")" (0.25.0: "The struct info of Tuple must be
             TupleStructInfo") in python -m harness fuzz --generator ops (R.meshgrid of a
             one-tensor tuple, then one of its fields).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       relax.meshgrid's inference accepts one 1-D tensor (numpy.meshgrid(x) is a
             1-tuple) and types the result R.Tuple(R.Tensor((3,))). The legalization
             (python/tvm/relax/transform/legalize_ops/manipulate.py, _meshgrid) returns
             bb.call_te(topi.meshgrid, ...), and a call_te whose TE function returns a list of
             one tensor gets a single-tensor out type (src/relax/op/op.cc, MakeCallTIR
             collapses a one-element out type list), so the legalized value is a tensor where
             the program holds a tuple: the TupleGetItem on it no longer normalizes (without
             one, the function's return type silently changes from a tuple to a tensor).
Run:         python legalize_meshgrid_one_tensor.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
if not hasattr(relax.op, "meshgrid"):
    print("cannot run here: this TVM has no relax.op.meshgrid")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
x = relax.Var("x", annotation((3,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [x]):
    grid = builder.emit(relax.op.meshgrid(relax.Tuple([x])))   # inferred R.Tuple(R.Tensor((3,)))
    out = builder.emit(relax.TupleGetItem(grid, 0))
    builder.emit_func_output(out)
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: meshgrid of one tensor legalizes")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: struct-info inference accepts scatter_elements with an axis out of range, and
LegalizeOps then fails with an IndexError.

Seen:        error at stage zero-pipeline, pass LegalizeOps: "IndexError: Index out of range.
             size: 1, got index 1" in python -m harness fuzz --generator ops (R.scatter_elements
             of a (1,) tensor along axis 1, which inference accepts as a (1,) tensor).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferTypeScatterElements (src/relax/op/tensor/manipulate.cc) checks the ranks,
             dtypes and shapes of data, indices and updates but never the axis against the
             rank; topi.scatter_elements (python/tvm/topi/scatter_elements.py:77) then reads
             shape[axis]. Its twin gather_elements refuses the same axis at inference
             ("requires axis to be within the input dimension range [-1, 0]"), as
             torch.scatter and numpy.put_along_axis do.
Run:         python legalize_scatter_elements_axis_out_of_range.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((2,), "float32"))
indices = relax.Var("indices", annotation((2,), "int64"))
updates = relax.Var("updates", annotation((2,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [data, indices, updates]):
    try:
        out = builder.emit(relax.op.scatter_elements(data, indices, updates, axis=1))
    except Exception as exc:  # noqa: BLE001 - inference refusing the axis is the fix
        print(f"does not reproduce: inference refuses axis 1 of a 1-d tensor "
              f"({type(exc).__name__})")
        sys.exit(0)
    builder.emit_func_output(out)   # inferred R.Tensor((2,), "float32")
module = builder.get()
try:
    relax.transform.LegalizeOps()(module)
except Exception as exc:  # noqa: BLE001 - the pass's failure is what this reproduces
    print(f"reproduces: LegalizeOps raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: scatter_elements along axis 1 of a 1-d tensor legalizes")
sys.exit(0)

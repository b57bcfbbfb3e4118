#!/usr/bin/env python3
"""Reproducer: struct-info inference accepts cumsum / cumprod along an axis past the rank,
and tvm.compile then fails with an IndexError in DispatchSortScan.

Seen:        error at stage compile, pass DispatchSortScan: "IndexError: Index out of range.
             size: 1, got index 1" in python -m harness check FILE --path compile, on a
             module of one R.cumsum(d, axis=1) over a (2,) tensor, which inference accepts
             as a (2,) tensor (the extract path never lowers the scan and passes).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       InferTypeScan (src/relax/op/tensor/statistical.cc) never checks the axis
             against the rank; DispatchSortScan lowers the scan with topi's scanop, which
             reads shape[axis] (python/tvm/topi/scan.py:107). topk refuses the same axis at
             inference ("Index 1 out of bounds 1"), as torch.cumsum and numpy.cumsum do.
Run:         python scan_axis_out_of_range.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
data = relax.Var("data", annotation((2,), "float32"))
builder = relax.BlockBuilder()
with builder.function("main", [data]):
    try:
        out = builder.emit(relax.op.cumsum(data, axis=1))
    except Exception as exc:  # noqa: BLE001 - inference refusing the axis is the fix
        print(f"does not reproduce: inference refuses axis 1 of a 1-d tensor "
              f"({type(exc).__name__})")
        sys.exit(0)
    builder.emit_func_output(out)   # inferred R.Tensor((2,), "float32")
module = builder.get()
try:
    tvm.compile(module, target="llvm")
except Exception as exc:  # noqa: BLE001 - the compile failing is what this reproduces
    print(f"reproduces: tvm.compile raised {type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}")
    sys.exit(1)
print("does not reproduce: cumsum along axis 1 of a 1-d tensor compiles")
sys.exit(0)

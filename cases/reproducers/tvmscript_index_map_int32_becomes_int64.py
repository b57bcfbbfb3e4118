#!/usr/bin/env python3
"""Reproducer: TVMScript does not round-trip an int32 IndexMap inside R.layout_transform.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass ConvertLayout:
             ...value.attrs.index_map.initial_indices[0].ty.dtype (python -m harness
             guard-suite tests/python/relax/test_transform_convert_layout.py, TVM's own
             tests at v0.26.0: 55 pass outputs in 32 tests)
On:          apache-tvm 0.26.0 and 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       the printer writes `T.index_map(lambda i0, i1, ...: ...)` with no index dtype,
             and the parser makes int64 index variables where ConvertLayout made int32
             ones: the printed text is the same, the module is not. (A printer/parser
             asymmetry: the pass's output is fine; JSON and deepcopy carry it exactly.)
Run:         python tvmscript_index_map_int32_becomes_int64.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax, tirx
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
builder = relax.BlockBuilder()
x = relax.Var("x", annotation((1, 4, 8, 8), "float32"))
with builder.function("main", [x]):
    nhwc = tirx.IndexMap.from_func(lambda n, c, h, w: (n, h, w, c), index_dtype="int32")
    out = builder.emit(relax.op.layout_transform(x, nhwc))
    builder.emit_func_output(out)
module = builder.get()

copy = tvm.script.from_source(module.script(show_meta=True))
if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy's IndexMap has other index dtypes "
          f"({tvm_ffi.get_first_structural_mismatch(module, copy)[0]})")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: TVMScript drops a buffer's explicit row-major TileLayout; it parses back as None.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass NormalizeGlobalVar:
             <root>.functions[I.GlobalVar("cumsum")].params[1].ty.layout (python -m
             harness guard-suite tests/python/relax/test_backend_dispatch_sort_scan.py,
             TVM's own tests at v0.26.0 on 0.27.0.post1: 11 occurrences)
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured; 0.25 shows it at the
             PrimFunc's buffer_map)
Cause:       a PrimFunc made from TE (topi.cumsum through BlockBuilder.emit_te) has an output
             buffer whose type carries the row-major TileLayout S[(2, 3):(3, 1)]; the
             printer writes the buffer as T.Buffer((2, 3), ...) without it, and the parser
             makes a buffer whose layout is None. The text is the same, the module is not
             (JSON and deepcopy carry it exactly).
Run:         python tvmscript_buffer_default_tile_layout_dropped.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax, topi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
builder = relax.BlockBuilder()
x = relax.Var("x", annotation((2, 3), "float32"))
with builder.function("main", [x]):
    with builder.dataflow():
        out = builder.emit_output(builder.emit_te(topi.cumsum, x, axis=1))
    builder.emit_func_output(out)
module = builder.finalize()

copy = tvm.script.from_source(module.script(show_meta=True))
if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

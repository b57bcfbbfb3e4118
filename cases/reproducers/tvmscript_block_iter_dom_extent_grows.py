#!/usr/bin/env python3
"""Reproducer: TVMScript prints a block iterator's domain as (min, min + extent); a non-constant extent parses back as (min + extent) - min.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass LegalizeOps:
             <root>.functions[I.GlobalVar("roi_align")].body.block.body.body.body.body.body
             .block.body.body.body.block.iter_vars[2].dom.extent.a (python -m harness
             guard-suite tests/python/relax/test_op_vision.py, TVM's own tests at v0.26.0 on
             0.27.0.post1: test_roi_align_legalize_sample_ratio_zero)
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured)
Cause:       the block printer writes an iterator whose domain min is not 0 as
             T.axis.spatial((min, min + extent), binding); the parser (_as_range in the TIR
             IR builder) keeps the extent only when (min + extent) - min simplifies to a
             constant, and otherwise makes ir.Range(begin, end), whose extent is the
             unsimplified `end - begin`. So a domain (m, n) parses as extent n - m, prints as
             (m, m + (n - m)), and parses back as extent m + (n - m) - m: every round trip
             adds a term. The value is the same, the module is not (JSON and deepcopy carry
             it exactly). In TVM's test the non-constant extent comes from LegalizeOps'
             roi_align (te.create_prim_func with index_dtype_override="int64").
Run:         python tvmscript_block_iter_dom_extent_grows.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@T.prim_func(s_tir=True)
def main(A: T.Buffer((16,), "float32"), m: T.int32, n: T.int32):
    for i in range(16):
        with T.sblock("outer"):
            vi = T.axis.spatial(16, i)
            for j in range(n - m):
                with T.sblock("inner"):
                    vj = T.axis.spatial((m, n), m + j)
                    A[vj] = T.float32(0)
'''

try:
    module = tvm.IRModule({"main": tvm.script.from_source(SOURCE)})
except Exception as exc:  # noqa: BLE001 - a release without this TIR syntax
    print(f"cannot run here: the TVMScript does not parse: {type(exc).__name__}: {exc}")
    sys.exit(2)
copy = tvm.script.from_source(module.script(show_meta=True))


def inner_dom(mod):
    line = [s for s in mod.script().splitlines() if "vj = T.axis.spatial" in s]
    return line[0].strip() if line else "?"


if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}\n"
          f"  module: {inner_dom(module)}\n  copy:   {inner_dom(copy)}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: VMShapeLower orders a shape function's stores by object address.

Seen:        lossy-roundtrip at stage compile (copy): a deepcopy of the module compiles to
             other LLVM code (python -m harness check nn-llama-tiny --path compile; the
             other relax.frontend.nn cases now and then): a structurally equal copy, a JSON
             copy, or the same model built in another process gives another shape function.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       src/relax/backend/vm/vm_shape_lower.cc, PopulateSlotInfo iterates `slot_map_`,
             an unordered_map keyed by StructuralHash, which hashes the free variable `n` by
             its address; the order it visits the slots in is the order the shape function
             stores n*2, n*4, ... Iterating `slot_vec_` (creation order) would not depend on it.
Run:         python vm_shape_lower_order_follows_addresses.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import copy
import sys

try:
    import tvm_ffi
    from tvm import relax
    from tvm.script import ir as I
    from tvm.script import relax as R
    from tvm.script import tirx as T
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 64), "float32")):
        n = T.int64()
        a = R.reshape(x, R.shape([n * 2, 32]))
        b = R.reshape(x, R.shape([n * 4, 16]))
        c = R.reshape(x, R.shape([n * 8, 8]))
        d = R.reshape(x, R.shape([n * 16, 4]))
        return (a, b, c, d)


def shape_stores(mod):
    """The shape function's stores into the shape heap H, in program order."""
    text = relax.transform.VMShapeLower()(mod).script()
    return [line.strip() for line in text.splitlines() if line.strip().startswith("H[")]


original = shape_stores(Module)
copies = [copy.deepcopy(Module) for _ in range(100)]   # each has a fresh `n`
assert all(tvm_ffi.structural_equal(mod, Module) for mod in copies)
other = [stores for stores in map(shape_stores, copies) if stores != original]
if shape_stores(Module) == original and other:
    print(f"reproduces: {len(other)} of {len(copies)} structurally equal deep copies lower to "
          f"another store order;\n  original: {original}\n  a copy:   {other[0]}")
    sys.exit(1)
print("does not reproduce: every copy lowers to the same shape function")
sys.exit(0)

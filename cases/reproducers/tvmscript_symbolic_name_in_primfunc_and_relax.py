#!/usr/bin/env python3
"""Reproducer: TVMScript defines a symbolic variable twice when a PrimFunc and a Relax
function of one module use the same name (m) for their own variables.

Seen:        the suite guard on TVM's own tests (tests/python/relax/test_vm_build.py::
             test_vm_compile_e2e_func_param_with_shape, at apache/tvm 5d4dc87213 on the
             0.27.0.post1 wheel): every TVMScript copy from the module on.
On:          apache-tvm 0.27.0.post1 (see the exit code on other releases)
Cause:       the printer declares the Relax function's symbolic dimensions at module level
             (m = TypeVar("m")) and, inside the PrimFunc, its own int32 m again
             (m, n = T.int32(), T.int32()) after using "m" in a buffer's shape: the parser
             refuses "Variable m already defined in current scope".
Run:         python tvmscript_symbolic_name_in_primfunc_and_relax.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

BLOCK = "T.sblock" if hasattr(tvm, "s_tir") else "T.block"
SOURCE = '''
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def tir_matmul(x: T.handle, y: T.handle, z: T.handle) -> None:
        m = T.int32()
        n = T.int32()
        k = T.int32()
        A = T.match_buffer(x, (m, n))
        B = T.match_buffer(y, (n, k))
        C = T.match_buffer(z, (m, k))
        for i, j, kk in T.grid(m, k, n):
            with BLOCK("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, kk])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @R.function
    def func(x: R.Tensor(("m", "n"), "float32"), w: R.Tensor(("n", "k"), "float32")) -> R.Tensor:
        m, k = T.int64(), T.int64()
        cls = Module
        gv0 = R.call_tir(cls.tir_matmul, (x, w), R.Tensor((m, k), dtype="float32"))
        return gv0
'''.replace("BLOCK", BLOCK)

try:
    mod = tvm.script.from_source(SOURCE)
except Exception as exc:  # noqa: BLE001 - a TVMScript this release cannot parse
    print(f"cannot run here: this release's TVMScript refuses the module: {exc}")
    sys.exit(2)
text = mod.script(show_meta=True)
try:
    tvm.script.from_source(text, check_well_formed=False)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
    print("reproduces: the printed module does not parse back: "
          + (lines[0] if lines else str(exc).splitlines()[-1]))
    sys.exit(1)
print("does not reproduce: the module round-trips through TVMScript")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: TVMScript prints `R.invoke_pure_closure(..., ty_args=(R.Tensor,))`, which its
parser refuses.

Seen:        the suite guard on TVM's own tests (tests/python/relax/test_vm_build.py::
             test_vm_closure, at apache/tvm 5d4dc87213 on the 0.27.0.post1 wheel): the
             TVMScript copy of the test's module.
On:          apache-tvm 0.26.0, 0.27.0.post1 (0.25.0 cannot parse the source module)
Cause:       a type argument of a tensor of unknown shape and dtype prints as the bare
             R.Tensor, which the parser evaluates to the R.Tensor function itself and hands
             to relax.op.invoke_pure_closure's FFI as is: "Expected Array<ir.Type> but got
             Array[index 0: ffi.Function]" (the same class as R.call_inplace_packed's R.Any).
Run:         python tvmscript_invoke_pure_closure_bare_tensor_type.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def lifted_func_1(x: R.Tensor((2, 3), "float32"), env: R.Tensor((2, 3), "float32")):
        return R.call_pure_packed("test.vm.add", x, env, ty_args=(R.Tensor()))

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        cls = Module
        clo = R.make_closure(cls.lifted_func_1, (x,))
        res = R.invoke_pure_closure(clo, (y,), ty_args=(R.Tensor()))
        return res
'''

try:
    mod = tvm.script.from_source(SOURCE)
except Exception as exc:  # noqa: BLE001 - a TVMScript this release cannot parse
    print(f"cannot run here: this release's TVMScript refuses the module: "
          f"{str(exc).splitlines()[-1]}")
    sys.exit(2)
text = mod.script(show_meta=True)
try:
    tvm.script.from_source(text, check_well_formed=False)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
    printed = next((line.strip() for line in text.splitlines() if "invoke_pure_closure" in line),
                   "")
    print(f"reproduces: {printed} does not parse back: "
          + (lines[0] if lines else str(exc).splitlines()[-1]))
    sys.exit(1)
print("does not reproduce: the module round-trips through TVMScript")
sys.exit(0)

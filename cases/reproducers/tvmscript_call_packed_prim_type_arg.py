#!/usr/bin/env python3
"""Reproducer: TVMScript prints a call's PrimType type argument as a bare `T.int64`, which its
parser refuses.

Seen:        the suite guard on TVM's own tests (tests/python/relax/test_vm_build.py::
             test_vm_emit_te_concat, at apache/tvm 5d4dc87213 on the 0.27.0.post1 wheel):
             the TVMScript copy of VMShapeLower's output and of every later pass's.
On:          apache-tvm 0.27.0.post1 (see the exit code on other releases)
Cause:       VMShapeLower emits R.call_packed("vm.builtin.make_prim_value", ...) whose type
             argument is the PrimType int64; the printer writes ty_args=(T.int64,), and the
             parser evaluates the bare T.int64 to a variable, not a type: "Mismatched type
             on argument #4 when calling ir.Call ... Expected Array<ir.Type> but got
             Array[index 0: ir.Var]" (the class of R.invoke_pure_closure's bare R.Tensor).
Run:         python tvmscript_call_packed_prim_type_arg.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax, te
    from tvm.script import relax as R
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

tir = tvm.tirx if hasattr(tvm, "tirx") else tvm.tir
builder = relax.BlockBuilder()
n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
x, y = relax.Var("x", R.Tensor([n], "float32")), relax.Var("y", R.Tensor([m], "float32"))


def te_func(a, b):
    return te.compute((n + m,), lambda i: tir.if_then_else(i < n, a[i], b[i - n]))


with builder.function("rx_func", [x, y]):   # TVM's test_vm_emit_te_concat
    builder.emit_func_output(builder.emit_te(te_func, x, y))
lowered = []


@tvm.instrument.pass_instrument
class KeepVMShapeLowerOutput:
    def run_after_pass(self, module, info):
        if str(info.name) == "VMShapeLower" and not lowered:
            lowered.append(module)


with tvm.transform.PassContext(instruments=[KeepVMShapeLowerOutput()]):
    relax.build(builder.get(), tvm.target.Target("llvm", host="llvm"))
if not lowered:
    print("cannot run here: relax.build ran no VMShapeLower")
    sys.exit(2)
text = lowered[0].script(show_meta=True)
try:
    tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
    refusal = lines[0] if lines else str(exc).splitlines()[-1]
    if "Mismatched type" not in refusal:   # 0.26.0 refuses the text for another reason
        print(f"does not reproduce this bug: the text is refused otherwise: {refusal}")
        sys.exit(0)
    printed = next((line.strip() for line in text.splitlines() if "ty_args=(T." in line), "")
    print(f"reproduces: {printed} does not parse back: {refusal}")
    sys.exit(1)
print("does not reproduce: VMShapeLower's output round-trips through TVMScript")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: TVMScript 0.26 prints a symbolic buffer dimension as a string the parser makes an
int32 variable, then declares it int64: "Expected the same dtype for PrimVars".

Seen:        the nn door on 0.26.0 (python -m harness matrix nn-gpt2-kv-cache --set
             'apache-tvm==0.26.0,...': the TVMScript copy of the imported module), and TVM's
             own tests under the suite guard on 0.26.0 (186 refusals of this kind, counted
             `unsupported` until parser refusals became findings, 2026-12-07).
On:          apache-tvm 0.26.0 (see the exit code on other releases)
Cause:       a PrimFunc made by emit_te over symbolic shapes prints as
             te_func(x: T.Buffer(("n_1",), ...), ...) with `n_1 = T.int64()` in its body; the
             string dimension declares n_1 as an int32 PrimVar at the signature, and the
             parser refuses the body's int64 declaration of the same name.
Run:         python tvmscript_buffer_shape_string_var_dtype.py
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
    if "Expected the same dtype for PrimVars" not in refusal:   # 0.27 refuses it otherwise
        print(f"does not reproduce this bug: the text is refused otherwise: {refusal}")
        sys.exit(0)
    printed = next((line.strip() for line in text.splitlines() if "def te_func" in line), "")
    print(f"reproduces: {printed} does not parse back: {refusal}")
    sys.exit(1)
print("does not reproduce: VMShapeLower's output round-trips through TVMScript")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: TVMScript cannot parse back FlattenBuffer's view of a 0-d buffer.

Seen:        the suite guard on TVM's own tests (tests/python/relax/
             test_transform_adjust_matmul_order.py::TestAdjustMatmulOrderAttentionBlock::
             test_attention_block_numerics, at apache/tvm 5d4dc87213 on the 0.27.0.post1
             wheel): the TVMScript copy of tirx.FlattenBuffer's output, whose `multiply`
             PrimFunc takes the attention's 0-d scale.
On:          apache-tvm 0.27.0.post1 (see the exit code on other releases)
Cause:       FlattenBuffer flattens the 0-d buffer to one element; the printer writes
             `lv5_1 = lv5.view(1)`, and the parser's Buffer.view multiplies the 0-d
             buffer's empty shape with functools.reduce and no initial value: "reduce() of
             empty iterable with no initial value".
Run:         python tvmscript_zero_dim_buffer_view.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 16), "float32"), scale: R.Tensor((), "float32")):
        with R.dataflow():
            y = R.multiply(x, scale)
            R.output(y)
        return y
'''
flattened = []


@tvm.instrument.pass_instrument
class KeepFlattenBufferOutput:
    def run_after_pass(self, module, info):
        if str(info.name).endswith("FlattenBuffer") and not flattened:
            flattened.append(module)


with tvm.transform.PassContext(instruments=[KeepFlattenBufferOutput()]):
    relax.build(tvm.script.from_source(SOURCE), target="llvm")
if not flattened:
    print("cannot run here: relax.build ran no FlattenBuffer")
    sys.exit(2)
text = flattened[0].script(show_meta=True)
try:
    tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
    refusal = lines[0] if lines else str(exc).splitlines()[-1]
    if "reduce()" not in refusal:
        print(f"does not reproduce this bug: the text is refused otherwise: {refusal}")
        sys.exit(0)
    printed = next((line.strip() for line in text.splitlines() if ".view(1)" in line), "")
    print(f"reproduces: {printed} does not parse back: {refusal}")
    sys.exit(1)
print("does not reproduce: FlattenBuffer's output round-trips through TVMScript")
sys.exit(0)

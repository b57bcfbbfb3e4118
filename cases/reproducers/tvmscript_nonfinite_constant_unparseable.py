#!/usr/bin/env python3
"""Reproducer: TVMScript prints a -inf (or inf, nan) scalar constant as text its parser refuses.

Seen:        the tvmscript copier `unsupported` on hf-bert and hf-gpt2 (python -m harness
             check hf-bert: "TVMScript cannot parse its own text: value has to be scalar
             or Tensor"): the PyTorch frontend imports an attention mask's fill value as
             `R.const(-inf)`, and the module's own TVMScript does not parse back.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1 (torch 2.14.1,
             transformers 5.25.0)
Cause:       the printer writes `R.const("-inf", "float32")` (the value as a string), and
             `R.const` refuses a string value. JSON and deepcopy carry the module exactly.
Run:         python tvmscript_nonfinite_constant_unparseable.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import numpy
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
builder = relax.BlockBuilder()
x = relax.Var("x", annotation((2, 2), "float32"))
with builder.function("main", [x]):
    out = builder.emit(relax.op.maximum(x, relax.const(numpy.float32(-numpy.inf))))
    builder.emit_func_output(out)
module = builder.get()

text = module.script(show_meta=True)
try:
    tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    line = next((line.strip() for line in text.splitlines() if "inf" in line), "")
    print(f"reproduces: TVMScript cannot parse its own text ({type(exc).__name__}: "
          f"{(str(exc).splitlines() or [''])[0]}); printed: {line}")
    sys.exit(1)
print("does not reproduce: the module's TVMScript parses back")
sys.exit(0)

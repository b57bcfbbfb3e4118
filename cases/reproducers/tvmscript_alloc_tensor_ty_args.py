#!/usr/bin/env python3
"""Reproducer: TVMScript prints `R.builtin.alloc_tensor(..., ty_args=...)`, which its parser
refuses.

Seen:        the suite guard on any test that compiles (`tvm.compile` of a relu,
             tests/test_suite_guard.py): relax.transform.CallTIRRewrite's output, and
             every later pass's, does not parse back.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       CallTIRRewrite emits builtin.alloc_tensor calls with their type arguments
             set; the printer writes them as a `ty_args=` keyword, and the parser's
             R.builtin.alloc_tensor takes no such argument ("alloc_tensor() got an
             unexpected keyword argument 'ty_args'").
Run:         python tvmscript_alloc_tensor_ty_args.py
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
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y
'''
lowered = tvm.transform.Sequential([relax.transform.LegalizeOps(),
                                    relax.transform.CallTIRRewrite()])(
    tvm.script.from_source(SOURCE))
text = lowered.script()
try:
    tvm.script.from_source(text, check_well_formed=False)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
    printed = next((line.strip() for line in text.splitlines() if "alloc_tensor" in line), "")
    print(f"reproduces: {printed} does not parse: "
          + (lines[0] if lines else str(exc).splitlines()[-1]))
    sys.exit(1)
print("does not reproduce: CallTIRRewrite's output round-trips through TVMScript")
sys.exit(0)

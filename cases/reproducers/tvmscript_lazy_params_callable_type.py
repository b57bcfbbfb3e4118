#!/usr/bin/env python3
"""Reproducer: TVMScript cannot parse back what LazyGetInput / LazySetOutput make of any
function.

Seen:        the pass sweep (python -m harness passes nn-mlp --pass 'Lazy*'): the output of
             LazyGetInput and LazySetOutput on 54 of 56 small default cases (static shapes or
             symbolic) does not parse back: "'Var' object has no attribute
             'get_symbolic_vars'". A refusal counted `unsupported` until refusals became
             findings (2026-12-07).
On:          apache-tvm 0.27.0.post1 (see the exit code on other releases)
Cause:       the passes add a parameter typed R.Callable((T.int64, R.Any), ...); parsing the
             signature, the parser collects the symbolic variables of every parameter's
             annotation and meets a plain Var where it expects a type proxy (the
             callable's T.int64 argument type).
Run:         python tvmscript_lazy_params_callable_type.py
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
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 4), "float32")):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            y = R.matmul(x, w)
            R.output(y)
        return y
'''
refused = []
for name in ("LazyGetInput", "LazySetOutput"):
    text = getattr(relax.transform, name)()(tvm.script.from_source(SOURCE)).script(
        show_meta=True)
    try:
        tvm.script.from_source(text, check_well_formed=False)
    except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
        lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
        refused.append(f"{name}: " + (lines[0] if lines else str(exc).splitlines()[-1]))
if refused:
    print("reproduces: the printed output does not parse back:\n  " + "\n  ".join(refused))
    sys.exit(1)
print("does not reproduce: both outputs round-trip through TVMScript")
sys.exit(0)

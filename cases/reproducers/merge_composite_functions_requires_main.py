#!/usr/bin/env python3
"""Reproducer: MergeCompositeFunctions refuses any module whose entry function is not named
"main".

Seen:        the pass sweep (python -m harness passes 'nn-*' --pass MergeCompositeFunctions)
             at every point of the relax.frontend.nn cases: their export names its entry
             `forward`. A pass refusing a well-formed module of its phase is a finding
             (before 2026-12-07 the sweep read it as a precondition, `rejected`).
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1
Cause:       MergeCompositeFunctions looks up mod->GetGlobalVar("main") and runs
             DeadCodeElimination with {"main"} as the only entry: a module without "main"
             raises ValueError (candidates are: ["forward"]).
Run:         python merge_composite_functions_requires_main.py
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
    def forward(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y
'''

try:
    relax.transform.MergeCompositeFunctions()(tvm.script.from_source(SOURCE))
except Exception as exc:  # noqa: BLE001 - the pass's refusal is what this reproduces
    print(f"reproduces: {type(exc).__name__}: {str(exc).splitlines()[-1].strip()}")
    sys.exit(1)
print("does not reproduce: MergeCompositeFunctions accepts a module whose entry is `forward`")
sys.exit(0)

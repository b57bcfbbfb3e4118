#!/usr/bin/env python3
"""Reproducer: ConvertLayout and ToMixedPrecision fail on a dataflow output tuple that holds
a non-tensor (R.Any) value.

Seen:        the pass sweep (python -m harness passes 'nn-*' --pass ConvertLayout --pass
             ToMixedPrecision) at every point of nn-llama-tiny and nn-gpt2-kv-cache, and
             check nn-llama-tiny --layout nhwc: relax.frontend.nn models return
             (logits, paged_kv_cache), the cache an R.Any. No conv2d, no float16 needed.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       ConvertLayout: "DataflowBlock Pass should not rewrite or delete any
             global-scope Var" (the tuple output is dropped or rebound);
             ToMixedPrecision: "Expected TensorType, but got R.Any" (its dtype analysis
             reads every tuple field as a tensor). 0.25 (struct info) the same with R.Object.
Run:         python convert_layout_mixed_precision_tuple_with_any.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
    from tvm.script import relax as R
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), cache: R.ANY):
        with R.dataflow():
            y = R.nn.relu(x)
            gv = (y, cache)
            R.output(gv)
        return gv
'''.replace("R.ANY", "R.Any" if hasattr(R, "Any") else "R.Object")   # 0.25: R.Object

passes = {"ConvertLayout": lambda: relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]}),
          "ToMixedPrecision": relax.transform.ToMixedPrecision}
failed = []
for name, make in passes.items():
    try:
        make()(tvm.script.from_source(SOURCE))
    except Exception as exc:  # noqa: BLE001 - the pass's internal check is what this reproduces
        lines = str(exc).splitlines()
        check = next((line.strip() for line in lines if "Check failed" in line), lines[-1])
        failed.append(f"{name}: {check}")
if failed:
    print("reproduces:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("does not reproduce: both passes accept the module")
sys.exit(0)

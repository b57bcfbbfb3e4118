#!/usr/bin/env python3
"""[Bug][Relax] LegalizeOps fails on split with zero-size parts: split_indices must be sorted

Seen:        error at stage zero-pipeline, pass LegalizeOps (#3): (exception): InternalError: Check failed: idx_node->value > back_node->value (0 vs. 0) : split_indices must be sorted
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce node-split_zero_size_splits_opset18 --path extract --layout nchw
Input:       1 ONNX nodes -> 1 nodes, 18 lines of TVMScript (2 candidates, 5 s)
Run:         python repro.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:  # not "reproduces": this python cannot run the check
    print(f"cannot run here: {exc}; use a python with apache-tvm")
    sys.exit(2)

SCRIPT = r"""
# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import relax as R

v = TypeVar("v")
@I.ir_module
class Module:
    @R.function
    def main(input: R.Tensor((v,), dtype="float32")) -> R.Tuple(R.Tensor((0,), dtype="float32"), R.Tensor((0,), dtype="float32"), R.Tensor((v,), dtype="float32")):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tuple(R.Tensor((0,), dtype="float32"), R.Tensor((0,), dtype="float32"), R.Tensor((v,), dtype="float32")) = R.split(input, indices_or_sections=[0, 0], axis=0)
            lv1: R.Tensor((0,), dtype="float32") = lv[0]
            lv2: R.Tensor((0,), dtype="float32") = lv[1]
            lv3: R.Tensor((v,), dtype="float32") = lv[2]
            gv: R.Tuple(R.Tensor((0,), dtype="float32"), R.Tensor((0,), dtype="float32"), R.Tensor((v,), dtype="float32")) = lv1, lv2, lv3
            R.output(gv)
        return gv
"""


def load():
    try:
        return tvm.script.from_source(SCRIPT)
    except Exception as exc:  # noqa: BLE001 - another release's TVMScript: not "reproduces"
        print(f"cannot run here: this TVM cannot parse the module's TVMScript "
              f"({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]})")
        sys.exit(2)


def prepare(mod):
    """The stages before the failing one, in a PassContext as users run them."""
    with tvm.transform.PassContext(opt_level=3):
        mod = relax.transform.DecomposeOpsForInference()(mod)   # decompose-ops-for-inference
        mod = relax.transform.CanonicalizeBindings()(mod)       # canonicalize-bindings
    return mod


def failing_stage(mod):
    """The failing stage, zero-pipeline, alone."""
    with tvm.transform.PassContext(opt_level=3):
        return relax.get_pipeline("zero")(mod)


def main():
    mod = prepare(load())
    try:
        failing_stage(mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what this reproduces
        print(f"reproduces: zero-pipeline raised {type(exc).__name__}: "
              f"{(str(exc).splitlines() or [''])[0]}")
        return 1
    print("does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())

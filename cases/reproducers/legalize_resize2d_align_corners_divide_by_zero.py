#!/usr/bin/env python3
"""[Bug][Relax] LegalizeOps divides by zero on image.resize2d with align_corners to an output side of 1

Seen:        error at stage zero-pipeline, pass LegalizeOps (#3): (exception): InternalError: Check failed: fb->value != 0 (0 vs. 0) : Divide by zero
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce node-resize_downsample_scales_linear_align_corners --path extract --layout nchw
Input:       1 ONNX nodes -> 1 nodes, 14 lines of TVMScript (2 candidates, 5 s)
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
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(X: R.Tensor((1, 1, 2, 4), dtype="float32")) -> R.Tensor((1, 1, 1, 2), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            gv: R.Tensor((1, 1, 1, 2), dtype="float32") = R.image.resize2d(X, R.shape([1, 2]), roi=[T.float32(0.0), T.float32(0.0), T.float32(0.0), T.float32(0.0)], layout="NCHW", method="linear", coordinate_transformation_mode="align_corners", rounding_method="round_prefer_floor", cubic_alpha=-0.75, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None)
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

#!/usr/bin/env python3
"""[Bug][Relax] ConvertLayout fails on sum over stack: Invalid SLayout: can't find S in source layout

Seen:        error at stage convert-layout, pass ConvertLayout (#1): (exception): InternalError: Check failed: (res != std::string::npos) is false: Invalid SLayout:can't find S in source layoutABCDE
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce conv-sum-nhwc --path extract --layout nhwc
Input:       3 ONNX nodes -> 2 nodes, 16 lines of TVMScript (4 candidates, 4 s)
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
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 16, 16), dtype="float32"), conv4: R.Tensor((1, 8, 16, 16), dtype="float32"), c1: R.Tensor((8, 4, 3, 3), dtype="float32")) -> R.Tensor((1, 8, 16, 16), dtype="float32"):
        R.func_attr({"num_input": 3})
        with R.dataflow():
            lv: R.Tensor((1, 8, 16, 16), dtype="float32") = R.nn.conv2d(x, c1, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype=None)
            lv1: R.Tensor((1, 8, 16, 16), dtype="float32") = R.broadcast_to(lv, R.shape([1, 8, 16, 16]))
            lv2: R.Tensor((1, 8, 16, 16), dtype="float32") = R.broadcast_to(conv4, R.shape([1, 8, 16, 16]))
            lv3: R.Tensor((2, 1, 8, 16, 16), dtype="float32") = R.stack((lv1, lv2), axis=0)
            gv: R.Tensor((1, 8, 16, 16), dtype="float32") = R.sum(lv3, axis=[0], keepdims=False)
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


def failing_stage(mod):
    """The failing stage, convert-layout, alone."""
    with tvm.transform.PassContext(opt_level=3):
        return relax.transform.ConvertLayout({'relax.nn.conv2d': ['NHWC', 'OHWI']})(mod)


def main():
    mod = load()
    try:
        failing_stage(mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what this reproduces
        print(f"reproduces: convert-layout raised {type(exc).__name__}: "
              f"{(str(exc).splitlines() or [''])[0]}")
        return 1
    print("does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())

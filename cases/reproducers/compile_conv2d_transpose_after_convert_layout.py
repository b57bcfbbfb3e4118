#!/usr/bin/env python3
"""[Bug][Relax] tvm.compile fails after ConvertLayout on conv2d -> conv2d_transpose: CodeGenVM cannot emit this Relax operator

Seen:        error at stage compile: (exception): InternalError: CodeGenVM cannot emit this Relax operator directly. Run the appropriate lowering pass, or route the operator to an external codegen before VM codegen.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce conv-transpose-nhwc --path compile --layout nhwc
Input:       2 ONNX nodes -> 2 nodes, 15 lines of TVMScript (4 candidates, 8 s)
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
    def main(x: R.Tensor((1, 4, 32, 32), dtype="float32"), c1: R.Tensor((8, 4, 3, 3), dtype="float32"), c3: R.Tensor((8, 4, 3, 3), dtype="float32"), c4: R.Tensor((4,), dtype="float32")) -> R.Tensor((1, 4, 32, 32), dtype="float32"):
        R.func_attr({"num_input": 4})
        with R.dataflow():
            lv: R.Tensor((1, 8, 16, 16), dtype="float32") = R.nn.conv2d(x, c1, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype=None)
            lv1: R.Tensor((1, 4, 32, 32), dtype="float32") = R.nn.conv2d_transpose(lv, c3, strides=[2, 2], padding=[1, 1, 1, 1], output_padding=[1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="IOHW", out_layout="NCHW", out_dtype=None)
            lv2: R.Tensor((1, 4, 1, 1), dtype="float32") = R.reshape(c4, R.shape([1, 4, 1, 1]))
            gv: R.Tensor((1, 4, 32, 32), dtype="float32") = R.add(lv1, lv2)
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


TARGET = tvm.target.Target({'kind': 'llvm', 'num-cores': 2})


def prepare(mod):
    """The stages before the failing one, in a PassContext as users run them."""
    with tvm.transform.PassContext(opt_level=3):
        mod = relax.transform.ConvertLayout({'relax.nn.conv2d': ['NHWC', 'OHWI']})(mod)   # convert-layout
    return mod


def failing_stage(mod):
    """The failing stage, compile, alone."""
    with tvm.transform.PassContext(opt_level=3):
        return tvm.compile(mod, target=TARGET)


def main():
    mod = prepare(load())
    try:
        failing_stage(mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what this reproduces
        print(f"reproduces: compile raised {type(exc).__name__}: "
              f"{(str(exc).splitlines() or [''])[0]}")
        return 1
    print("does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())

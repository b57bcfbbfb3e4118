#!/usr/bin/env python3
"""[Bug][Relax] ConvertLayout raises std::bad_alloc on squeeze with a negative axis

Seen:        error at stage convert-layout, pass ConvertLayout (#1): (exception): InternalError: std::bad_alloc
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce node-squeeze_negative_axes-nhwc --path extract --layout nhwc
Input:       1 ONNX nodes -> 1 nodes, 12 lines of TVMScript (2 candidates, 4 s)
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
    def main(x: R.Tensor((1, 3, 1, 5), dtype="float32")) -> R.Tensor((1, 3, 5), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            gv: R.Tensor((1, 3, 5), dtype="float32") = R.squeeze(x, axis=[-2])
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

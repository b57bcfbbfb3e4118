#!/usr/bin/env python3
"""[Bug][Relax] ConvertLayout fails on stack with a negative axis: basic_string::replace out of range

Seen:        error at stage convert-layout, pass ConvertLayout: InternalError: basic_string::replace: __pos (which is 18446744073709551615) > this->size() (which is 2)
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1 (also 0.26.0, 0.25.0)
Produced by: triage of python -m harness fuzz --generator ops --seed 31 (a stack under ConvertLayout),
             varied by hand (notes/s36/triage-ops3.md); the stacked value is left unused so that
             the other InferLayoutStack bug (the "S" axis, convert_layout_sum.py) cannot show:
             with axis=1 the same module converts
Input:       one R.stack of two (2, 3) tensors with axis=-1 (torch.stack(..., dim=-1) imports so)
Run:         python convert_layout_stack_negative_axis.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
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
    def main(x0: R.Tensor((2, 3), dtype="float32"), x1: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 2), dtype="float32") = R.stack((x0, x1), axis=-1)
            gv: R.Tensor((2, 3), dtype="float32") = R.add(x0, x1)
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

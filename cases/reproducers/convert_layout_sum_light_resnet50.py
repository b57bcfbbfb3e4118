#!/usr/bin/env python3
"""error at stage convert-layout, pass ConvertLayout (#1) (tvm-extraction-harness)

Seen:        error at stage convert-layout, pass ConvertLayout (#1): (exception): InternalError: Check failed: (res != std::string::npos) is false: Invalid SLayout:can't find S in source layoutABCDE
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce light_resnet50-nhwc --path extract --layout nhwc
Input:       415 ONNX nodes -> 4 nodes, 18 lines of TVMScript (23 candidates, 7 s)
Run:         python repro.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
    from tvm import relax
except ImportError as exc:  # not "reproduces": this python cannot run the check at all
    print(f"cannot run here: {exc}; use a python with apache-tvm")
    sys.exit(2)

SCRIPT = r"""
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(gpu_0_data_0: R.Tensor((1, 3, 224, 224), dtype="float32"), r13: R.Tensor((1, 256, 56, 56), dtype="float32"), gpu_0_conv1_w_0: R.Tensor((64, 3, 7, 7), dtype="float32"), gpu_0_res2_0_branch2c_w_0: R.Tensor((256, 64, 1, 1), dtype="float32")) -> R.Tensor((1, 256, 56, 56), dtype="float32"):
        R.func_attr({"num_input": 4})
        with R.dataflow():
            lv: R.Tensor((1, 64, 112, 112), dtype="float32") = R.nn.conv2d(gpu_0_data_0, gpu_0_conv1_w_0, strides=[2, 2], padding=[3, 3, 3, 3], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype=None)
            lv1: R.Tensor((1, 64, 56, 56), dtype="float32") = R.nn.max_pool2d(lv, pool_size=[3, 3], strides=[2, 2], dilation=[1, 1], padding=[1, 1, 1, 1], ceil_mode=False, count_include_pad=False, layout="NCHW", out_layout="NCHW")
            lv2: R.Tensor((1, 256, 56, 56), dtype="float32") = R.nn.conv2d(lv1, gpu_0_res2_0_branch2c_w_0, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype=None)
            lv3: R.Tensor((1, 256, 56, 56), dtype="float32") = R.broadcast_to(lv2, R.shape([1, 256, 56, 56]))
            lv4: R.Tensor((1, 256, 56, 56), dtype="float32") = R.broadcast_to(r13, R.shape([1, 256, 56, 56]))
            lv5: R.Tensor((2, 1, 256, 56, 56), dtype="float32") = R.stack((lv3, lv4), axis=0)
            gv: R.Tensor((1, 256, 56, 56), dtype="float32") = R.sum(lv5, axis=[0], keepdims=False)
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


COPY = __import__('copy').deepcopy

TARGET = tvm.target.Target({'kind': 'llvm', 'num-cores': 2})
# The extract path up to the failing stage, each stage as the harness runs it.
STAGES = [
    ('convert-layout', lambda mod: relax.transform.ConvertLayout({'relax.nn.conv2d': ['NHWC', 'OHWI']})(mod)),
]


def run(mod, until, alone=False):
    """The stages before `until`; with alone, `until` itself (a plain PassContext, as
    users run it). "import" is load() itself: nothing runs before or for it here."""
    if until == "import":
        return mod
    with tvm.transform.PassContext(opt_level=3):
        if alone:
            return dict(STAGES)[until](mod)
        for name, stage in STAGES:
            if name == until:
                break
            mod = stage(mod)
    return mod


def outcome(result):
    """What a stage produced, comparably (as the harness compares it)."""
    if isinstance(result, list):   # tuning tasks
        return sorted((str(t.task_name), int(t.weight),
                       tuple(tvm_ffi.structural_hash(f) for f in t.dispatched)) for t in result)
    if hasattr(result, "as_text"):   # an executable
        return result.as_text()
    return tvm_ffi.structural_hash(result, map_free_vars=True)


def failing_call(mod):
    return run(mod, 'convert-layout', alone=True)


def main():
    mod = run(load(), 'convert-layout')
    try:
        failing_call(mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what this reproduces
        print(f"reproduces: convert-layout raised {type(exc).__name__}: "
              f"{(str(exc).splitlines() or [''])[0]}")
        return 1
    print("does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())

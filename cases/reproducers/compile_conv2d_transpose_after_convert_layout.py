#!/usr/bin/env python3
"""error at stage compile (tvm-extraction-harness)

Seen:        error at stage compile: (exception): InternalError: CodeGenVM cannot emit this Relax operator directly. Run the appropriate lowering pass, or route the operator to an external codegen before VM codegen.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce conv-transpose-nhwc --path compile --layout nhwc
Input:       2 ONNX nodes -> 2 nodes, 15 lines of TVMScript (4 candidates, 8 s)
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


COPY = __import__('copy').deepcopy

TARGET = tvm.target.Target({'kind': 'llvm', 'num-cores': 2})
# The compile path up to the failing stage, each stage as the harness runs it.
STAGES = [
    ('convert-layout', lambda mod: relax.transform.ConvertLayout({'relax.nn.conv2d': ['NHWC', 'OHWI']})(mod)),
    ('compile', lambda mod: tvm.compile(mod, target=TARGET)),
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
    return run(mod, 'compile', alone=True)


def main():
    mod = run(load(), 'compile')
    try:
        failing_call(mod)
    except Exception as exc:  # noqa: BLE001 - TVM's failure is what this reproduces
        print(f"reproduces: compile raised {type(exc).__name__}: "
              f"{(str(exc).splitlines() or [''])[0]}")
        return 1
    print("does not reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())

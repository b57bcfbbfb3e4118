#!/usr/bin/env python3
"""error at stage convert-layout, pass ConvertLayout (#1) (tvm-extraction-harness)

Seen:        error at stage convert-layout, pass ConvertLayout (#1): (exception): InternalError: Check failed: (msgs[i].IsNested()) is false: Expected nested to match tuple
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Produced by: python -m harness reduce light_squeezenet-nhwc --path extract --layout nhwc
Input:       105 ONNX nodes -> 1 nodes, 15 lines of TVMScript (14 candidates, 10 s)
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
    def main(r60: R.Tensor((1, 512, 13, 13), dtype="float32")) -> R.Tensor((1, 512, 13, 13), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tuple(R.Tensor((1, 512, 13, 13), dtype="float32"), R.Tensor((1, 512, 13, 13), dtype="float32")) = R.nn.dropout(r60, rate=0.5)
            lv1: R.Tensor((1, 512, 13, 13), dtype="float32") = lv[0]
            lv2: R.Tensor((1, 512, 13, 13), dtype="float32") = lv[1]
            gv: R.Tensor((1, 512, 13, 13), dtype="float32") = lv1
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

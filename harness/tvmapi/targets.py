"""Targets as users write them, made into what each release accepts, and what each can
compile here.

0.27 refuses the CLI string form ("llvm -mcpu=skylake") and wants the dict form; `num-cores`
exists for some kinds only; array options want lists. A target TVM refuses is bad input.

Whether a target compiles on this machine is measured, never assumed (`probe`): its code
generator must be in the build, and `tvm.compile` of a tiny module must succeed. No device
is needed for cuda, metal, opencl and webgpu: with no device runtime registered, 0.25 to
0.27 keep the kernels' source in the executable (CUDA C, Metal, OpenCL C, WGSL) and call no
compiler (NVRTC, nvcc, xcrun); a machine with a CUDA driver compiles with NVRTC instead.
A refusal TVM words as a missing code generator or toolchain (`_MISSING`) makes the target
untestable here (exit 125) with TVM's own words; any other failure is TVM's, left to the path.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import re
from typing import Any

from harness.classify import Call, summary
from harness.tvmapi import calls, ir
from harness.tvmapi.loading import TVMUnavailable, ffi, tvm
from harness.verdict import BadInput


def target_config(text: str) -> dict:
    """The target a user named, as the dict TVM takes: a kind ("llvm"), TVM's JSON form
    ('{"kind": "llvm", "mcpu": "skylake"}'), or the CLI string form 0.27 refuses
    ("llvm -mcpu=skylake -mattr=+avx2,+fma": comma lists become arrays, numbers ints)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise BadInput(f"--target {text!r} is not valid JSON ({exc})") from None
        if not isinstance(config, dict) or not isinstance(config.get("kind"), str):
            raise BadInput(f"--target {text!r}: the JSON form needs a \"kind\", e.g. "
                           '{"kind": "llvm", "mcpu": "skylake"}')
        return config
    words = text.split()
    if not words:
        raise BadInput("--target is empty: give a target kind, e.g. llvm")
    config: dict[str, Any] = {"kind": words[0]}
    for word in words[1:]:
        key, has_value, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not key:
            raise BadInput(f"--target {text!r}: options are written -KEY=VALUE or -FLAG, "
                           f"not {word!r}")
        config[key] = _target_value(value) if has_value else True
    return config


def _target_value(text: str):
    if "," in text:
        return [part for part in text.split(",") if part]
    if text.lstrip("-").isdigit():
        return int(text)
    return {"true": True, "false": False}.get(text.lower(), text)


def make_target(text: str, num_cores: int):
    """The Target, with `num-cores` where the kind takes it (llvm does, cuda and c do not).
    A target TVM refuses is bad input, with TVM's one-line reason."""
    return tvm().target.Target(target_dict(text, num_cores))


# TVM's refusal of a single value where its schema wants an array ("-mattr=+avx2").
_WANTS_ARRAY = re.compile(r"Option '([^']+)': expected type 'Array<")


@functools.lru_cache(maxsize=64)
def _accepted(config_json: str, num_cores: int) -> str:
    """The config (as JSON) TVM makes a Target of: num-cores added where the kind takes it,
    a single value made a list where TVM's schema wants an array."""
    config = json.loads(config_json)
    with_cores = "num-cores" not in config
    for _ in range(len(config) + 2):
        candidate = {**config, "num-cores": num_cores} if with_cores else config
        created = Call.of("", tvm().target.Target, candidate)
        if created.ok:
            return json.dumps(candidate)
        text = str(created.error)   # TVM's refusal text decides
        wants_array = _WANTS_ARRAY.search(text)
        if with_cores and "option 'num-cores'" in text:   # "Unknown config option ..."
            with_cores = False        # this kind takes no num-cores (cuda, c)
        elif wants_array and isinstance(config.get(wants_array.group(1)), str):
            config[wants_array.group(1)] = [config[wants_array.group(1)]]
        else:
            raise BadInput(f"TVM refuses it: {created.detail}")
    raise BadInput(f"TVM refuses it: {json.dumps(config)}")


def target_dict(text: str, num_cores: int) -> dict:
    """The config TVM accepted for --target `text` (what a reproducer spells out)."""
    config = target_config(text)
    try:
        return json.loads(_accepted(json.dumps(config, sort_keys=True), num_cores))
    except BadInput as exc:
        raise BadInput(f"--target {text!r}: {exc}") from None


# TVM's words for "this machine lacks what the target's code generation needs" (every word
# of an entry in the error's text), each with what is missing. Measured on 0.25.0 to
# 0.27.0.post1 where not said otherwise.
_MISSING = (
    # The host's code generator not in this build (a device kind's is probed by name).
    (("Cannot find global function target.build.",), "a code generator this TVM build lacks"),
    # tvm/support/rocm.py find_rocm_path: no ROCM_PATH, hipcc or /opt/rocm.
    (("Cannot find ROCm path",), "the ROCm toolchain (ROCM_PATH, hipcc or /opt/rocm)"),
    # LLVM built without the backend of an -mtriple (the 0.27 wheel has all of LLVM 22's).
    (("No available targets are compatible with triple",), "an LLVM backend for this triple"),
    # nvptx: tvm/support/nvcc.py looks for libdevice under CUDA_PATH or nvcc's root (an nvcc
    # wrapper script in /usr/local/bin made it look in /usr/local: measured).
    (("No such file or directory", "libdevice"), "the CUDA toolkit's libdevice (CUDA_PATH)"),
    (("Cannot find libdevice",), "the CUDA toolkit's libdevice (CUDA_PATH)"),
    # Read from tvm/support/nvcc.py, not reached through tvm.compile here: with a CUDA
    # driver TVM compiles the kernels with NVRTC (the callback's refusal measured alone).
    (("Cannot find CUDA path",), "the CUDA toolkit (CUDA_PATH or nvcc on PATH)"),
    (("`cuda-bindings` package is not available",), "NVRTC: pip install cuda-bindings"),
)


@dataclasses.dataclass(frozen=True)
class Probe:
    """What `tvm.compile` makes of a tiny module for one target on this machine."""
    target: str                    # the Target as TVM prints it
    produces: tuple[str, ...] = ()  # the code parts' kinds, host first: ("llvm", "cuda")
    missing: str = ""              # what it lacks here, with TVM's words (cannot test)
    error: str = ""                # TVM failed otherwise: the path will show it, not decided here

    @property
    def compiles(self) -> bool:
        return not self.missing and not self.error


def _tiny_module():
    """x + 1, relu: one elementwise kernel (dlight's fallback rule schedules it on a GPU)."""
    relax, op = tvm().relax, ir.relax_op()
    builder = ir.block_builder()
    x = relax.Var("x", ir.tensor_annotation((1, 16), "float32"))
    with builder.function("main", [x]):
        with builder.dataflow():
            out = builder.emit_output(builder.emit(op.nn.relu(
                op.add(x, relax.const(1.0, "float32")))))
        builder.emit_func_output(out)
    return builder.get()


_PROBED: dict[str, Probe] = {}


def probe(target) -> Probe:
    """Whether `target` (a Target) compiles here, and to what: measured once a process
    (about 0.1 s). Only a machine fact is kept (it compiles, or lacks a code generator or
    toolchain): TVM failing otherwise is measured again at the next asking, so one failure
    (a fault a test seeds into the compile) never answers for the rest of the process."""
    key = str(target)
    if key in _PROBED:
        return _PROBED[key]
    found = _measure(target, key)
    if not found.error:
        _PROBED[key] = found
    return found


def _measure(target, key: str) -> Probe:
    kind = str(target.kind.name)
    if ffi().get_global_func(f"target.build.{kind}", allow_missing=True) is None:
        return Probe(key, missing=f"this TVM build has no {kind} code generator "
                                  f"(target.build.{kind} is not registered)")

    def compile_tiny():
        with calls.pass_context():   # a plain one: no guard's instrument
            return calls.compile_module(_tiny_module(), target)
    compiled = Call.of("compile", compile_tiny)     # ours leaves as a HarnessBug
    if compiled.ok:
        return Probe(key, tuple(str(part.kind) for part in calls.code_parts(compiled.value)))
    text = f"{type(compiled.error).__name__}: {compiled.error}"
    lacks = next((what for words, what in _MISSING if all(w in text for w in words)), None)
    if lacks:
        return Probe(key, missing=f"needs {lacks}; TVM: {compiled.detail[:300]}")
    return Probe(key, error=summary(compiled.error, limit=8))   # with where it was raised


def require_codegen(target) -> None:
    """Cannot test here (TVMUnavailable, exit 125) when the target cannot compile on this
    machine for want of a code generator or toolchain; else nothing."""
    found = probe(target)
    if found.missing:
        raise TVMUnavailable(f"target {target.kind.name} cannot compile here: {found.missing}")


def schedules_for_device(target) -> bool:
    """`tvm.compile` runs the target's own pipeline (dlight's schedules, GPU lowering) under
    the target, as relax/vm_build.py decides it on 0.25 to 0.27: its keys name a GPU."""
    return "gpu" in [str(key) for key in target.keys]

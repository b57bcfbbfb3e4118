#!/usr/bin/env python3
"""Reproducer: tvm.compile for a plain `hexagon` target fails in s_tir.VerifyVTCMLimit with
"RuntimeError: Back optional access" (sic: tvm-ffi's words for an empty Optional's value()).

Seen:        python -m harness check conv-reshape-concat --path compile --target hexagon
             (and every other case): error at stage compile, pass s_tir.VerifyVTCMLimit.
             No Hexagon SDK or device needed to reach it.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       GetVTCMCapacity (src/s_tir/analysis/calculate_allocated_memory.cc) reads the
             target's "vtcm-capacity" with .value(); the hexagon target kind gives that
             attribute no default, so a target without it fails. {"kind": "hexagon",
             "vtcm-capacity": 0} compiles the same module.
Run:         python verify_vtcm_limit_bad_optional_access.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
TENSOR = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | 0.26 on

builder = relax.BlockBuilder()
x = relax.Var("x", TENSOR((1, 16), "float32"))
with builder.function("main", [x]):
    with builder.dataflow():
        out = builder.emit_output(builder.emit(relax.op.nn.relu(x)))
    builder.emit_func_output(out)
module = builder.get()

try:
    tvm.compile(module, target=tvm.target.Target({"kind": "hexagon", "vtcm-capacity": 0}))
except Exception as exc:  # noqa: BLE001 - without the control the answer means nothing
    print(f"cannot run here: hexagon with a vtcm-capacity does not compile: {type(exc).__name__}")
    sys.exit(2)
try:
    tvm.compile(module, target=tvm.target.Target({"kind": "hexagon"}))
except Exception as exc:  # noqa: BLE001 - which error it is decides the answer
    said = str(exc).strip().splitlines()[-1]
    if "optional access" in said:
        print(f"reproduces: with vtcm-capacity 0 it compiles, without it: {type(exc).__name__}: "
              f"{said}")
        sys.exit(1)
    print(f"does not reproduce: the plain hexagon target fails otherwise: {said}")
    sys.exit(0)
print("does not reproduce: the plain hexagon target compiles")
sys.exit(0)

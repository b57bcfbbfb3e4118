#!/usr/bin/env python3
"""Reproducer: a module holding a zero-size tensor constant does not survive save_json/load_json.

Seen:        lossy-roundtrip at stage import (copy, deepcopy and json) on tv-swin3d_t-onnx
             (python -m harness report: "deepcopy copy of the input failed: InternalError:
             Check failed: (read_ret) is false: Invalid DLTensor file format"): the ONNX
             export of torchvision's swin3d_t carries 36 constants with a 0-length axis
             (e.g. (21, 21, 0)), and neither copy.deepcopy (TVM's is save_json + load_json)
             nor an explicit JSON round trip can copy the module: the seed bug's symptom
             (the copy workaround crashing), on another field.
On:          apache-tvm 0.25.0, 0.26.0, 0.27.0.post1 (tvm-ffi 0.1.12 / 0.1.14.post1)
Cause:       save_json writes the tensor's zero bytes and load_json's reader then fails to
             read the tensor back.
Run:         python json_zero_size_constant.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import numpy
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

constant = relax.const(numpy.zeros((2, 0), "float32"))
try:
    tvm.ir.load_json(tvm.ir.save_json(constant))
except Exception as exc:  # noqa: BLE001 - the loader's failure is what this reproduces
    print(f"reproduces: a (2, 0) constant does not load back from its own JSON "
          f"({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]})")
    sys.exit(1)
print("does not reproduce: the zero-size constant round-trips")
sys.exit(0)

#!/usr/bin/env python3
"""Reproducer: a subnormal float attrs field does not survive copy.deepcopy / load_json.

Found by `python -m harness attrs` (hypothesis shrank it to one field) on apache-tvm
0.27.0.post1 / apache-tvm-ffi 0.1.14.post1. save_json writes valid JSON
("momentum":2.2250738585072034e-309) but load_json refuses it ("Expecting value"),
so deep-copying any module with such an attrs value raises.
Exit 1: reproduces, 0: does not, 2: cannot run here.
"""
import copy
import sys

try:
    import tvm
    import tvm.relax
except ImportError as exc:
    print(f"cannot run: {exc}")
    sys.exit(2)

attrs = tvm.ir.make_node("relax.attrs.BatchNormAttrs", axis=1, epsilon=1e-5, center=True,
                         scale=True, momentum=2.2250738585072034e-309, training=False)
text = tvm.ir.save_json(attrs)
print("save_json:", text)
try:
    copy.deepcopy(attrs)
except Exception as exc:  # noqa: BLE001
    print(f"reproduces: copy.deepcopy failed: {type(exc).__name__}: {exc}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

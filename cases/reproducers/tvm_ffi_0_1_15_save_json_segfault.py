#!/usr/bin/env python3
"""Reproducer: apache-tvm-ffi 0.1.15.x segfaults in tvm::ffi::ToJSONGraph on any object.

Seen:        crash (SIGSEGV) in every check: save_json / copy.deepcopy of any IRModule
On:          apache-tvm 0.27.0.post1 (and 0.26.0) / apache-tvm-ffi 0.1.15.post1, 0.1.15.post2;
             fixed by pinning apache-tvm-ffi 0.1.14.post1 (setup.cfg)
Produced by: python -m harness check conv-reshape-concat (in an env with ffi 0.1.15.post2),
             then reduced by hand to one IntImm
Run:         python tvm_ffi_0_1_15_save_json_segfault.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import os
import sys

try:
    import tvm
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

value = tvm.tirx.IntImm("int64", 1) if hasattr(tvm, "tirx") else tvm.tir.IntImm("int64", 1)
pid = os.fork()
if pid == 0:   # the call that kills the process runs in a child
    tvm.ir.save_json(value)
    os._exit(0)
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    print(f"reproduces: tvm.ir.save_json(IntImm) killed the process (signal {os.WTERMSIG(status)})")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)

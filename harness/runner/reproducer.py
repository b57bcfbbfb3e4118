"""Write a failing example out as what a user attaches to an upstream bug report.

A folder with `model.onnx` and `repro.py`: a standalone script (tvm, tvm_ffi,
onnx, numpy and the standard library only) that runs the same stages with the
same checks and exits 1 when the violation reproduces, 0 when it does not.
Seeded hooks (an injected pass, a lossy copier) are embedded as source text.
"""
from __future__ import annotations

import json
import os

import onnx

TEMPLATE = r'''#!/usr/bin/env python3
"""Reproducer written by tvm-extraction-harness.

Violation seen: {violation}
Found on apache-tvm {tvm_version} / apache-tvm-ffi {tvm_ffi_version}; input door: {door}.
Run: python repro.py   (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import copy
import json
import os
import sys

try:
    import numpy as np  # noqa: F401  (the model's weights are numpy arrays)
    import onnx
    import tvm
    import tvm_ffi
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
except ImportError as exc:  # not "reproduces": this python cannot run the check at all
    print(f"cannot run: {{exc}}; use a python with apache-tvm, onnx and numpy")
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
DESIRED_LAYOUTS = json.loads({desired!r})
TARGET = {{"kind": {target!r}, "num-cores": 2}}
HOOKS_SOURCE = {hooks_source!r}
INJECT_NAME = {inject_name!r}
INJECT_BEFORE = {inject_before!r}
COPIER_EXPR = {copier_expr!r}

hooks = {{}}
if HOOKS_SOURCE:
    exec(compile(HOOKS_SOURCE, "hooks", "exec"), hooks)


def meta_schedule():
    try:
        from tvm.s_tir import meta_schedule as ms
    except ImportError:
        from tvm import meta_schedule as ms
    return ms


def run_pass(p, mod):
    with tvm.transform.PassContext(opt_level=3):
        return p(mod)


def stages():
    out = []
    if DESIRED_LAYOUTS:
        out.append(("convert-layout", lambda m: run_pass(relax.transform.ConvertLayout(DESIRED_LAYOUTS), m)))
    out += [
        ("decompose-ops-for-inference", lambda m: run_pass(relax.transform.DecomposeOpsForInference(), m)),
        ("canonicalize-bindings", lambda m: run_pass(relax.transform.CanonicalizeBindings(), m)),
        ("zero-pipeline", lambda m: run_pass(relax.get_pipeline("zero"), m)),
        ("attach-attr-layout-free-buffers", lambda m: run_pass(relax.transform.AttachAttrLayoutFreeBuffers(), m)),
        ("extract-tasks", lambda m: list(meta_schedule().relax_integration.extract_tasks(m, tvm.target.Target(TARGET)))),
    ]
    if INJECT_NAME:
        fn = hooks[INJECT_NAME]
        p = fn if isinstance(fn, tvm.transform.Pass) else tvm.transform.module_pass(
            lambda m, _c: fn(m), opt_level=0, name="injected")
        names = [n for n, _ in out]
        out.insert(names.index(INJECT_BEFORE), ("injected", lambda m: run_pass(p, m)))
    return out


def copiers():
    json_copy = eval(COPIER_EXPR, hooks) if COPIER_EXPR else (lambda m: tvm.ir.load_json(tvm.ir.save_json(m)))
    return [("deepcopy", copy.deepcopy), ("json", json_copy)]


def signatures(tasks):
    return [(str(t.task_name), tvm_ffi.structural_hash(t.dispatched[0]), int(t.weight)) for t in tasks]


def check_copies(mod, where, problems):
    good = []
    for name, copier in copiers():
        try:
            dup = copier(mod)
        except Exception as exc:
            problems.append(f"{{where}}: {{name}} copy failed: {{type(exc).__name__}}: {{exc}}")
            continue
        mismatch = tvm_ffi.get_first_structural_mismatch(mod, dup)
        if mismatch is not None:
            problems.append(f"{{where}}: {{name}} copy differs at {{mismatch[0]}}")
        good.append((name, dup))
    return good


def main():
    mod = from_onnx(onnx.load(os.path.join(HERE, "model.onnx")))
    problems = []
    check_copies(mod, "source", problems)
    source_hash = tvm_ffi.structural_hash(mod)
    current, before_extract = mod, None
    for name, run in stages():
        input_hash = tvm_ffi.structural_hash(current)
        if name == "extract-tasks":
            before_extract = current
        out = run(current)
        if tvm_ffi.structural_hash(mod) != source_hash:
            problems.append(f"stage {{name}} mutated the source IRModule in place")
            source_hash = tvm_ffi.structural_hash(mod)
        elif current is not mod and tvm_ffi.structural_hash(current) != input_hash:
            problems.append(f"stage {{name}} mutated its input IRModule in place")
        current = out
    expected = signatures(current)
    extract = stages()[-1][1]
    for name, dup in check_copies(before_extract, "extract-tasks input", problems):
        if signatures(extract(dup)) != expected:
            problems.append(f"extraction on the {{name}} copy gives other tasks")
    for problem in problems:
        print("VIOLATION:", problem)
    print("reproduces" if problems else "does not reproduce")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _hooks(inject_pass: str | None, copier: str | None) -> tuple[str, str | None, str | None]:
    """Source text of the (single) hooks file and the names to use from it."""
    files, inject_name, copier_expr = set(), None, None
    if inject_pass:
        path, inject_name = inject_pass.rsplit(":", 1)
        files.add(path)
    if copier:
        path, copier_expr = copier.split(":", 1)
        files.add(path)
    if len(files) > 1:
        raise ValueError("an injected pass and a copier must come from the same file")
    if not files:
        return "", None, None
    with open(files.pop()) as handle:
        return handle.read(), inject_name, copier_expr


def write(out_dir: str, model: onnx.ModelProto, *, violation: str, desired: dict | None,
          target: str = "llvm", inject_pass: str | None = None,
          inject_before: str = "extract-tasks", copier: str | None = None,
          door: str = "onnx", versions: dict | None = None, spec_text: str = "") -> str:
    """Write model.onnx, repro.py and spec.txt into out_dir; return repro.py's path."""
    os.makedirs(out_dir, exist_ok=True)
    onnx.save(model, os.path.join(out_dir, "model.onnx"))
    source, inject_name, copier_expr = _hooks(inject_pass, copier)
    versions = versions or {}
    script = TEMPLATE.format(
        violation=violation.replace('"""', "'''"), door=door,
        tvm_version=versions.get("tvm_version"), tvm_ffi_version=versions.get("tvm_ffi_version"),
        desired=json.dumps(desired or {}), target=target, hooks_source=source,
        inject_name=inject_name, inject_before=inject_before, copier_expr=copier_expr)
    path = os.path.join(out_dir, "repro.py")
    with open(path, "w") as handle:
        handle.write(script)
    os.chmod(path, 0o755)
    if spec_text:
        with open(os.path.join(out_dir, "spec.txt"), "w") as handle:
            handle.write(spec_text + "\n")
    return path

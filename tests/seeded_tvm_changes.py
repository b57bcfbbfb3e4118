"""Seeded changes to a real apache/tvm checkout, as patches on its HEAD made from its own
text: what `try` must answer (bench/try_seeded.py measures them side by side; the nightly
tests in tests/test_try.py assert them). Each edit's anchor must still be in the file:
a checkout that moved on says so instead of patching something else.
"""
from __future__ import annotations

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRONTEND = "python/tvm/relax/frontend/onnx/onnx_frontend.py"
FUSE_OPS = "src/relax/transform/fuse_ops.cc"
# name -> (file, anchor or None to append, replacement)
EDITS = {
    # nothing to run, said in seconds
    "docs": ("README.md", None, "\nA line of documentation.\n"),
    # Python only (no build): ONNX DepthToSpace's CRD permutation made wrong
    "converter": (FRONTEND, "x = relax.op.permute_dims(x, [0, 1, 4, 2, 5, 3])",
                  "x = relax.op.permute_dims(x, [0, 1, 4, 3, 5, 2])"),
    # C++ (an incremental build): FuseOps writes its result into its input module
    "pass": (FUSE_OPS,
             "        return relax::FuseOps(m, opt_level, "
             "static_cast<size_t>(max_fuse_depth.value()));",
             "        IRModule fused = relax::FuseOps(m, opt_level, "
             "static_cast<size_t>(max_fuse_depth.value()));\n"
             "        // seeded fault: the input module is rewritten in place\n"
             "        const_cast<IRModuleNode*>(m.operator->())->functions = fused->functions;\n"
             "        return fused;"),
}
# a registered bug's fix (named as fixing it, nothing else changed)
FIX = os.path.join(ROOT, "cases", "fixes", "onnx-spacetodepth-mode-ignored.patch")
FIXED_ENTRY = "onnx-spacetodepth-mode-ignored"


def patch(source: str, name: str, folder: str) -> str:
    """The seeded change `name` as a patch file in `folder` (the fix: its checked-in file)."""
    if name == "fix":
        return FIX
    path, old, new = EDITS[name]
    text = subprocess.run(["git", "-C", source, "show", f"HEAD:{path}"], capture_output=True,
                          text=True, check=True).stdout
    if old is not None and old not in text:
        raise ValueError(f"{path} at HEAD no longer holds {old.strip()[:60]!r}")
    edited = text + new if old is None else text.replace(old, new, 1)
    before, after = os.path.join(folder, "before"), os.path.join(folder, "after")
    with open(before, "w") as handle:
        handle.write(text)
    with open(after, "w") as handle:
        handle.write(edited)
    diff = subprocess.run(["diff", "-u", "--label", f"a/{path}", "--label", f"b/{path}",
                           before, after], capture_output=True, text=True).stdout
    made = os.path.join(folder, f"seeded-{name}.patch")
    with open(made, "w") as handle:
        handle.write(diff)
    return made

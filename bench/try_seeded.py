"""`try` on four seeded changes to a real TVM checkout, side by side: what each selects,
whether it finds what was seeded, what it builds, and how long it takes.

    .venv/bin/python bench/try_seeded.py --source ~/tvm [--store DIR] [--build-dir DIR]
        [--only docs,converter,fix,pass]

The changes, each a patch on the checkout's HEAD made here from its own text (so the
script runs on any commit that still has the lines it edits):

* docs: a line added to README.md (nothing to run, said in seconds);
* converter: ONNX DepthToSpace's CRD permutation made wrong (Python only: no build; a
  wrong answer on the compile path);
* fix: cases/known_issues/fixes/onnx-spacetodepth-mode-ignored.patch (the registered
  SpaceToDepth bug: named as fixed, nothing new);
* pass: FuseOps made to write its result into its input module (C++: an incremental
  build with ccache; a mutation found by the pass's sweep rows and the sample).

A try's state is kept per change (`--state`), so a second run of this script reads the
answers back; `--fresh` measures again.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRONTEND = "python/tvm/relax/frontend/onnx/onnx_frontend.py"
FUSE_OPS = "src/relax/transform/fuse_ops.cc"
EDITS = {
    "docs": ("README.md", None, "\nA line of documentation.\n"),
    "converter": (FRONTEND, "x = relax.op.permute_dims(x, [0, 1, 4, 2, 5, 3])",
                  "x = relax.op.permute_dims(x, [0, 1, 4, 3, 5, 2])"),
    "pass": (FUSE_OPS,
             "        return relax::FuseOps(m, opt_level, "
             "static_cast<size_t>(max_fuse_depth.value()));",
             "        IRModule fused = relax::FuseOps(m, opt_level, "
             "static_cast<size_t>(max_fuse_depth.value()));\n"
             "        // seeded fault: the input module is rewritten in place\n"
             "        const_cast<IRModuleNode*>(m.get())->functions = fused->functions;\n"
             "        return fused;"),
}
FIX = os.path.join(ROOT, "cases", "known_issues", "fixes", "onnx-spacetodepth-mode-ignored.patch")


def _patch(source: str, name: str, folder: str) -> str:
    if name == "fix":
        return FIX
    path, old, new = EDITS[name]
    text = subprocess.run(["git", "-C", source, "show", f"HEAD:{path}"], capture_output=True,
                          text=True, check=True).stdout
    if old is None:
        edited = text + new
    elif old in text:
        edited = text.replace(old, new, 1)
    else:
        raise SystemExit(f"try_seeded: {path} at HEAD no longer holds {old.strip()[:60]!r}")
    before, after = os.path.join(folder, "before"), os.path.join(folder, "after")
    with open(before, "w") as handle:
        handle.write(text)
    with open(after, "w") as handle:
        handle.write(edited)
    diff = subprocess.run(["diff", "-u", "--label", f"a/{path}", "--label", f"b/{path}",
                           before, after], capture_output=True, text=True).stdout
    patch = os.path.join(folder, f"seeded-{name}.patch")
    with open(patch, "w") as handle:
        handle.write(diff)
    return patch


def _built(side: dict) -> str:
    build = side["build"]
    return "reused" if build["reused"] else f"{build['seconds']} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=os.environ.get("HARNESS_TVM_SOURCE"))
    parser.add_argument("--store", default=None)
    parser.add_argument("--build-dir", default=None)
    parser.add_argument("--state", default=None)
    parser.add_argument("--only", default="docs,converter,fix,pass")
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    if not args.source:
        print("try_seeded: give --source TVM_CHECKOUT (or HARNESS_TVM_SOURCE)", file=sys.stderr)
        return 2
    figures = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.only.split(","):
            argv = [sys.executable, "-m", "harness", "try", "--source", args.source, "--base",
                    "HEAD", "--patch", _patch(args.source, name, folder), "--json", "--jobs",
                    "2"]
            for flag in ("store", "build_dir", "state"):
                if getattr(args, flag):
                    argv += [f"--{flag.replace('_', '-')}", getattr(args, flag)]
            argv += ["--fresh"] if args.fresh else []
            print(f"try_seeded: {name} ...", file=sys.stderr, flush=True)
            started = time.monotonic()
            proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
            seconds = time.monotonic() - started
            try:
                answer = json.loads(proc.stdout)
            except ValueError:
                print(proc.stderr[-3000:], file=sys.stderr)
                figures.append((name, proc.returncode, "-", "-", "-", "-", seconds))
                continue
            sides = {side["side"]: side for side in answer.get("sides", [])}
            builds = ", ".join(f"{side_name}: {_built(side)}"
                               for side_name, side in sides.items()) or "none"
            found = "; ".join(f"new {item['row']}" for item in answer.get("new", [])[:2]) or \
                "; ".join(f"fixes {item['entry']}" for item in answer.get("fixes", [])) or "-"
            figures.append((name, proc.returncode, answer["selection"]["checks"],
                            answer["nightly_checks"], builds, found, seconds))
    print(f"{'change':10} {'exit':>4} {'checks':>7} {'nightly':>8}  {'wall':>7}  builds; found")
    for name, code, checks, nightly, builds, found, seconds in figures:
        print(f"{name:10} {code:>4} {checks!s:>7} {nightly!s:>8}  {seconds:6.0f}s  {builds}; "
              f"{found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

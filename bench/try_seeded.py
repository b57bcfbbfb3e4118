"""`try` on four seeded changes to a real TVM checkout, side by side: what each selects,
whether it finds what was seeded, what it builds, and how long it takes.

    .venv/bin/python bench/try_seeded.py --source ~/tvm [--store DIR] [--build-dir DIR]
        [--only docs,converter,fix,pass]

The changes, each a patch on the checkout's HEAD made here from its own text (so the
script runs on any commit that still has the lines it edits):

* docs: a line added to README.md (nothing to run, said in seconds);
* converter: ONNX DepthToSpace's CRD permutation made wrong (Python only: no build; a
  wrong answer on the compile path);
* fix: cases/fixes/onnx-spacetodepth-mode-ignored.patch (the registered
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
sys.path.insert(0, os.path.join(ROOT, "tests"))

import seeded_tvm_changes  # noqa: E402


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
            patch = seeded_tvm_changes.patch(args.source, name, folder)
            argv = [sys.executable, "-m", "harness", "try", "--source", args.source, "--base",
                    "HEAD", "--patch", patch, "--json", "--jobs", "2"]
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

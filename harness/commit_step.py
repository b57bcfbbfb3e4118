"""`python -m harness bisect-step`: one step of `git bisect run` over a TVM checkout.

Builds the checked-out commit incrementally (cmake + ninja into DIR/build, with
the machine's LLVM), exits 125 when the build fails so git skips the commit, and
otherwise runs the check against that build and exits with its code. Recipe:

    cd ~/tvm && git bisect start BAD GOOD
    git bisect run python -m harness bisect-step --tvm-source ~/tvm yolov3-tiny-nhwc
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys

from .verdict import EXIT_CANNOT_TEST, BadInput

LLVM_CONFIG = os.environ.get("HARNESS_LLVM_CONFIG", "llvm-config-14")


def default_build(source: str, jobs: int) -> list[list[str]]:
    build = os.path.join(source, "build")
    return [
        ["cmake", "-S", source, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         f"-DUSE_LLVM={LLVM_CONFIG} --link-static", "-DHIDE_PRIVATE_SYMBOLS=ON"],
        ["ninja", "-C", build, f"-j{jobs}"],
    ]


def check_env(source: str) -> dict:
    """Run the check against the checkout: the harness, then its python/ and build/."""
    env = dict(os.environ)
    harness_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [harness_root, os.path.join(source, "python"),
             os.path.join(source, "3rdparty", "tvm-ffi", "python")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths + [env.get("PYTHONPATH", "")] if p)
    env["TVM_LIBRARY_PATH"] = os.path.join(source, "build")
    return env


def cmd_bisect_step(args) -> int:
    source = os.path.abspath(args.tvm_source)
    if not os.path.isdir(os.path.join(source, ".git")):
        raise BadInput(f"--tvm-source {source} is not a git checkout")
    builds = ([shlex.split(args.build_command)] if args.build_command
              else default_build(source, args.jobs))
    for argv in builds:
        print(f"bisect-step: {' '.join(argv)}", file=sys.stderr, flush=True)
        if subprocess.run(argv, cwd=source).returncode != 0:
            print("bisect-step: build failed: skip this commit (125)", file=sys.stderr)
            return EXIT_CANNOT_TEST
    if args.check_command:
        check = shlex.split(args.check_command)
    else:
        check = [sys.executable, "-m", "harness", "check", args.case, "--quiet"]
        check += ["--layout", args.layout] if args.layout else []
    env = check_env(source)
    code = subprocess.run(check, cwd=source, env=env).returncode
    if code in (0, 1, EXIT_CANNOT_TEST):
        return code
    # Usage error or a harness bug: 128 makes `git bisect run` stop instead of
    # marking the commit bad.
    print(f"bisect-step: the check itself failed (exit {code}): aborting the bisect",
          file=sys.stderr)
    return 128


def register(sub) -> None:
    p = sub.add_parser("bisect-step", help="one `git bisect run` step over a TVM source checkout")
    p.add_argument("case", nargs="?", default="yolov3-tiny")
    p.add_argument("--tvm-source", required=True, metavar="DIR")
    p.add_argument("--layout", choices=["nchw", "nhwc"], default=None)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--build-command", default=None,
                   help="instead of cmake+ninja (run in DIR; non-zero means skip)")
    p.add_argument("--check-command", default=None,
                   help="instead of `harness check CASE` (run in DIR with the build on the path)")
    p.set_defaults(func=cmd_bisect_step)

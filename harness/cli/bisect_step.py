"""`python -m harness bisect-step`: one `git bisect run` step over a TVM or tvm-ffi checkout.

The options and the exit code; running the check against a checkout and deciding the
commit live in harness.versions.commit_step (its docstring has the recipe), building it in
versions.source_build, checking it out in versions.source_checkout.
"""
from __future__ import annotations

import os
import sys

from harness.catalog import cases as catalog
from harness.cli.options import add_decision_options, positive_int
from harness.options import LAYOUTS
from harness.signature import Pattern
from harness.verdict import BadInput
from harness.versions import commit_step


def cmd_bisect_step(args) -> int:
    if args.check_command and (args.match or args.any):
        raise BadInput("--match and --any read what `harness check` shows; a "
                       "--check-command of your own is judged by its exit code")
    if args.match:
        Pattern.parse(args.match)   # a bad pattern is bad input before any build
    if not args.check_command:   # a file by its absolute path: the check may run elsewhere
        args.case = catalog.resolve(args.case).id
    source = os.path.abspath(args.source)
    if not os.path.isdir(os.path.join(source, ".git")) and not os.path.isfile(
            os.path.join(source, ".git")):
        raise BadInput(f"--source {source} is not a git checkout")
    phases = commit_step.Phases()
    try:
        if args.package == "apache-tvm":
            code = commit_step.step_tvm(args, source, phases)
        else:
            code = commit_step.step_ffi(args, source, phases)
    except commit_step.EnvironmentProblem as exc:
        print(f"bisect-step: cannot bisect here: {exc}", file=sys.stderr, flush=True)
        return commit_step.EXIT_ABORT
    commit_step.log(f"exit {code} ({phases.summary()})")
    return code


def register(sub) -> None:
    p = sub.add_parser("bisect-step", help="one `git bisect run` step over a TVM or tvm-ffi "
                                           "source checkout")
    p.add_argument("case", nargs="?", default="yolov3-tiny")
    p.add_argument("--source", "--tvm-source", required=True, metavar="DIR",
                   help="the checkout git bisects (apache/tvm, or apache/tvm-ffi with --package)")
    p.add_argument("--package", choices=["apache-tvm", "apache-tvm-ffi"], default="apache-tvm")
    p.add_argument("--with", dest="with_", action="append", metavar="PKG==VER",
                   help="with --package apache-tvm-ffi: the TVM release to check against")
    p.add_argument("--build-dir", default=None, metavar="DIR",
                   help="kept across steps for incremental builds (default SOURCE/build)")
    p.add_argument("--layout", choices=sorted(LAYOUTS), default=None)
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1)
    p.add_argument("--no-ccache", action="store_true", help="build without ccache even if present")
    p.add_argument("--build-only", action="store_true",
                   help="build (and cache the tvm_ffi package), do not check")
    p.add_argument("--untestable", choices=["skip", "bad"], default="skip",
                   help="a TVM that cannot be tested (does not import): skip the commit, or "
                        "count it bad (an ABI bisect: the symptom is the import failing)")
    p.add_argument("--build-command", action="append", default=None,
                   help="instead of the TVM build (run in DIR; non-zero means skip; repeatable)")
    p.add_argument("--check-command", default=None,
                   help="instead of `harness check CASE` (run in DIR with the build on the "
                        "path; judged by its exit code)")
    add_decision_options(p, "commit", "a violation the known-issue registry does not explain")
    p.set_defaults(func=cmd_bisect_step)

"""`python -m harness bisect`: which release of a package broke an invariant.

The options and the run; the search, the steps and what decides good or bad live in
harness.versions.bisect.
"""
from __future__ import annotations

import os
import shlex
import sys
import time

from harness.catalog import cases as catalog
from harness.cli import commit_bisect
from harness.cli.options import add_decision_options, positive_float, positive_int
from harness.options import LAYOUTS, PATH_NAMES
from harness.signature import Pattern
from harness.verdict import BadInput
from harness.versions import bisect, envs
from harness.versions.commit_bisect import Terms, the_failure


def _validate(args) -> tuple[dict, Pattern | None]:
    """Everything a bisect needs that the user typed, checked before any environment."""
    if not args.step_command:
        catalog.resolve(args.case)      # an unknown case is bad input, not 24 s of pip
    if args.step_command and (args.match or args.any):
        raise BadInput("--match and --any read what `harness check` shows; a --step-command "
                       "of your own is judged by its exit code: drop one of them")
    return envs.parse_requirements(args.with_ or []), (
        Pattern.parse(args.match) if args.match else None)


def cmd_bisect(args) -> int:
    if args.source:   # over the commits of a checkout, not releases
        return commit_bisect.cmd_commit_bisect(args)
    log = (lambda text: None) if args.quiet else \
        (lambda text: print(text, file=sys.stderr, flush=True))
    pins, pattern = _validate(args)
    candidates = bisect.between(bisect.list_versions(args.package, args.pre), args.good, args.bad)
    options = (["--layout", args.layout] if args.layout else []) + ["--path", args.path]
    command = shlex.split(args.step_command) if args.step_command else \
        bisect.default_step_command(catalog.resolve(args.case).id,   # a file: absolute
                                    options + ["--timeout", f"{args.timeout:g}"])
    extra = () if args.bare_env else envs.packages_for([catalog.resolve(args.case)])
    state = bisect.State(bisect.state_path(args.package, args.good, args.bad, pins, command))
    companions = {version: envs.companion_pins(args.package, version) for version in candidates}
    log(f"bisect: {args.package} {len(candidates)} releases {candidates[0]} .. {candidates[-1]}"
        + (f" with {' '.join(args.with_)}" if args.with_ else "")
        + _companions_text(companions, pins)
        + (f"; {len(state.steps)} steps already decided ({state.path})" if state.steps else ""))
    started = time.monotonic()
    probe = bisect.make_probe(args.package, pins, command, args.timeout + 600, extra, log)
    try:
        bad_end = bisect.observe(candidates[-1], probe, state, log)
        good_end = bisect.observe(candidates[0], probe, state, log)
        if pattern is None and not args.any and not args.step_command:
            # --fixed: the old end's failure, never one only the new end shows
            pattern = the_failure(good_end, bad_end, args.fixed)
        judge = bisect.Judge(pattern)
        terms = Terms(judge, args.fixed)   # --fixed: git's old/new, old = still failing
        said = terms.state if args.fixed else (lambda step: bisect.decided(judge, step))
        ends = terms.as_search(good_end), terms.as_search(bad_end)
        by_exit_code = args.any or bool(args.step_command)
        if ends != (bisect.GOOD, bisect.BAD) or (pattern is None and not by_exit_code):
            print(f"bisect: the ends are not as claimed for "
                  f"{terms.describe() if args.fixed else judge.describe()}: "
                  f"{candidates[0]} is {said(good_end)}, {candidates[-1]} is {said(bad_end)}"
                  + ("" if pattern or by_exit_code else
                     " (the failing end shows no failure the other does not)"))
            print("\n".join(bisect.table(candidates, state, judge, args.fixed)))
            for end, version in ((good_end, candidates[0]), (bad_end, candidates[-1])):
                if judge(end) == bisect.MASKED:
                    print(f"bisect: {version} stopped before {pattern} could show "
                          f"({'; '.join(end.signatures)[:160]}): masked, neither good nor "
                          "bad; choose another end, or name the failure (--match, --fixed)")
            for end, version in ((good_end, candidates[0]), (bad_end, candidates[-1])):
                if bisect.Judge()(end) == bisect.SKIP:
                    print(f"bisect: {version} cannot be tested here ({end.summary[:160]}): "
                          f"give it a stack that imports (--with apache-tvm-ffi==V; "
                          "docs/explanation/release-matrix.md says which pairs work) or "
                          "choose another end")
            return 2
        log(f"bisect: {terms.describe() if args.fixed else 'bad means ' + judge.describe()}")
        culprit, skipped = bisect.search(candidates, lambda version: terms.as_search(
            bisect.observe(version, probe, state, log)), log)
    except bisect.StepBroken as exc:
        step = exc.args[0]
        print(f"bisect: the step for {step.version} is broken (exit {step.code}): {step.summary}; "
              f"fix it and run again (decided steps are kept)")
        return 2
    wall = time.monotonic() - started
    print(f"{'fixed in' if args.fixed else 'first bad'}: {args.package}=={culprit} "
          f"({'no longer ' if args.fixed else ''}{judge.describe()})")
    masked = [version for version in skipped if judge(state.steps[version]) == bisect.MASKED]
    untested = [version for version in skipped if version not in masked]
    if untested:
        print(f"could not test (skipped): {', '.join(untested)}; the answer is among them "
              f"or {culprit}")
    if masked:
        print(f"masked: {', '.join(masked)} (the run stopped before {pattern} could show); "
              f"the answer is among them or {culprit}")
    print("\n".join(bisect.table(candidates, state, judge, args.fixed)))
    print(f"bisect: {len(state.steps)} steps, {wall:.0f} s this run")
    return 0


def _companions_text(companions: dict[str, dict], pins: dict[str, str]) -> str:
    """How each release is paired (the extras' tvm-ffi pins), unless --with pins it."""
    if "apache-tvm-ffi" in pins:
        return ""
    paired = {f"{version}+{pin['apache-tvm-ffi']}" for version, pin in companions.items()
              if pin}
    if not paired:
        return ""
    return ("; each release with the tvm-ffi setup.cfg pins for it ("
            + ", ".join(sorted(paired)) + "; --with apache-tvm-ffi==V overrides)")


def register(sub) -> None:
    p = sub.add_parser("bisect", help="binary-search the releases of a package (or, with "
                                      "--source, the commits of a TVM checkout) for the first "
                                      "bad one")
    p.add_argument("case", help="catalog case or model file to check at each step")
    p.add_argument("--package", default="apache-tvm")
    p.add_argument("--good", required=True, help="a release (with --source: a commit, tag or "
                                                 "branch) where the check passes (--fixed: the "
                                                 "old end, where it fails)")
    p.add_argument("--bad", required=True, help="a later one where it does not (--fixed: the "
                                                "new end, where it passes)")
    p.add_argument("--path", choices=list(PATH_NAMES), default="extract")
    commits = p.add_argument_group("over the commits of a TVM checkout")
    commits.add_argument("--source", metavar="TVM_CHECKOUT", default=None,
                         help="bisect this checkout's commits (built here) instead of releases")
    commits.add_argument("--fixed", action="store_true",
                         help="find the commit that fixed the failure (git's old/new terms)")
    commits.add_argument("--build-dir", metavar="DIR", default=None,
                         help="kept across steps and runs (default TVM_CHECKOUT/build)")
    commits.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 2)
    commits.add_argument("--no-ccache", action="store_true")
    commits.add_argument("--store", metavar="DIR", default=None,
                         help="a build store (`watch --store`): its commits are decided first, "
                              "compiling nothing; new builds are kept there")
    commits.add_argument("--suspect", action="append", metavar="WORD",
                         help="commits whose diff mentions WORD are tried first (repeatable; "
                              "the failure's pass and identifiers are added)")
    commits.add_argument("--no-suspects", action="store_true",
                         help="the plain binary search only")
    again = commits.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="continue the journal of an earlier run of this bisect")
    again.add_argument("--fresh", action="store_true", help="start this bisect over")
    p.add_argument("--with", dest="with_", action="append", metavar="PKG==VER",
                   help="pin another package in every step (repeatable)")
    p.add_argument("--pre", action="store_true", help="include pre-releases")
    p.add_argument("--layout", choices=sorted(LAYOUTS), default=None)
    p.add_argument("--timeout", type=positive_float, default=900.0, help="seconds per check")
    add_decision_options(p, "release", "the failure the bad end shows and the good end "
                                       "does not")
    p.add_argument("--step-command", default=None,
                   help="command run in each environment instead of `harness check`; "
                        "{python} is the environment's python; judged by its exit code "
                        "(0 good, 1 bad, 125 skip)")
    p.add_argument("--bare-env", action="store_true",
                   help="install only the pinned packages (a --step-command that needs no harness)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_bisect)

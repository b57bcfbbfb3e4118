"""`python -m harness bisect-step`: one step of `git bisect run` over a source checkout.

For apache/tvm (the default `--package`), per step: update the submodules the
commit pins that the CPU build needs, configure once (cmake + ninja, LLVM >= 15,
ccache when present) into a build folder that persists across steps, build
incrementally, build the checkout's own `tvm_ffi` Python package into a cached
environment (keyed by the tvm-ffi commit), then run the check against exactly
that build and exit with its code. Recipe:

    cd ~/tvm && git bisect start BAD GOOD
    git bisect run python -m harness bisect-step --source ~/tvm yolov3-tiny-nhwc

Exit codes are `git bisect run`'s: 0 good, 1 bad, 125 skip (only a commit that
fails to compile after a good configuration, or a TVM that cannot be tested),
128 abort (the environment is wrong: no LLVM, CMake too old, a submodule
missing, the first configuration failing, a harness bug, a check that did not
run the build) so that git stops instead of marking every commit.

Bad is decided from what the check showed (`check --json`), like `bisect`'s:
by default a commit is bad when it shows a violation the known-issue registry
does not explain (a source build's "git:<sha>" counts as inside every version
range: the question is whether the failure is a registered one), so a known bug
elsewhere in the pipeline never derails the search; `--match SIG` makes it bad
exactly when a violation with that signature shows; `--any` on any violation.
Each step prints what it showed. A `--check-command` of your own is judged by its
exit code. This module is the step and its decision; the checkout's git and submodules
are versions/source_checkout's, the build's tools, cmake, ninja and tvm-ffi package
versions/source_build's (the commit bisect builds with them too).
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.paths import REPO_ROOT
from harness.result import Result
from harness.signature import Pattern, text_of
from harness.verdict import EXIT_CANNOT_TEST, BadInput, Outcome
from harness.versions import envs
from harness.versions.source_build import (
    build,
    checkout_env,
    configure,
    ffi_environment,
    find_cmake,
    find_llvm_config,
    find_ninja,
)
from harness.versions.source_checkout import (
    FFI_DIR,
    FFI_SUBMODULES,
    TVM_SUBMODULES,
    EnvironmentProblem,
    git,
    log,
    populated,
    update_submodules,
)

EXIT_ABORT = 128


class Phases:
    """Runs named phases, printing each with its time; keeps the times for the summary."""

    def __init__(self):
        self.times: list[tuple[str, float]] = []

    def run(self, name: str, func, *args):
        log(f"[{name}] ...")
        started = time.monotonic()
        try:
            return func(*args)
        finally:
            seconds = time.monotonic() - started
            self.times.append((name, seconds))
            log(f"[{name}] {seconds:.1f} s")

    def summary(self) -> str:
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.times)


# ---- the check -----------------------------------------------------------------

def _check_argv(args, python: str) -> list[str]:
    if args.check_command:
        return shlex.split(args.check_command)
    argv = [python, "-m", "harness", "check", args.case, "--quiet", "--json", "--ignore-known"]
    argv += ["--layout", args.layout] if args.layout else []
    argv += ["--path", args.path] if getattr(args, "path", None) else []
    return argv


def run_check(args, python: str, env: dict, cwd: str | None, phases: "Phases") -> int:
    """Run the check against the build and decide the commit (0 good, 1 bad, 125, 128)."""
    argv = _check_argv(args, python)
    if args.check_command:
        code = phases.run("check", lambda: subprocess.run(argv, cwd=cwd, env=env).returncode)
        return interpret_check(code, args.untestable)
    proc = phases.run("check", lambda: subprocess.run(argv, cwd=cwd, env=env,
                                                      capture_output=True, text=True))
    sys.stderr.write(proc.stderr[-3000:])
    if proc.returncode not in (0, 1):
        try:   # a harness error (a check that did not run this build, say): say which
            for violation in Result.from_json(json.loads(proc.stdout)).violations:
                log(f"the check: {violation.one_line()}")
        except (ValueError, KeyError, TypeError):
            pass   # no JSON (usage error): its stderr above says why
        return interpret_check(proc.returncode, args.untestable)
    try:
        result = Result.from_json(json.loads(proc.stdout))
    except (ValueError, KeyError, TypeError) as exc:
        log(f"the check printed no result ({type(exc).__name__}): aborting the bisect")
        return EXIT_ABORT
    return decide(result, Pattern.parse(args.match) if args.match else None, args.any)


def decide(result: Result, pattern: Pattern | None, any_violation: bool) -> int:
    """A commit's verdict from the violations its check showed; each is listed."""
    judgement = known_issues.judge(result, source_builds=True)
    registered = {id(violation): issue.id for violation, issue in judgement.known}
    bad = False
    for violation in result.violations:
        if violation.kind == Outcome.UNSUPPORTED:   # cannot test: the check's exit code said so
            continue
        text = text_of(violation)
        if pattern is not None:
            counts = pattern.matches(text)
        else:
            counts = any_violation or id(violation) not in registered
        bad = bad or counts
        note = f"registered [{registered[id(violation)]}]" if id(violation) in registered \
            else "not registered"
        log(f"showed: {text} ({note}){' <- bad' if counts else ''}")
    rule = f"showing {pattern}" if pattern else (
        "any violation" if any_violation else "a violation the registry does not explain")
    log(f"{'bad' if bad else 'good'}: bad means {rule}"
        + ("" if result.violations else "; no violation"))
    return 1 if bad else 0


def interpret_check(code: int, untestable: str) -> int:
    """The check's exit code as a bisect verdict."""
    if code == EXIT_CANNOT_TEST:
        return 1 if untestable == "bad" else EXIT_CANNOT_TEST
    if code in (0, 1):
        return code
    # Usage error or a harness bug: 128 stops `git bisect run` instead of blaming the commit.
    log(f"the check itself failed (exit {code}): aborting the bisect")
    return EXIT_ABORT


# ---- the step ------------------------------------------------------------------

def step_tvm(args, source: str, phases: Phases) -> int:
    commit = git(source, "rev-parse", "HEAD")
    log(f"apache/tvm {commit[:12]}: {git(source, 'log', '-1', '--format=%s')}")
    build_dir = os.path.abspath(args.build_dir or os.path.join(source, "build"))
    if args.build_command:
        for argv in args.build_command:
            log(f"$ {argv}")
            if subprocess.run(shlex.split(argv), cwd=source).returncode != 0:
                log("build failed: skip this commit (125)")
                return EXIT_CANNOT_TEST
    else:
        phases.run("submodules", update_submodules, source, TVM_SUBMODULES, FFI_SUBMODULES)
        tools = phases.run("tools", lambda: (find_cmake(), find_ninja(), find_llvm_config()))
        ccache = shutil.which("ccache") is not None and not args.no_ccache
        phases.run("configure", configure, source, build_dir, *tools, ccache)
        if not phases.run("build", build, build_dir, tools[1], args.jobs)[0]:
            log("this commit does not compile: skip it (125)")
            return EXIT_CANNOT_TEST
    # Whoever built it, the check runs against this checkout's python/ and BUILD/lib, with
    # the checkout's own tvm_ffi package when it has one, and asserts that it did.
    python = sys.executable
    if os.path.isdir(os.path.join(source, FFI_DIR)):
        try:
            python = envs.python_of(phases.run("tvm-ffi package", ffi_environment,
                                               os.path.join(source, FFI_DIR),
                                               _case_packages(args)))
        except BadInput as exc:   # pip could not build it: this commit's, like a compile error
            log(f"this commit's tvm-ffi package does not build ({exc}): skip it (125)")
            return EXIT_CANNOT_TEST
    if args.build_only:
        return 0
    return run_check(args, python, checkout_env(source, build_dir, commit), source, phases)


def _case_packages(args) -> tuple[str, ...]:
    """What the check's case needs beside TVM (its door's extra)."""
    if args.check_command or not args.case:
        return ()
    case = catalog.resolve(args.case)
    return envs.door_packages(case)


def step_ffi(args, source: str, phases: Phases) -> int:
    """A tvm-ffi commit against a released TVM wheel (`--with apache-tvm==V`)."""
    pins = envs.parse_requirements(args.with_ or [])
    if "apache-tvm" not in pins:
        raise BadInput("--package apache-tvm-ffi needs --with apache-tvm==VERSION "
                       "(the TVM release to check the tvm-ffi commit against)")
    commit = git(source, "rev-parse", "HEAD")
    log(f"apache/tvm-ffi {commit[:12]}: {git(source, 'log', '-1', '--format=%s')}")
    phases.run("submodules", update_submodules, source, (), ())
    for nested in FFI_SUBMODULES:
        if not populated(os.path.join(source, nested)):
            raise EnvironmentProblem(f"submodule {nested} of {source} is missing: "
                                     "git submodule update --init --recursive")
    tvm_pin = f"apache-tvm=={pins['apache-tvm']}"
    try:
        env_path = phases.run("tvm-ffi package", ffi_environment, source, (tvm_pin,))
    except BadInput as exc:
        # pip could not build this commit's package: the commit, not the machine.
        log(f"cannot build this tvm-ffi commit: {exc}: skip it (125)")
        return EXIT_CANNOT_TEST
    if args.build_only:
        return 0
    env = dict(os.environ, HARNESS_TVM_FFI_COMMIT=commit, PYTHONPATH=REPO_ROOT)
    return run_check(args, envs.python_of(env_path), env, None, phases)

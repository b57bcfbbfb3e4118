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
exit code.
"""
from __future__ import annotations

import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.paths import REPO_ROOT
from harness.signature import Pattern, text_of
from harness.verdict import EXIT_CANNOT_TEST, BadInput, Result
from harness.versions import envs

EXIT_ABORT = 128
MIN_LLVM = 15      # TVM's CMake: "TVM requires LLVM 15.0 or higher"
MIN_CMAKE = (3, 26)  # the 3rdparty/tvm-ffi submodule's cmake_minimum_required
# Submodules a CPU build needs; cutlass, OpenCL headers and flash-attn are GPU-only
# and are not fetched (a user offline or behind a proxy may not have them).
TVM_SUBMODULES = ("3rdparty/tvm-ffi",)
FFI_SUBMODULES = ("3rdparty/dlpack", "3rdparty/libbacktrace")
FFI_DIR = os.path.join("3rdparty", "tvm-ffi")
# What TVM's python/ imports (its pyproject's dependencies) beside tvm_ffi, and the harness's own.
TVM_PYTHON_DEPS = ("ml_dtypes", "numpy", "typing_extensions", "psutil", "cloudpickle")


class EnvironmentProblem(Exception):
    """The machine, not the commit, is wrong: exit 128 with one line naming the fix."""


def log(message: str) -> None:
    print(f"bisect-step: {message}", file=sys.stderr, flush=True)


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


# ---- tools -------------------------------------------------------------------

def _version_of(argv: list[str]) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(part) for part in match.groups() if part is not None) if match else None


def find_llvm_config() -> str:
    """HARNESS_LLVM_CONFIG, else the newest llvm-config(-N) >= 15 on PATH."""
    chosen = os.environ.get("HARNESS_LLVM_CONFIG")
    if chosen:
        version = _version_of([chosen, "--version"])
        if version is None or version[0] < MIN_LLVM:
            raise EnvironmentProblem(
                f"HARNESS_LLVM_CONFIG={chosen} is not an llvm-config of LLVM >= {MIN_LLVM} "
                f"(found {version}); apt-get install llvm-16-dev")
        return chosen
    candidates = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if re.fullmatch(r"llvm-config(-\d+)?", name):
                path = os.path.join(folder, name)
                version = _version_of([path, "--version"])
                if version and version[0] >= MIN_LLVM:
                    candidates.append((version, path))
    if not candidates:
        raise EnvironmentProblem(f"no llvm-config of LLVM >= {MIN_LLVM} on PATH (TVM refuses "
                                 "older): apt-get install llvm-16-dev, or set HARNESS_LLVM_CONFIG")
    return max(candidates)[1]


def _tool(name: str) -> str | None:
    """Prefer the one installed beside this python (the harness's `build` extra)."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.access(beside, os.X_OK) else shutil.which(name)


def find_cmake() -> str:
    cmake = _tool("cmake")
    version = _version_of([cmake, "--version"]) if cmake else None
    if version is None or version[:2] < MIN_CMAKE:
        found = ".".join(map(str, version)) if version else "none"
        raise EnvironmentProblem(
            f"CMake >= {'.'.join(map(str, MIN_CMAKE))} is needed (found {found}): "
            "pip install -e '.[build]' (pip's cmake) in the harness's environment")
    return cmake


def find_ninja() -> str:
    ninja = _tool("ninja")
    if ninja is None:
        raise EnvironmentProblem("ninja is not installed: pip install -e '.[build]' "
                                 "or apt-get install ninja-build")
    return ninja


# ---- phases ------------------------------------------------------------------

def _git(source: str, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", source, *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise EnvironmentProblem(f"git {' '.join(args)} failed in {source}: "
                                 f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return proc.stdout.strip()


def _populated(path: str) -> bool:
    return os.path.isdir(path) and any(name != ".git" for name in os.listdir(path))


def update_submodules(source: str, paths: tuple[str, ...], nested: tuple[str, ...] = ()) -> None:
    """Check out the commits the commit pins; offline, a submodule that is present is kept.

    A mirror may lag upstream (then git cannot fetch the pinned commit): the
    submodule's working tree stays as it is and a warning says so. A submodule
    that is not there at all cannot be built without: that aborts the bisect.
    """
    proc = subprocess.run(["git", "-C", source, "submodule", "update", "--init", "--recursive",
                           "--", *paths], capture_output=True, text=True)
    required = list(paths) + [os.path.join(paths[0], n) for n in nested] if paths else []
    for path in required:
        if not _populated(os.path.join(source, path)):
            top = paths[0] if path != paths[0] and path.startswith(paths[0]) else ""
            _pinned_or_newest(os.path.join(source, top), os.path.relpath(path, top or "."))
    missing = [p for p in required if not _populated(os.path.join(source, p))]
    if missing:
        reason = (proc.stderr.strip().splitlines() or ["not checked out"])[-1]
        raise EnvironmentProblem(
            f"submodule {missing[0]} is missing and cannot be fetched ({reason}): fetch it "
            "(git submodule update --init --recursive), or point its URL at a local clone "
            "(git config url.LOCAL.insteadOf URL)")
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["?"])[-1]
        log(f"warning: a submodule is not at its pinned commit ({reason}); building the "
            "checked-out one")


def _pinned_or_newest(superproject: str, path: str) -> None:
    """A submodule left empty by a recursive update that stopped at a sibling: its pinned
    commit when its remote has it; else (a mirror that lags upstream) the newest commit
    the remote has, said loudly, and for dlpack, whose header tvm-ffi reads new
    declarations from, the installed tvm_ffi package's copy when it is newer."""
    folder = os.path.join(superproject, path)
    if not os.path.exists(os.path.join(folder, ".git")):
        return
    subprocess.run(["git", "-C", folder, "fetch", "--quiet", "origin"], capture_output=True)
    tree = _git(superproject, "ls-tree", "HEAD", path, check=False).split()
    pinned = tree[2] if len(tree) > 2 else ""
    for commit in filter(None, (pinned, "origin/HEAD")):
        if subprocess.run(["git", "-C", folder, "checkout", "--quiet", "--detach", commit],
                          capture_output=True).returncode == 0:
            break
    else:
        return
    if commit == pinned:
        return
    log(f"warning: {path}'s pinned commit is not in its remote (a mirror that lags?): "
        f"building its newest, {_git(folder, 'log', '-1', '--format=%h %s')}")
    if path.endswith("dlpack"):
        _newer_dlpack_header(os.path.join(folder, "include", "dlpack", "dlpack.h"))


def _dlpack_version(path: str) -> tuple[int, int]:
    with open(path) as handle:
        text = handle.read()
    found = [re.search(rf"#define DLPACK_{part}_VERSION (\d+)", text) for part in ("MAJOR",
                                                                                  "MINOR")]
    return tuple(int(match.group(1)) if match else 0 for match in found)


def _newer_dlpack_header(header: str) -> None:
    import importlib.util
    spec = importlib.util.find_spec("tvm_ffi")   # the installed package, not imported
    if spec is None or not spec.submodule_search_locations or not os.path.exists(header):
        return
    installed = os.path.join(list(spec.submodule_search_locations)[0], "include", "dlpack",
                             "dlpack.h")
    if os.path.exists(installed) and _dlpack_version(installed) > _dlpack_version(header):
        shutil.copyfile(installed, header)
        log(f"warning: dlpack.h {_dlpack_version(header)} is taken from the installed tvm_ffi "
            "package (its remote lacks the pinned, newer one)")


def configure(source: str, build_dir: str, cmake: str, ninja: str, llvm_config: str,
              ccache: bool) -> bool:
    """cmake once per build folder (ninja re-runs it when CMakeLists change). True if it ran."""
    if os.path.exists(os.path.join(build_dir, "build.ninja")):
        return False
    os.makedirs(build_dir, exist_ok=True)
    argv = [cmake, "-S", source, "-B", build_dir, "-G", "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={ninja}", "-DCMAKE_BUILD_TYPE=Release",
            f"-DUSE_LLVM={llvm_config}", f"-DUSE_CCACHE={'AUTO' if ccache else 'OFF'}"]
    log(shlex.join(argv))
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        # The first configuration failing says nothing about the commit: abort.
        errors = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines()
                  if "Error" in line or "error" in line] or proc.stderr.splitlines() or ["?"]
        shutil.rmtree(build_dir, ignore_errors=True)
        raise EnvironmentProblem(f"cmake cannot configure {source}: {errors[0].strip()} "
                                 f"(full log: rerun {shlex.join(argv)})")
    return True


def build(build_dir: str, ninja: str, jobs: int) -> tuple[bool, int]:
    """ninja, its progress on stderr: (False when this commit does not compile (git skips
    it), the steps ninja ran: what was recompiled and linked)."""
    proc = subprocess.Popen([ninja, "-C", build_dir, f"-j{jobs}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    tail = collections.deque(maxlen=40)
    failed, done, total, shown = [], 0, 0, (0, time.monotonic())
    for line in proc.stdout:
        tail.append(line.rstrip())
        if line.startswith("FAILED"):
            failed.append(line.strip())
        match = re.match(r"^\[(\d+)/(\d+)\]", line)
        if match:
            done, total = int(match.group(1)), int(match.group(2))
            # A line per 5 % or per minute: a full TVM build runs for an hour or more.
            if done * 20 // total > shown[0] * 20 // total or time.monotonic() - shown[1] > 60:
                log(f"ninja: {done}/{total} steps")
                shown = (done, time.monotonic())
    if proc.wait() != 0:
        log(f"build failed: {failed[0] if failed else list(tail)[-1:]}")
        print("\n".join(list(tail)[-20:]), file=sys.stderr)
        return False, done
    log(f"ninja: {f'{total} steps run' if total else 'nothing to do'}")
    return True, total


def ffi_environment(ffi_source: str, extra: tuple[str, ...] = ()) -> str:
    """A cached venv with the checked-out tvm-ffi built and installed (its Cython core).

    Keyed by the tvm-ffi commit plus the state of its working tree (a patched
    dlpack.h counts), so each tvm-ffi commit is built once.
    """
    commit = _git(ffi_source, "rev-parse", "HEAD")
    dirty = _git(ffi_source, "status", "--porcelain", "--ignore-submodules=none", check=False)
    label = f"tvm-ffi@{commit[:12]}" + ("+local" if dirty else "")
    return envs.ensure_custom(
        {"apache-tvm-ffi": f"git:{commit}", "worktree": envs.text_key(dirty)},
        [ffi_source, *TVM_PYTHON_DEPS, *envs.BASE_PACKAGES, *extra], label=label, log=log)


def checkout_env(source: str, build_dir: str, commit: str) -> dict:
    """The check's environment: the checkout's python/ and build/lib, nothing from a wheel."""
    env = dict(os.environ)
    python_dir = os.path.join(source, "python")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, python_dir,
                                                     os.environ.get("PYTHONPATH")) if p)
    env["TVM_LIBRARY_PATH"] = os.path.join(build_dir, "lib")
    # loading.tvm() asserts the provenance and versions() records the commit.
    env["HARNESS_EXPECT_TVM_PYTHON"] = python_dir
    env["HARNESS_EXPECT_TVM_LIB"] = os.path.join(build_dir, "lib")
    env["HARNESS_TVM_COMMIT"] = commit
    return env


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
        if violation.kind == "unsupported":   # cannot test: the check's exit code said so
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


def step_tvm(args, source: str, phases: Phases) -> int:
    commit = _git(source, "rev-parse", "HEAD")
    log(f"apache/tvm {commit[:12]}: {_git(source, 'log', '-1', '--format=%s')}")
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
    """What the check's case needs beside TVM (the torch extra for the PyTorch door)."""
    if args.check_command or not args.case:
        return ()
    case = catalog.resolve(args.case)
    return envs.packages_for([case]) if case.needs_torch else ()


def step_ffi(args, source: str, phases: Phases) -> int:
    """A tvm-ffi commit against a released TVM wheel (`--with apache-tvm==V`)."""
    pins = envs.parse_requirements(args.with_ or [])
    if "apache-tvm" not in pins:
        raise BadInput("--package apache-tvm-ffi needs --with apache-tvm==VERSION "
                       "(the TVM release to check the tvm-ffi commit against)")
    commit = _git(source, "rev-parse", "HEAD")
    log(f"apache/tvm-ffi {commit[:12]}: {_git(source, 'log', '-1', '--format=%s')}")
    phases.run("submodules", update_submodules, source, (), ())
    for nested in FFI_SUBMODULES:
        if not _populated(os.path.join(source, nested)):
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

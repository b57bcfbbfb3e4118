"""Building a TVM or tvm-ffi checkout: the tools, cmake and ninja, its tvm-ffi package.

The build folder persists across steps (configured once, ccache when present, ninja
builds incrementally); the checkout's own `tvm_ffi` is built into a cached environment
keyed by its commit; `checkout_env` is what a check of that build runs with.
"""
from __future__ import annotations

import collections
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from harness.paths import REPO_ROOT
from harness.versions import envs
from harness.versions.source_checkout import EnvironmentProblem, git, log

MIN_LLVM = 15      # TVM's CMake: "TVM requires LLVM 15.0 or higher"
MIN_CMAKE = (3, 26)  # the 3rdparty/tvm-ffi submodule's cmake_minimum_required
# What TVM's python/ imports (its pyproject's dependencies) beside tvm_ffi, and the harness's own
# (hypothesis: the fuzzers, which `watch` runs against a source build too).
TVM_PYTHON_DEPS = ("ml_dtypes", "numpy", "typing_extensions", "psutil", "cloudpickle",
                   "hypothesis")


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


# ---- build -------------------------------------------------------------------

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


def build(build_dir: str, ninja: str, jobs: int) -> tuple[bool, int, str]:
    """ninja, its progress on stderr: (False when this commit does not compile (git skips
    it), the steps ninja ran: what was recompiled and linked, the log's last lines)."""
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
        return False, done, "\n".join(list(tail)[-20:])
    log(f"ninja: {f'{total} steps run' if total else 'nothing to do'}")
    return True, total, ""


def ffi_environment(ffi_source: str, extra: tuple[str, ...] = ()) -> str:
    """A cached venv with the checked-out tvm-ffi built and installed (its Cython core).

    Keyed by the tvm-ffi commit plus the state of its working tree (a patched
    dlpack.h counts), so each tvm-ffi commit is built once.
    """
    commit = git(ffi_source, "rev-parse", "HEAD")
    dirty = git(ffi_source, "status", "--porcelain", "--ignore-submodules=none", check=False)
    label = f"tvm-ffi@{commit[:12]}" + ("+local" if dirty else "")
    return envs.ensure_custom(
        {"apache-tvm-ffi": f"git:{commit}", "worktree": envs.text_key(dirty)},
        list(dict.fromkeys([ffi_source, *TVM_PYTHON_DEPS, *envs.BASE_PACKAGES, *extra])),
        label=label, log=log)


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

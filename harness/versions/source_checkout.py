"""The source checkout a commit step builds: git in it, and the submodules its commit pins.

Shared by bisect-step (versions/commit_step), the commit bisect (versions/commit_bisect)
and `reproducers --run --source` (cli/reproducers): one `git` whose failure names the
fix, one submodule update that copes with a mirror lagging upstream. What is wrong with
the machine rather than the commit is an EnvironmentProblem (bisect-step exits 128).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

# Submodules a CPU build needs; cutlass, OpenCL headers and flash-attn are GPU-only
# and are not fetched (a user offline or behind a proxy may not have them).
TVM_SUBMODULES = ("3rdparty/tvm-ffi",)
FFI_SUBMODULES = ("3rdparty/dlpack", "3rdparty/libbacktrace")
FFI_DIR = os.path.join("3rdparty", "tvm-ffi")


class EnvironmentProblem(Exception):
    """The machine, not the commit, is wrong: exit 128 with one line naming the fix."""


def log(message: str) -> None:
    print(f"bisect-step: {message}", file=sys.stderr, flush=True)


def git(source: str, *args: str, check: bool = True) -> str:
    """`git -C source ARGS`'s output; a failure (when `check`) names the command and why."""
    proc = subprocess.run(["git", "-C", source, *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise EnvironmentProblem(f"git {' '.join(args)} failed in {source}: "
                                 f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return proc.stdout.strip()


def populated(path: str) -> bool:
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
        if not populated(os.path.join(source, path)):
            top = paths[0] if path != paths[0] and path.startswith(paths[0]) else ""
            _pinned_or_newest(os.path.join(source, top), os.path.relpath(path, top or "."))
    missing = [p for p in required if not populated(os.path.join(source, p))]
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
    tree = git(superproject, "ls-tree", "HEAD", path, check=False).split()
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
        f"building its newest, {git(folder, 'log', '-1', '--format=%h %s')}")
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


def require_clean_tvm(source: str, command: str) -> str:
    """The absolute path of an apache/tvm git checkout whose tracked files are unchanged:
    `command` checks other commits out there. Anything else is bad input naming the fix."""
    from harness.verdict import BadInput
    source = os.path.abspath(source)
    if not os.path.isdir(os.path.join(source, "python", "tvm")) or \
            not os.path.exists(os.path.join(source, ".git")):
        raise BadInput(f"--source {source} is not a git checkout of apache/tvm "
                       "(no .git or python/tvm there)")
    if git(source, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules",
           check=False):
        raise BadInput(f"--source {source} has uncommitted changes: {command} checks out "
                       "other commits there (commit or stash them, or use a clone)")
    return source

"""Cached virtual environments, one per exact set of package versions.

The bisect and matrix commands and the crash test need TVM releases other than
the one installed here. An environment is keyed by its sorted `name==version`
set, built once with pip, and reused; a marker file written last means a
half-built environment (interrupted install) is rebuilt, never trusted.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from harness import paths
from harness.verdict import BadInput

# What the harness itself needs inside an environment, beside the TVM stack
# (setup.cfg's install_requires).
BASE_PACKAGES = ("onnx", "numpy", "packaging")


def extra_pins(extra: str) -> tuple[str, ...]:
    """setup.cfg's pins for one extra (the one place they are written and explained)."""
    import configparser
    config = configparser.ConfigParser()
    config.read(os.path.join(paths.REPO_ROOT, "setup.cfg"))
    text = config.get("options.extras_require", extra, fallback="")
    return tuple(line.strip() for line in text.splitlines()
                 if line.strip() and not line.strip().startswith("#"))


def companion_pins(package: str, version: str) -> dict[str, str]:
    """The tvm-ffi a TVM release needs, from setup.cfg's extras (each release's pin is
    written and explained there): the extra pinning this very release, else one pinning a
    release of the same major.minor (0.27.0 takes 0.27.0.post1's). {} for another package
    or a release no extra knows: pip then resolves tvm-ffi as it does for a user."""
    if package.lower() != "apache-tvm":
        return {}
    import configparser

    from packaging.version import InvalidVersion, Version
    config = configparser.ConfigParser()
    config.read(os.path.join(paths.REPO_ROOT, "setup.cfg"))
    try:
        wanted = Version(version)
    except InvalidVersion:
        return {}
    exact, same_minor = {}, {}
    for extra in config.options("options.extras_require"):
        pins = parse_requirements([pin for pin in extra_pins(extra) if "==" in pin])
        if "apache-tvm" not in pins or "apache-tvm-ffi" not in pins:
            continue
        pinned = Version(pins["apache-tvm"])
        companion = {"apache-tvm-ffi": pins["apache-tvm-ffi"]}
        if pinned == wanted:
            exact = companion
        elif pinned.release[:2] == wanted.release[:2]:
            same_minor = companion
    return exact or same_minor


def packages_for(cases) -> tuple[str, ...]:
    """What an environment needs beside the TVM stack to check `cases`: the base, and the
    extra of each door they come through (torch's 5.5 GB, TensorFlow's 1.5 GB: only then)."""
    extras = sorted({case.door.extra for case in cases if case.door.extra})
    return BASE_PACKAGES + tuple(pin for extra in extras for pin in extra_pins(extra))


def door_packages(case) -> tuple[str, ...]:
    """What a source build's environment needs beside TVM for `case`: its door's extra."""
    return packages_for([case]) if case.door.extra else ()


READY = "harness-env.json"


def envs_dir() -> str:
    return os.path.join(paths.cache_dir(), "envs")


def parse_requirements(pins: list[str]) -> dict[str, str]:
    out = {}
    for pin in pins:
        name, sep, version = pin.partition("==")
        if not sep or not name.strip() or not version.strip():
            raise BadInput(f"expected PACKAGE==VERSION, got {pin!r}")
        out[name.strip().lower()] = version.strip()
    return out


def key(packages: dict[str, str], extra: tuple[str, ...] = ()) -> str:
    text = " ".join(f"{n}=={v}" for n, v in sorted(packages.items()))
    text += " +" + " ".join(sorted(extra)) if extra else ""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def python_of(path: str) -> str:
    return os.path.join(path, "bin", "python")


def lookup(packages: dict[str, str], extra: tuple[str, ...] = BASE_PACKAGES) -> str | None:
    path = os.path.join(envs_dir(), key(packages, extra))
    return path if os.path.exists(os.path.join(path, READY)) else None


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class TransientFailure(BadInput):
    """pip could not reach the package index: nothing is known about the version set."""


# What pip prints when the index, not the version set, is the problem.
_TRANSIENT = re.compile(r"Could not fetch URL|NewConnectionError|Max retries exceeded|"
                        r"Temporary failure in name resolution|Network is unreachable|"
                        r"Connection (refused|reset|aborted)|timed out|ReadTimeoutError|"
                        r"HTTP error 5\d\d", re.I)


def ensure(packages: dict[str, str], log=None, extra: tuple[str, ...] = BASE_PACKAGES) -> str:
    """Path of a ready environment with exactly these versions, built if missing.

    Raises BadInput when pip cannot resolve the set (no such version, say).
    """
    pins = [f"{n}=={v}" for n, v in sorted(packages.items())]
    return _ensure(key(packages, extra), packages, [*pins, *extra], " ".join(pins), log)


def ensure_custom(identity: dict[str, str], install: list[str], label: str, log=None) -> str:
    """Like ensure, for what is not a version set (a local checkout to build and install).

    `identity` keys the environment; `install` is what pip installs into it.
    """
    return _ensure(key(identity, tuple(install)), identity, install, label, log)


def _ensure(env_key: str, packages: dict, install: list[str], label: str, log) -> str:
    """Build once per key, safe under concurrent use.

    Processes that need the same environment serialize on a per-key lock; the
    builder installs into a temporary folder and renames it into place only when
    pip succeeded, so nobody ever sees (or deletes) a half-built environment.
    Environments are used through `bin/python -m ...` only, so the rename is safe.
    """
    path = os.path.join(envs_dir(), env_key)
    if os.path.exists(os.path.join(path, READY)):
        return path
    os.makedirs(envs_dir(), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes
        if os.path.exists(os.path.join(path, READY)):
            return path                    # another process built it while we waited
        shutil.rmtree(path, ignore_errors=True)   # a leftover without READY (killed build)
        building = tempfile.mkdtemp(prefix=f"{env_key}.building-", dir=envs_dir())
        started = time.monotonic()
        if log:
            log(f"building environment {env_key}: {label}")
        try:
            subprocess.run([sys.executable, "-m", "venv", building], check=True)
            proc = subprocess.run([python_of(building), "-m", "pip", "install", "-q",
                                   "--disable-pip-version-check", *install],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
                if _TRANSIENT.search(proc.stderr):
                    raise TransientFailure(f"cannot reach the package index to install "
                                           f"{label}: {last} (retry when it is reachable)")
                raise BadInput(f"cannot install {label}: {last}")
            with open(os.path.join(building, READY), "w") as handle:
                json.dump({"packages": packages, "label": label,
                           "built_seconds": round(time.monotonic() - started, 1),
                           "built_at": time.strftime("%Y-%m-%dT%H:%M:%S")}, handle)
            os.rename(building, path)
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return path


def list_envs() -> list[dict]:
    out = []
    if not os.path.isdir(envs_dir()):
        return out
    for name in sorted(os.listdir(envs_dir())):
        marker = os.path.join(envs_dir(), name, READY)
        if os.path.exists(marker):
            with open(marker) as handle:
                info = json.load(handle)
            info["key"], info["path"] = name, os.path.join(envs_dir(), name)
            info["last_used"] = os.path.getmtime(marker)
            out.append(info)
    return out


def touch(path: str) -> None:
    os.utime(os.path.join(path, READY))


def prune(keep: int = 0) -> list[str]:
    """Remove all but the `keep` most recently used environments; return removed keys."""
    envs = sorted(list_envs(), key=lambda e: e["last_used"], reverse=True)
    removed = []
    for info in envs[keep:]:
        shutil.rmtree(info["path"], ignore_errors=True)
        removed.append(info["key"])
    return removed

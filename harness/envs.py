"""Cached virtual environments, one per exact set of package versions.

The bisect and matrix commands and the crash test need TVM releases other than
the one installed here. An environment is keyed by its sorted `name==version`
set, built once with pip, and reused; a marker file written last means a
half-built environment (interrupted install) is rebuilt, never trusted.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from .verdict import BadInput

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the harness itself needs inside an environment, beside the TVM stack
# (setup.cfg's install_requires).
BASE_PACKAGES = ("onnx", "numpy", "packaging")
READY = "harness-env.json"


def cache_dir() -> str:
    return os.environ.get("HARNESS_CACHE", os.path.join(ROOT, ".harness-cache"))


def envs_dir() -> str:
    return os.path.join(cache_dir(), "envs")


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


def ensure(packages: dict[str, str], log=None, extra: tuple[str, ...] = BASE_PACKAGES) -> str:
    """Path of a ready environment with exactly these versions, built if missing.

    Raises BadInput when pip cannot resolve the set (no such version, say).
    """
    found = lookup(packages, extra)
    if found:
        return found
    path = os.path.join(envs_dir(), key(packages, extra))
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(envs_dir(), exist_ok=True)
    started = time.monotonic()
    if log:
        log(f"building environment {os.path.basename(path)}: "
            + " ".join(f"{n}=={v}" for n, v in sorted(packages.items())))
    subprocess.run([sys.executable, "-m", "venv", path], check=True)
    pins = [f"{n}=={v}" for n, v in sorted(packages.items())]
    proc = subprocess.run([python_of(path), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", *pins, *extra],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(path, ignore_errors=True)
        last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise BadInput(f"cannot install {' '.join(pins)}: {last}")
    with open(os.path.join(path, READY), "w") as handle:
        json.dump({"packages": packages, "built_seconds": round(time.monotonic() - started, 1),
                   "built_at": time.strftime("%Y-%m-%dT%H:%M:%S")}, handle)
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

"""Where the harness's own files live: the checkout it runs from and its cache.

The checkout holds cases/ and the cache (unless HARNESS_CACHE points elsewhere);
a child process (another python, a source-build environment) imports the harness
from REPO_ROOT.
"""
import fcntl
import os
import sys
from typing import Callable

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_shared(path: str, data: str | bytes) -> None:
    """Write a cache file that other processes (pytest's workers, shards) may write or read
    at the same moment: into a file of this process's own, then renamed over `path`, so a
    reader sees the whole old file or the whole new one."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}.partial"
    with open(partial, "wb") as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    os.replace(partial, path)


def made_once(folder: str, done: str, message: str, make: Callable[[], None]) -> None:
    """`make()` fills `folder` and writes `done` last, once per machine: the first process
    to ask makes it (saying `message`), under a lock every other one waits on."""
    if os.path.exists(done):
        return
    os.makedirs(folder, exist_ok=True)
    with open(folder + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(done):
            print(f"harness: {message} once into {folder}", file=sys.stderr, flush=True)
            make()


def cache_dir() -> str:
    """The harness's cache: environments, generated models, memos, bisect states."""
    return os.environ.get("HARNESS_CACHE", os.path.join(REPO_ROOT, ".harness-cache"))


def package_version(distribution: str) -> str | None:
    """An installed distribution's version, or None; read from its metadata, never imported
    (a broken TVM still tells its version)."""
    from importlib import metadata
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None

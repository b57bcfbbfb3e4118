"""Builds of apache/tvm kept per compiled input, so a commit seen once is never compiled again.

A check needs two things of a commit: its `python/` (the checkout has it at any commit)
and the libraries its compiled inputs make (`build/lib/*.so`). Commits whose compiled
inputs are the same (every Python-only commit and its parent) share one library, so the
store keys libraries by `commit_bisect.compiled_key` and records which commits it has
seen with each: a bisect over stored keys builds nothing (Chromium's bisect-builds), and
the watch loop keeps each night's build here (`watch --store DIR`, a CI cache).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time

LIBRARY = re.compile(r".+\.(so(\.\d+)*|dylib)$")   # libtvm.so, libfoo.so.1, libtvm.dylib
META = "stored.json"


def _folder(store: str, key: str) -> str:
    return os.path.join(store, key)


def lookup(store: str | None, key: str) -> str | None:
    """The stored build folder (holding lib/) for a compiled key, or None."""
    if not store:
        return None
    folder = _folder(store, key)
    return folder if os.path.exists(os.path.join(folder, META)) else None


def keep(store: str, key: str, build_dir: str, commit: str, title: str) -> str:
    """Copy the build's libraries under `key` (once per key) and note `commit` as built
    from it. Written to a temporary folder and renamed: a cut-short copy is never found."""
    folder = _folder(store, key)
    meta_path = os.path.join(folder, META)
    if not os.path.exists(meta_path):
        staging = folder + ".part"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(os.path.join(staging, "lib"))
        source_lib = os.path.join(build_dir, "lib")
        for name in sorted(os.listdir(source_lib)):
            if LIBRARY.fullmatch(name):
                shutil.copy2(os.path.join(source_lib, name), os.path.join(staging, "lib", name))
        with open(os.path.join(staging, META), "w") as handle:
            json.dump({"key": key, "commits": {}, "stored": time.strftime("%Y-%m-%d %H:%M")},
                      handle, indent=1)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staging, folder)
    with open(meta_path) as handle:
        meta = json.load(handle)
    meta["commits"][commit] = title
    with open(meta_path + ".tmp", "w") as handle:
        json.dump(meta, handle, indent=1)
    os.replace(meta_path + ".tmp", meta_path)
    return folder


def size_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(folder) for name in names)


def entries(store: str | None) -> list[dict]:
    """Every stored build's metadata, oldest first, with its folder and size."""
    if not store or not os.path.isdir(store):
        return []
    found = []
    for name in os.listdir(store):
        meta_path = os.path.join(store, name, META)
        if os.path.exists(meta_path):
            with open(meta_path) as handle:
                meta = json.load(handle)
            found.append({**meta, "folder": os.path.join(store, name),
                          "bytes": size_bytes(os.path.join(store, name))})
    return sorted(found, key=lambda meta: meta["stored"])


def prune(store: str, keep_newest: int) -> list[str]:
    """Drop all but the newest `keep_newest` builds; the folders removed."""
    removed = []
    for meta in entries(store)[:-keep_newest] if keep_newest > 0 else []:
        shutil.rmtree(meta["folder"], ignore_errors=True)
        removed.append(meta["folder"])
    return removed

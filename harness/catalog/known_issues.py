"""The known-issue registry: case x TVM/ffi version range -> expected verdict.

Tests turn a matching entry into a strict xfail, so an upstream fix shows up as
an unexpected pass and forces the registry to be updated.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import tomllib

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from harness.catalog.cases import CASES_DIR


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    case: str | tuple    # glob over case ids, or several
    verdict: str
    reference: str
    evidence: str = ""
    tvm: str = ""        # PEP 440 specifier over apache-tvm, "" = any
    tvm_ffi: str = ""    # over apache-tvm-ffi
    layout: str = ""     # "" = any

    def matches(self, case: str, versions: dict, layout: str = "nchw") -> bool:
        globs = (self.case,) if isinstance(self.case, str) else self.case
        if not any(fnmatch.fnmatch(case, g) for g in globs) or (self.layout and self.layout != layout):
            return False
        for spec, have in ((self.tvm, versions.get("tvm_version")),
                           (self.tvm_ffi, versions.get("tvm_ffi_version"))):
            if spec and not _within(have, spec):
                return False
        return True


def _within(version: str | None, spec: str) -> bool:
    """A source build ("git:<sha>") or a missing version is within no range."""
    try:
        return version is not None and Version(version) in SpecifierSet(spec, prereleases=True)
    except InvalidVersion:
        return False


@functools.cache
def registry(path: str | None = None) -> tuple[KnownIssue, ...]:
    path = path or os.path.join(CASES_DIR, "known_issues.toml")
    if not os.path.exists(path):
        return ()
    with open(path, "rb") as handle:
        entries = tomllib.load(handle).get("issue", [])
    return tuple(KnownIssue(**{**e, "case": e["case"] if isinstance(e["case"], str) else tuple(e["case"])})
                 for e in entries)


def lookup(case: str, versions: dict, layout: str = "nchw") -> KnownIssue | None:
    return next((k for k in registry() if k.matches(case, versions, layout)), None)

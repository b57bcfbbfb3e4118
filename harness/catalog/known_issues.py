"""The known-issue registry and the one place that decides what a result means.

An entry scopes a bug (case glob, TVM / tvm-ffi version range, layout, path)
and says which violations it explains (kind, and where given the stage, the
phase, the copier, the pass and the access path). The registry is the built-in
cases/known_issues.toml plus one per user catalog folder (cases.case_dirs).
`judge` matches every violation of a result to the most specific entry that
explains it; a result is *known* when all its violations are explained,
and an entry that applies but explains nothing is *stale* (upstream fixed it:
the registry must be updated). The CLI, report, matrix and the pytest plugin
all read results through `judge`, so known-issue handling is decided here only.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import re
import tomllib

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from harness.catalog.cases import CASES_DIR, case_dirs
from harness.verdict import PHASES, BadInput, Result, Violation
from harness.verdict import status as status_of

# A result that ended early cannot show that a registered violation is gone.
_INCOMPLETE = ("harness-error", "crash", "timeout", "unsupported")
# The path of `matrix --cross-release` results (a module saved on one release, loaded on
# the next): entries name it to scope a pair of releases (with the copier `json@A`).
CROSS_RELEASE_PATH = "cross-release"
_FIELDS = ("id", "case", "verdict", "reference", "evidence", "tvm", "tvm_ffi", "layout", "path",
           "stage", "phase", "copier", "pass", "access_path", "strict", "reproducer",
           "saved_by")


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    case: tuple          # globs over case ids
    verdict: str         # the violation kind it explains
    reference: str
    evidence: str = ""
    tvm: str = ""        # PEP 440 specifier over apache-tvm, "" = any
    tvm_ffi: str = ""    # over apache-tvm-ffi
    layout: str = ""     # "" = any
    path: str = ""       # extract | tune | compile, "" = any
    stage: str = ""      # the violation's stage, "" = any
    pass_name: str = ""  # glob over the violation's pass ("pass" in the file), "" = any
    access_path: str = ""  # the violation's access path, e.g. "(outcome)"; `*` = any text
    strict: bool = True  # False: the bug may or may not show on a case in scope
    reproducer: str = ""  # reproducers/<file>, relative to the registry's folder
    phase: str = ""      # the violation's phase (verdict.PHASES), "" = any
    copier: str = ""     # the violation's copier, "" = any
    id: str = ""         # a stable name (`check --json` names it); default FILE#N
    base: str = CASES_DIR  # the folder whose known_issues.toml holds it
    saved_by: str = ""   # cross-release: specifier over the apache-tvm that saved, "" = any

    @property
    def reproducer_path(self) -> str:
        """The reproducer, as a user would type it from the checkout (absolute for a
        user catalog's)."""
        if not self.reproducer:
            return ""
        if self.base == CASES_DIR:
            return os.path.join("cases", self.reproducer)
        return os.path.join(self.base, self.reproducer)

    def applies(self, case: str, versions: dict, layout: str = "nchw",
                path: str = "extract", source_builds: bool = False,
                saved_by: dict | None = None) -> bool:
        """In scope: this case, on this stack, layout and path (and for a cross-release
        result, `saved_by`: the versions of the release that saved what it loaded)."""
        if not any(fnmatch.fnmatch(case, glob) for glob in self.case):
            return False
        if (self.layout and self.layout != layout) or (self.path and self.path != path):
            return False
        if self.saved_by and not _within((saved_by or {}).get("tvm_version"), self.saved_by,
                                         source_builds):
            return False
        return self.on_stack(versions, source_builds)

    def on_stack(self, versions: dict, source_builds: bool = False) -> bool:
        """This TVM / tvm-ffi is within the entry's version ranges. A source build
        ("git:<sha>") has no release number: it is within no range, or with
        `source_builds` (a commit bisect: is this failure a registered one?) within all."""
        return all(not spec or _within(versions.get(key), spec, source_builds)
                   for spec, key in ((self.tvm, "tvm_version"),
                                     (self.tvm_ffi, "tvm_ffi_version")))

    def explains(self, violation: Violation) -> bool:
        if violation.kind != self.verdict or (self.stage and self.stage != violation.stage):
            return False
        if self.access_path and not _path_matches(self.access_path, violation.access_path):
            return False
        if (self.phase and self.phase != violation.phase) or (
                self.copier and self.copier != violation.copier):
            return False
        return not self.pass_name or fnmatch.fnmatch(violation.pass_name or "", self.pass_name)

    @property
    def specificity(self) -> int:
        """More constraints and no wildcard in the case: the more specific entry wins."""
        constraints = sum(bool(field) for field in (self.tvm, self.tvm_ffi, self.layout,
                                                     self.path, self.stage, self.pass_name,
                                                     self.access_path, self.phase, self.copier,
                                                     self.saved_by))
        exact_case = all(not any(ch in glob for ch in "*?[") for glob in self.case)
        return constraints + 10 * exact_case

    def describe(self) -> str:
        where = f" at {self.stage}" if self.stage else ""
        where += f", pass {self.pass_name}" if self.pass_name else ""
        return f"{self.verdict}{where} ({self.reference})"


def _path_matches(pattern: str, access_path: str) -> bool:
    """An entry's access path: exact, or with `*` standing for any text (the only
    wildcard: access paths are full of brackets, which fnmatch would read as classes)."""
    if "*" not in pattern:
        return pattern == access_path
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")),
                        access_path) is not None


def _within(version: str | None, spec: str, source_builds: bool = False) -> bool:
    """A missing version is within no range; a source build ("git:<sha>") within none
    unless `source_builds`."""
    if version is not None and version.startswith("git:"):
        return source_builds
    try:
        return version is not None and Version(version) in SpecifierSet(spec, prereleases=True)
    except InvalidVersion:
        return False


def _entry(raw: dict, where: str, base: str, default_id: str) -> KnownIssue:
    unknown = set(raw) - set(_FIELDS)
    if unknown or not {"case", "verdict", "reference"} <= set(raw):
        raise BadInput(f"{where}: fields must be among {', '.join(_FIELDS)} and include "
                       f"case, verdict, reference (got {', '.join(sorted(raw))})")
    data = dict(raw)
    data["case"] = (data["case"],) if isinstance(data["case"], str) else tuple(data["case"])
    data["pass_name"] = data.pop("pass", "")
    data.setdefault("id", default_id)
    if data.get("phase") and data["phase"] not in PHASES:
        raise BadInput(f"{where}: phase must be one of {', '.join(PHASES)}")
    return KnownIssue(base=base, **data)


def registry() -> tuple[KnownIssue, ...]:
    """Every entry: the built-in registry, then each user catalog folder's."""
    return _registry(tuple(os.path.join(folder, "known_issues.toml")
                           for folder in case_dirs()))


@functools.cache
def _registry(paths: tuple[str, ...]) -> tuple[KnownIssue, ...]:
    entries: list[KnownIssue] = []
    for path in paths:
        entries += read(path)
    ids = [entry.id for entry in entries]
    twice = sorted({entry_id for entry_id in ids if ids.count(entry_id) > 1})
    if twice:
        raise BadInput(f"known-issue ids must be unique across registries: {twice}")
    return tuple(entries)


def read(path: str) -> tuple[KnownIssue, ...]:
    """The entries of one known_issues.toml (none when it does not exist)."""
    if not os.path.exists(path):
        return ()
    try:
        with open(path, "rb") as handle:
            entries = tomllib.load(handle).get("issue", [])
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path} is not valid TOML: {exc}") from None
    base, name = os.path.dirname(os.path.abspath(path)), os.path.basename(path)
    return tuple(_entry(raw, f"{path}: issue #{index}", base, f"{name}#{index}")
                 for index, raw in enumerate(entries, 1))


def in_scope(case: str, versions: dict, layout: str = "nchw",
             path: str = "extract", source_builds: bool = False,
             saved_by: dict | None = None) -> list[KnownIssue]:
    """Entries that apply here, most specific first."""
    found = [issue for issue in registry()
             if issue.applies(case, versions, layout, path, source_builds, saved_by)]
    return sorted(found, key=lambda issue: -issue.specificity)


def lookup(case: str, versions: dict, layout: str = "nchw",
           path: str = "extract") -> KnownIssue | None:
    """The most specific entry in scope, if any."""
    found = in_scope(case, versions, layout, path)
    return found[0] if found else None


@dataclasses.dataclass
class Judgement:
    """A result read against the registry."""
    known: list[tuple[Violation, KnownIssue]]
    unknown: list[Violation]
    stale: list[KnownIssue]     # strict entries in scope that explained nothing
    verdict: str

    @property
    def exit_code(self) -> int:
        """0 when every violation is registered and no strict entry went stale."""
        return status_of(self.status).exit

    @property
    def failing(self) -> bool:
        return status_of(self.status).failing

    @property
    def status(self) -> str:
        """pass | known | new | stale | unsupported | harness-error."""
        if self.verdict in ("harness-error", "unsupported"):
            return self.verdict
        if self.unknown:
            return "new"
        if self.stale:
            return "stale"
        return "known" if self.known else "pass"

    def lines(self) -> list[str]:
        out = [f"known: {v.kind} at {v.where()}: [{issue.id}] {issue.reference}"
               + (f"; reproducer {issue.reproducer_path}" if issue.reproducer else "")
               for v, issue in self.known]
        out += [f"stale registry entry [{issue.id}] (it no longer happens here): "
                f"{issue.describe()}" for issue in self.stale]
        return out

    def to_json(self) -> dict:
        """`status`, `failing`, which entry explains each known violation, and which
        entries went stale."""
        return {"status": self.status, "failing": self.failing,
                "known": [{"violation": v.one_line(), "entry": issue.id,
                           "reference": issue.reference,
                           "reproducer": issue.reproducer_path} for v, issue in self.known],
                "stale": [{"entry": issue.id, "reference": issue.reference}
                          for issue in self.stale]}


def judge(result: Result, kinds: tuple[str, ...] | None = None,
          source_builds: bool = False) -> Judgement:
    """Match each violation (of `kinds`, default all) to the most specific entry explaining
    it. `source_builds`: a "git:<sha>" version is within every range (bisect-step asks
    whether a failure on a commit is a registered one)."""
    options = result.options or {}
    entries = in_scope(result.case, result.__dict__, options.get("layout", "nchw"),
                       options.get("path", "extract"), source_builds, options.get("saved_by"))
    # "unsupported" is not a violation of TVM's: cannot test, exit 125.
    violations = [v for v in result.violations
                  if v.kind != "unsupported" and (kinds is None or v.kind in kinds)]
    known, unknown, used = [], [], set()
    for violation in violations:
        issue = next((entry for entry in entries if entry.explains(violation)), None)
        if issue is None:
            unknown.append(violation)
        else:
            known.append((violation, issue))
            used.add(issue)
    stale = []
    # An injected pass or a result that ended early may hide a registered violation.
    if result.verdict not in _INCOMPLETE and not options.get("inject_pass"):
        ran = {stage.name for stage in result.stages}
        # A cross-release result runs none of the paths the other entries were measured
        # on: they may explain its violations, but only entries naming it go stale there.
        cross = options.get("path") == CROSS_RELEASE_PATH
        # An entry is stale only if its stage ran: a path stopped earlier proves nothing.
        stale = [entry for entry in entries if entry.strict and entry not in used
                 and (kinds is None or entry.verdict in kinds)
                 and (not entry.stage or entry.stage in ran)
                 and (entry.path or not cross)]
    return Judgement(known, unknown, stale, result.verdict)


# ---- findings of a guarded test suite (harness.suite) ----------------------

SUITE_PATH = "suite"   # entries with `path = "suite"` judge suite findings, and only them


@dataclasses.dataclass
class SuiteJudgement:
    """A guarded session's findings read against the registry: per finding the entry that
    explains it (or none), and the strict suite entries that explained nothing although a
    test they cover ran."""
    known: list[tuple[str, Violation, KnownIssue]]
    unknown: list[tuple[str, Violation]]
    stale: list[KnownIssue]
    harness_errors: list[tuple[str, Violation]]

    @property
    def status(self) -> str:
        if self.harness_errors:
            return "harness-error"
        if self.unknown:
            return "new"
        if self.stale:
            return "stale"
        return "known" if self.known else "pass"

    @property
    def exit_code(self) -> int:
        return status_of(self.status).exit


def suite_entries(versions: dict) -> list[KnownIssue]:
    """The suite entries on this stack, most specific first."""
    found = [entry for entry in registry()
             if entry.path == SUITE_PATH and entry.on_stack(versions)]
    return sorted(found, key=lambda entry: -entry.specificity)


def explaining(entries: list[KnownIssue], test: str, violation: Violation) -> KnownIssue | None:
    return next((entry for entry in entries
                 if any(fnmatch.fnmatch(test, glob) for glob in entry.case)
                 and entry.explains(violation)), None)


def judge_suite(findings: list[tuple[str, Violation]], tests_ran: list[str],
                versions: dict) -> SuiteJudgement:
    """`findings`: (test id, violation). A suite entry's `case` globs are over test ids
    (`tests/python/relax/test_x.py::*`). "unsupported" (a copier that cannot carry a
    module) is counted by the summary, not judged."""
    entries = suite_entries(versions)
    known, unknown, errors, used = [], [], [], set()
    for test, violation in findings:
        if violation.kind == "unsupported":
            continue
        if violation.kind == "harness-error":
            errors.append((test, violation))
            continue
        entry = explaining(entries, test, violation)
        if entry is None:
            unknown.append((test, violation))
        else:
            known.append((test, violation, entry))
            used.add(entry)
    stale = [entry for entry in entries if entry.strict and entry not in used
             and any(fnmatch.fnmatch(test, glob) for test in tests_ran for glob in entry.case)]
    return SuiteJudgement(known, unknown, stale, errors)

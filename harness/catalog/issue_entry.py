"""One known-issue entry: what it says, what it explains, and how it is read from a file.

An entry says which violations it explains: its signature (harness.signature), that
is the kind (`verdict`), and where given the stage, phase, copier, pass, access path
and `message` (patterns over the normalized message `check` prints in each
signature). It says on which stack it holds (TVM / tvm-ffi version range, layout,
path, the release that saved a cross-release module) and, in `case` (globs over case
ids, or test ids for the suite guard), where the bug is expected to show. Which entry
explains a result's violation, and what the result then means, is known_issues'.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import glob
import os
import re
import tomllib

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from harness.catalog.cases import CASES_DIR
from harness.signature import LOCALIZED, Signature, normalize
from harness.verdict import PHASES, BadInput, Outcome, Violation

_FIELDS = ("id", "case", "verdict", "reference", "evidence", "tvm", "tvm_ffi", "layout", "path",
           "stage", "phase", "copier", "pass", "access_path", "strict", "reproducer",
           "saved_by", "message", "case_only", "workaround",
           # what an upstream report needs (harness/cli/upstream.py): none of them matches
           "title", "expected", "actual", "at_fault", "first_bad_release", "introduced_by",
           "fixed_by", "measured_on", "fix", "fix_verified")
# Kinds whose signature has no message (signature._message): an entry scopes them by pass.
_NO_MESSAGE = (Outcome.MUTATED, Outcome.TIMEOUT)
# Kinds an entry may recognize outside its cases, given a message (error, lossy-roundtrip)
# or a pass (mutated). A crash's message is its signal and a timeout has none: neither
# tells one bug from another.
_BY_MESSAGE = (Outcome.ERROR, Outcome.LOSSY_ROUNDTRIP)


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    case: tuple          # globs over case ids: where the bug is expected to show
    verdict: str         # the violation kind it explains
    reference: str
    evidence: str = ""
    tvm: str = ""        # PEP 440 specifier over apache-tvm, "" = any
    tvm_ffi: str = ""    # over apache-tvm-ffi
    layout: str = ""     # "" = any
    path: str = ""       # extract | tune | compile, "" = any
    stage: str = ""      # the violation's stage, "" = any
    pass_name: str = ""  # glob over the violation's pass ("pass" in the file), "" = any
    # the violation's access path, e.g. "(outcome)", one or a list of patterns (`*` = any
    # text); () = any
    access_path: tuple = ()
    strict: bool = True  # False: the bug may or may not show on a case in scope
    reproducer: str = ""  # reproducers/<file>, relative to the registry's folder
    # what a user can do instead; verified: `REPRODUCER --workaround` applies it and exits 0
    # where the bug is (tests/test_reproducers.py, on every release the nightly runs)
    workaround: str = ""
    phase: str = ""      # the violation's phase (verdict.PHASES), "" = any
    copier: str = ""     # the violation's copier, "" = any
    id: str = ""         # a stable name (`check --json` names it); default FILE#N
    base: str = CASES_DIR  # the catalog folder whose registry holds it
    file: str = ""       # the TOML file it is written in (what `watch --record` edits)
    saved_by: str = ""   # cross-release: specifier over the apache-tvm that saved, "" = any
    message: tuple = ()  # patterns over the normalized message (`*` = any text), () = any
    case_only: str = ""  # why the entry applies to its cases only ("" = recognized anywhere)
    # The upstream report's (harness/cli/upstream.py): what a maintainer reads, never matched.
    title: str = ""      # the issue's title, as a maintainer would write it
    expected: str = ""   # what TVM should do
    actual: str = ""     # what it does instead
    at_fault: str = ""   # "[OWNER/REPO ]PATH:LINE @ COMMIT: why" (apache/tvm unless named)
    first_bad_release: str = ""  # the oldest release that has the bug, the one before it good
    introduced_by: str = ""  # "<hash> <commit title>": the first bad commit (a commit bisect)
    fixed_by: str = ""   # "<hash> <commit title>": the commit that fixed it
    measured_on: tuple = ()  # where it was last measured, newest release (and commit) first
    fix: str = ""        # a patch to TVM that fixes it: fixes/<file>.patch, relative to the folder
    fix_verified: str = ""   # what `upstream ID --fix` measured: the try that showed it fixes

    @property
    def reproducer_path(self) -> str:
        """The reproducer, as a user would type it: relative in the checkout, absolute
        elsewhere (a user catalog's, or the built-in one seen from a foreign project)."""
        if not self.reproducer:
            return ""
        if self.base == CASES_DIR and os.getcwd() == os.path.dirname(CASES_DIR):
            return os.path.join("cases", self.reproducer)
        return os.path.join(self.base, self.reproducer)

    def applies(self, case: str, versions: dict, layout: str = "nchw",
                path: str = "extract", source_builds: bool = False,
                saved_by: dict | None = None) -> bool:
        """In scope: expected at this case, and holding on this stack, layout and path."""
        return self.expected_at(case) and self.holds_on(versions, layout, path,
                                                        source_builds, saved_by)

    def expected_at(self, case: str) -> bool:
        """`case` (a case id, a file, or a suite's test id) is one the bug is expected on:
        there a strict entry that explains nothing is stale."""
        return any(fnmatch.fnmatch(case, glob) for glob in self.case)

    def holds_on(self, versions: dict, layout: str = "nchw", path: str = "extract",
                 source_builds: bool = False, saved_by: dict | None = None) -> bool:
        """On this stack, layout and path (and for a cross-release result, `saved_by`: the
        versions of the release that saved what it loaded), wherever the case."""
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
        """The violation's signature matches every signature field the entry gives (where
        it may be matched is `candidates`' question)."""
        if violation.kind != self.verdict or (self.stage and self.stage != violation.stage):
            return False
        if self.access_path and not any(star_matches(pattern, violation.access_path)
                                        for pattern in self.access_path):
            return False
        if (self.phase and self.phase != violation.phase) or (
                self.copier and self.copier != violation.copier):
            return False
        if self.message and not any(star_matches(pattern, Signature.of(violation).message)
                                    for pattern in self.message):
            return False
        return not self.pass_name or fnmatch.fnmatch(violation.pass_name or "", self.pass_name)

    @property
    def recognizable(self) -> bool:
        """It may explain a violation outside its cases: it names its bug (a message, or
        a mutation's pass) and does not say the bug depends on the model (`case_only`)."""
        return not self.case_only and self.names_its_bug

    @property
    def names_its_bug(self) -> bool:
        """Its signature fields tell its bug from others of the kind: a message (an error,
        a lossy copy), a mutation's pass, a wrong answer's pass or first wrong node."""
        if self.verdict == Outcome.MUTATED:
            return bool(self.pass_name)
        if self.verdict == Outcome.WRONG_RESULT:   # by the node the answer goes wrong at
            return any(LOCALIZED in pattern for pattern in self.access_path) \
                or bool(self.pass_name)
        return self.verdict in _BY_MESSAGE and bool(self.message)

    @property
    def specificity(self) -> int:
        """More constraints and no wildcard in the case: the more specific entry wins."""
        constraints = sum(bool(field) for field in (self.tvm, self.tvm_ffi, self.layout,
                                                     self.path, self.stage, self.pass_name,
                                                     self.access_path, self.phase, self.copier,
                                                     self.saved_by, self.message))
        exact_case = all(not any(ch in glob for ch in "*?[") for glob in self.case)
        return constraints + 10 * exact_case

    def describe(self) -> str:
        where = f" at {self.stage}" if self.stage else ""
        where += f", pass {self.pass_name}" if self.pass_name else ""
        said = f": {' | '.join(self.message)}" if self.message else ""
        return f"{self.verdict}{where}{said} ({self.reference})"


def star_matches(pattern: str, text: str) -> bool:
    """An entry's access path or message: exact, or with `*` standing for any text (the
    only wildcard: access paths and messages are full of brackets, `msgs[i]`, which
    fnmatch would read as classes)."""
    if "*" not in pattern:
        return pattern == text
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")),
                        text) is not None


def _within(version: str | None, spec: str, source_builds: bool = False) -> bool:
    """A missing version is within no range; a source build ("git:<sha>") within none
    unless `source_builds`."""
    if version is not None and version.startswith("git:"):
        return source_builds
    return version is not None and _in_range(version, spec)


@functools.lru_cache(maxsize=4096)
def _in_range(version: str, spec: str) -> bool:
    """Remembered: every judgement asks it of every entry (a third of a fuzz campaign's
    checking time went to parsing the same ranges again)."""
    try:
        return Version(version) in SpecifierSet(spec, prereleases=True)
    except InvalidVersion:
        return False


def _entry(raw: dict, where: str, base: str, default_id: str, file: str = "") -> KnownIssue:
    unknown = set(raw) - set(_FIELDS)
    if unknown or not {"case", "verdict", "reference"} <= set(raw):
        raise BadInput(f"{where}: fields must be among {', '.join(_FIELDS)} and include "
                       f"case, verdict, reference (got {', '.join(sorted(raw))})")
    data = dict(raw)
    data["case"] = _patterns(data["case"])
    data["message"] = _patterns(data.get("message", ()))
    data["access_path"] = _patterns(data.get("access_path", ()))
    data["measured_on"] = _patterns(data.get("measured_on", ()))
    data["pass_name"] = data.pop("pass", "")
    data.setdefault("id", default_id)
    if data.get("phase") and data["phase"] not in PHASES:
        raise BadInput(f"{where}: phase must be one of {', '.join(PHASES)}")
    _check_signature_fields(data, where)
    return KnownIssue(base=base, file=file, **data)


def _patterns(value) -> tuple:
    """A field that takes one value or a list of them (`case`, `message`, `access_path`,
    `measured_on`)."""
    return (value,) if isinstance(value, str) else tuple(value)


def _check_signature_fields(data: dict, where: str) -> None:
    """Refuse a `message` that could never match, and a `case_only` without its reason:
    both would quietly change what the entry explains."""
    if data["message"] and data["verdict"] in _NO_MESSAGE:
        raise BadInput(f"{where}: a {data['verdict']} violation's signature has no message; "
                       "name the pass instead of a `message`")
    if not all(isinstance(pattern, str) and pattern for pattern in data["message"]):
        raise BadInput(f"{where}: `message` must be a non-empty pattern or a list of them")
    for pattern in data["message"] if data["verdict"] != Outcome.CRASH else ():
        # A pattern is matched against the normalized message (numbers read N, generated
        # names name?): text that normalizing would change can never match.
        for part in pattern.split("*"):
            if part.strip() and normalize(part) != " ".join(part.split()):
                raise BadInput(f"{where}: `message` {pattern!r} can never match: messages are "
                               f"normalized, so {part.strip()!r} reads {normalize(part)!r}")
    if data.get("workaround") and not data.get("reproducer"):
        raise BadInput(f"{where}: a `workaround` is verified by its `reproducer` (run with "
                       "--workaround, it exits 0): name the reproducer")
    if data.get("fix_verified") and not data.get("fix"):
        raise BadInput(f"{where}: `fix_verified` says how a `fix` was verified: name the fix")
    if "case_only" in data and not (isinstance(data["case_only"], str)
                                    and data["case_only"].strip()):
        raise BadInput(f"{where}: `case_only` says why the bug depends on the model "
                       '(a sentence, e.g. case_only = "its message names no operator")')


REGISTRY_FILE, REGISTRY_FOLDER = "known_issues.toml", "known_issues"


def files(folder: str) -> list[str]:
    """A catalog folder's registry files: its known_issues.toml (one file, as a user's
    folder usually has), then every known_issues/*.toml in name order (the built-in
    registry, a file per component so that a diff shows one component's entries)."""
    single = os.path.join(folder, REGISTRY_FILE)
    parts = sorted(glob.glob(os.path.join(folder, REGISTRY_FOLDER, "*.toml")))
    return ([single] if os.path.exists(single) else []) + parts


def read(path: str, base: str | None = None) -> tuple[KnownIssue, ...]:
    """The entries of one registry file (none when it does not exist); `base` is the
    catalog folder its reproducers are relative to (default: the file's folder)."""
    if not os.path.exists(path):
        return ()
    try:
        with open(path, "rb") as handle:
            entries = tomllib.load(handle).get("issue", [])
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path} is not valid TOML: {exc}") from None
    name = os.path.basename(path)
    base = base or os.path.dirname(os.path.abspath(path))
    return tuple(_entry(raw, f"{path}: issue #{index}", base, f"{name}#{index}", path)
                 for index, raw in enumerate(entries, 1))


_AT_FAULT = re.compile(r"^(?:(?P<repo>[\w.-]+/[\w.-]+)\s+)?(?P<path>[^\s:]+):(?P<line>\d+)\s+@\s+"
                       r"(?P<commit>[0-9a-f]{7,40}):\s+(?P<why>\S.*)$", re.S)


@dataclasses.dataclass(frozen=True)
class SourceLine:
    """Where the bug is, as read at one commit (`at_fault`): the link a maintainer clicks,
    and the file a change must touch to fix it (`try` selects by it)."""
    repo: str
    path: str
    line: int
    commit: str
    why: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{self.line}"


def source_line(entry: KnownIssue) -> SourceLine | None:
    """The entry's `at_fault`, or None; a malformed one is bad input (it would mislink)."""
    if not entry.at_fault:
        return None
    match = _AT_FAULT.match(entry.at_fault.strip())
    if match is None:
        raise BadInput(f"[{entry.id}] at_fault must read '[OWNER/REPO ]PATH:LINE @ COMMIT: "
                       f"why', got {_one_line(entry.at_fault)[:80]!r}")
    return SourceLine(match["repo"] or "apache/tvm", match["path"], int(match["line"]),
                      match["commit"], _one_line(match["why"]))


def _one_line(text: str) -> str:
    return " ".join(text.split())

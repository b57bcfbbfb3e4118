"""The known-issue registry and the one place that decides what a result means.

What an entry says and explains is harness.catalog.issue_entry. A violation is matched
by what was seen first, not by where: an entry explains it
  * on a case in its `case` globs, when the signature fields it gives match;
  * on any other case or file (a user's own model), when in addition the entry names
    its bug well enough to be told from another: an `error` or `lossy-roundtrip` entry
    needs a `message`, a `mutated` one a `pass` (a mutation's signature has no
    message); a `crash` or `timeout` entry never does (a signal or a time limit names no
    cause). An entry with `case_only = "why"` applies only to its cases: the bug depends
    on the model, or its message is one that other bugs raise too (a false "known" hides
    a new bug, as bad as a false alarm).
The most specific entry expected at the case wins, else the most specific of the others.

A result is *known* when all its violations are explained. A strict entry expected at
the case that explains nothing there is *stale* (upstream fixed it: the registry must
be updated); outside its cases an entry is never stale. The registry is the built-in
cases/known_issues/*.toml plus each user catalog folder's (cases.case_dirs,
issue_entry.files). The CLI, report, matrix, the pytest plugin and the suite summary all
read results through `judge` / `judge_suite`, which share the matching; what the matches
mean (pass, known, new, stale) is verdict.reading's, decided there once.
"""
from __future__ import annotations

import dataclasses
import functools

from harness.catalog.cases import case_dirs
from harness.catalog.issue_entry import KnownIssue, files, read
from harness.result import Result
from harness.verdict import BadInput, Outcome, Violation, reading

# A result that ended early cannot show that a registered violation is gone.
_INCOMPLETE = (Outcome.HARNESS_ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.UNSUPPORTED)
# The path of `matrix --cross-release` results (a module saved on one release, loaded on
# the next): entries name it to scope a pair of releases (with the copier `json@A`).
CROSS_RELEASE_PATH = "cross-release"
# Suite findings the registry never explains: a copier that cannot carry a module
# (counted by the summary) and a failure of the guard itself.
_NOT_TVMS = (Outcome.UNSUPPORTED, Outcome.HARNESS_ERROR)

def registry() -> tuple[KnownIssue, ...]:
    """Every entry: the built-in registry, then each user catalog folder's."""
    return _registry(tuple((path, folder) for folder in case_dirs() for path in files(folder)))


@functools.cache
def _registry(paths: tuple[tuple[str, str], ...]) -> tuple[KnownIssue, ...]:
    """The entries of every (registry file, its catalog folder), in order."""
    entries: list[KnownIssue] = []
    for path, folder in paths:
        entries += read(path, folder)
    ids = [entry.id for entry in entries]
    twice = sorted({entry_id for entry_id in ids if ids.count(entry_id) > 1})
    if twice:
        raise BadInput(f"known-issue ids must be unique across registries: {twice}")
    return tuple(entries)


def in_scope(case: str, versions: dict, layout: str = "nchw",
             path: str = "extract", source_builds: bool = False,
             saved_by: dict | None = None) -> list[KnownIssue]:
    """Entries expected at this case and holding here, most specific first."""
    return _most_specific_first([issue for issue in registry() if issue.applies(
        case, versions, layout, path, source_builds, saved_by)])


def lookup(case: str, versions: dict, layout: str = "nchw",
           path: str = "extract") -> KnownIssue | None:
    """The most specific entry in scope, if any."""
    found = in_scope(case, versions, layout, path)
    return found[0] if found else None


def _most_specific_first(entries: list[KnownIssue]) -> list[KnownIssue]:
    return sorted(entries, key=lambda entry: -entry.specificity)


def candidates(entries: list[KnownIssue], where: str) -> list[KnownIssue]:
    """The entries that may explain a violation seen at `where` (a case id, a model file,
    a suite's test id), in the order they are tried: those expected there, most specific
    first, then those that name their bug well enough to be recognized anywhere. An entry
    expected at the case outranks one that only recognizes the signature, so a user's
    own entry for their case is the one they read."""
    home = [entry for entry in entries if entry.expected_at(where)]
    away = [entry for entry in entries if not entry.expected_at(where) and entry.recognizable]
    return _most_specific_first(home) + _most_specific_first(away)


def _sort_out(findings: list[tuple[str, Violation]], entries: list[KnownIssue]):
    """Each (where, violation) with the first candidate entry that explains it: the one
    matching rule of `judge` and `judge_suite`. Returns (known as (where, violation,
    entry), unknown as (where, violation), the entries used)."""
    known, unknown, used = [], [], set()
    tried: dict[str, list[KnownIssue]] = {}
    for where, violation in findings:
        if where not in tried:
            tried[where] = candidates(entries, where)
        entry = next((entry for entry in tried[where] if entry.explains(violation)), None)
        if entry is None:
            unknown.append((where, violation))
        else:
            known.append((where, violation, entry))
            used.add(entry)
    return known, unknown, used


@dataclasses.dataclass
class Judgement:
    """A result read against the registry."""
    known: list[tuple[Violation, KnownIssue]]
    unknown: list[Violation]
    stale: list[KnownIssue]     # strict entries in scope that explained nothing
    verdict: Outcome

    @property
    def exit_code(self) -> int:
        """0 when every violation is registered and no strict entry went stale."""
        return self.status.exit

    @property
    def failing(self) -> bool:
        return self.status.failing

    @property
    def status(self) -> Outcome:
        """pass | known | new | stale | unsupported | harness-error (verdict.reading)."""
        return reading(self.verdict, bool(self.unknown), bool(self.stale), bool(self.known))

    def lines(self) -> list[str]:
        """Each known violation's entry, then each stale entry, one line each."""
        return self.known_lines() + self.stale_lines()

    def known_lines(self) -> list[str]:
        lines = []
        for violation, issue in self.known:
            lines.append(f"known: {violation.kind} at {violation.where()}: [{issue.id}] "
                         f"{issue.reference}" + (f"; reproducer {issue.reproducer_path}"
                                                 if issue.reproducer else ""))
            if issue.workaround:   # verified: the reproducer with it applied exits 0
                lines.append(f"  workaround: {issue.workaround} (verified: "
                             f"{issue.reproducer_path} --workaround exits 0)")
        return lines

    def stale_lines(self) -> list[str]:
        return [f"stale registry entry [{issue.id}] (it no longer happens here): "
                f"{issue.describe()}" for issue in self.stale]

    def to_json(self) -> dict:
        """`status`, `failing`, which entry explains each known violation, and which
        entries went stale."""
        return {"status": str(self.status), "failing": self.failing,
                "known": [{"violation": v.one_line(), "entry": issue.id,
                           "reference": issue.reference,
                           "reproducer": issue.reproducer_path} for v, issue in self.known],
                "stale": [{"entry": issue.id, "reference": issue.reference}
                          for issue in self.stale]}


def judge(result: Result, kinds: tuple[str, ...] | None = None,
          source_builds: bool | None = None) -> Judgement:
    """Match each violation (of `kinds`, default all) to the entry explaining it (the
    module docstring has the rule). `source_builds`: a "git:<sha>" version is within every
    range; by default, when the result is a source build's (a commit has no release
    number: read against no range, every registered bug on it read `new`)."""
    if source_builds is None:
        source_builds = str(result.tvm_version or "").startswith("git:")
    options = result.options or {}
    entries = [entry for entry in registry() if entry.holds_on(
        result.versions, options.get("layout", "nchw"), options.get("path", "extract"),
        source_builds, options.get("saved_by"))]
    # "unsupported" is not a violation of TVM's: cannot test, exit 125.
    violations = [v for v in result.violations
                  if v.kind != Outcome.UNSUPPORTED and (kinds is None or v.kind in kinds)]
    known, unknown, used = _sort_out([(result.case, v) for v in violations], entries)
    stale = []
    # An injected pass or a result that ended early may hide a registered violation.
    if result.verdict not in _INCOMPLETE and not options.get("inject_pass"):
        ran = {stage.name for stage in result.stages}
        # A cross-release result runs none of the paths the other entries were measured
        # on: they may explain its violations, but only entries naming it go stale there.
        cross = options.get("path") == CROSS_RELEASE_PATH
        # An entry is stale only where expected and if its stage ran: a path stopped
        # earlier proves nothing.
        stale = [entry for entry in _most_specific_first(entries)
                 if entry.strict and entry not in used and entry.expected_at(result.case)
                 and (kinds is None or entry.verdict in kinds)
                 and (not entry.stage or entry.stage in ran)
                 and (entry.path or not cross)]
    return Judgement([(violation, entry) for _, violation, entry in known],
                     [violation for _, violation in unknown], stale, result.verdict)


def explained_off_its_cases(result: Result, violation: Violation) -> KnownIssue | None:
    """The entry, holding on the result's stack, layout and path, whose signature fields
    match `violation` on whatever case: for a fuzz campaign, a registered bug met by a
    generated program (a `case_only` entry's too) is not news to stop at."""
    options = result.options or {}
    return next((entry for entry in _most_specific_first(registry())
                 if entry.holds_on(result.versions, options.get("layout", "nchw"),
                                   options.get("path", "extract"))
                 and entry.names_its_bug and entry.explains(violation)), None)


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
    def status(self) -> Outcome:
        """As a result's (verdict.reading), a failure of the guard standing for the verdict."""
        verdict = Outcome.HARNESS_ERROR if self.harness_errors else Outcome.PASS
        return reading(verdict, bool(self.unknown), bool(self.stale), bool(self.known))

    @property
    def exit_code(self) -> int:
        return self.status.exit


def suite_entries(versions: dict) -> list[KnownIssue]:
    """The suite entries on this stack, most specific first."""
    return _most_specific_first([entry for entry in registry()
                                 if entry.path == SUITE_PATH and entry.on_stack(versions)])


def judge_suite(findings: list[tuple[str, Violation]], tests_ran: list[str],
                versions: dict) -> SuiteJudgement:
    """`findings`: (test id, violation), matched as `judge` matches a result's: a suite
    entry's `case` globs over test ids (`tests/python/relax/test_x.py::*`) say where it
    is expected (and goes stale), its signature what it explains. "unsupported" (a
    copier that cannot carry a module) is counted by the summary, not judged."""
    entries = suite_entries(versions)
    judged = [(test, violation) for test, violation in findings
              if violation.kind not in _NOT_TVMS]
    errors = [(test, violation) for test, violation in findings
              if violation.kind == Outcome.HARNESS_ERROR]
    known, unknown, used = _sort_out(judged, entries)
    ran = set(tests_ran)
    stale = [entry for entry in entries if entry.strict and entry not in used
             and any(entry.expected_at(test) for test in ran)]
    return SuiteJudgement(known, unknown, stale, errors)

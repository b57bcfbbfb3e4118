"""Why a test did not pass, as data: pytest's reason, normalized, put in a category, counted.

A suite run far from its own CI skips what needs a GPU or a package missing here,
cannot collect some files, and has tests that fail on their own. None of that is a
finding of the guard, and none of it may vanish from the count either. Each record
keeps its outcome and pytest's reason (a skip's reason; the first error line of a
failure or of a file pytest could not collect), and `tally` groups them:

  skipped             the test or its whole module skipped itself ("need cuda")
  missing-package     an import of a package (or a shared library) missing here; TVM's own
                      modules are not packages missing here: a test importing a TVM name
                      the wheel lacks is the test failing
  needs-network       a download or a name lookup that failed
  cannot-collect      a file pytest could not collect for another reason
  failed              a test failing (or erroring in setup) on its own: it failed again
                      when run without the guard, or the run was not guarded
  failed-unrechecked  failed under the guard and was not run again without it
  flaky               failed under the guard, passed without it, and passed under the guard
                      when run once more: the test's own flakiness, not a harness error
  guard-changed       the guard's doing, a harness error (the summary's status, exit 4): a
                      test that failed under the guard, passed without it and failed under
                      it again; or a file killed under the guard (time cap, signal), twice,
                      whose pytest completed when run again without it
  time-cap            a file whose pytest was killed at --file-timeout (again without the
                      guard too, or not run again)
  crashed             a file whose pytest died of a signal (the kernel's OOM killer too), or
                      ended without ending its session (again without the guard too)

None is a finding of the guard: the first three cannot run here, the rest but one are TVM's
or its test's own, and guard-changed is the harness's own error (summary.py). The rule is
the table below, on the first error line only, so a report reads why each was put where.
"""
from __future__ import annotations

import re

SKIPPED, MISSING_PACKAGE, NEEDS_NETWORK = "skipped", "missing-package", "needs-network"
CANNOT_COLLECT, FAILED = "cannot-collect", "failed"
FAILED_UNRECHECKED, FLAKY, GUARD_CHANGED = "failed-unrechecked", "flaky", "guard-changed"
TIME_CAP, CRASHED = "time-cap", "crashed"
CATEGORIES = (SKIPPED, MISSING_PACKAGE, NEEDS_NETWORK, CANNOT_COLLECT, FAILED,
              FAILED_UNRECHECKED, FLAKY, GUARD_CHANGED, TIME_CAP, CRASHED)
NOT_HERE = (SKIPPED, MISSING_PACKAGE, NEEDS_NETWORK)   # cannot run here
# The suite's own failures (suite-failed): a test failing unguarded too, or never re-run
# without the guard, a file that does not collect, a file's pytest killed or dead.
SUITE_FAILURES = (CANNOT_COLLECT, FAILED, FAILED_UNRECHECKED, TIME_CAP, CRASHED)
MEANING = {SKIPPED: "cannot run here: the test skipped itself",
           MISSING_PACKAGE: "cannot run here: a package or library is missing",
           NEEDS_NETWORK: "cannot run here: no network",
           CANNOT_COLLECT: "the test file does not collect here",
           FAILED: "the test fails on its own, unguarded too: the suite's, not the guard's",
           FAILED_UNRECHECKED: "failed under the guard, not run again without it",
           FLAKY: "failed under the guard, passed without it and under it again: flaky",
           GUARD_CHANGED: "the guard changed the outcome (not without it): a harness error",
           TIME_CAP: "the file's pytest was killed at the time cap",
           CRASHED: "the file's pytest died of a signal"}
FAILING = ("failed", "error")   # the outcomes of a test that did not pass
NOT_FAILING = ("passed", "skipped", "xfailed", "xpassed")   # a test that ran and did not fail
STOPPED = (TIME_CAP, CRASHED)   # a file's pytest killed: run again unguarded (file_run.py)
COMPLETED = "completed"         # the outcome of such a re-run that ended its session
OWN_MODULES = ("tvm", "tvm_ffi")   # a missing one of these is the test's, not this machine's

_MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
_NOT_HERE_RULES = (
    (MISSING_PACKAGE, re.compile(r"cannot open shared object file")),
    (NEEDS_NETWORK, re.compile(r"URLError|urlopen error|Temporary failure in name resolution|"
                               r"Name or service not known|Network is unreachable|"
                               r"Failed to establish a new connection|Max retries exceeded")),
)
_MASKS = (
    (re.compile(r"(?:[\w.+-]*/)+site-packages/"), ""),   # where a release is installed
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\s+"), " "),
)
_NUMBERS = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
REASON_CHARS = 300   # what a record keeps of a reason


def first_error_line(longrepr) -> str:
    """The line that says what went wrong: the exception's own line when pytest kept it
    (reprcrash), else the first `E` line of the text (a file that could not be imported,
    a missing fixture), else its last line."""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and crash.message.strip():
        return crash.message.strip().splitlines()[0][:REASON_CHARS]
    text = str(longrepr)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [line[1:].strip() for line in lines if line.startswith("E ") and line[1:].strip()]
    return (marked or lines or [""])[0 if marked else -1][:REASON_CHARS]


def reason_of(report) -> str:
    """pytest's reason for a report that did not pass: a skip's or an xfail's reason, else
    the first error line."""
    if hasattr(report, "wasxfail"):
        return (report.wasxfail or "xfail")[:REASON_CHARS]
    if report.skipped:
        longrepr = report.longrepr
        text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        return text.removeprefix("Skipped: ").strip()[:REASON_CHARS]
    return first_error_line(report.longrepr)


def normalize(reason: str, numbers: bool = False) -> str:
    """One line, with install paths and addresses masked (and numbers, for error lines:
    `assert 3 == 4` and `assert 5 == 6` are one failure), so like reasons group."""
    text = reason.strip().splitlines()[0] if reason.strip() else "(no reason given)"
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return (_NUMBERS.sub("N", text) if numbers else text).strip()


def not_here(reason: str) -> str | None:
    """The category of an error line that says this machine lacks something, else None."""
    missing = _MISSING_MODULE.search(reason)
    if missing:
        return None if missing.group(1).split(".")[0] in OWN_MODULES else MISSING_PACKAGE
    return next((category for category, rule in _NOT_HERE_RULES if rule.search(reason)), None)


def category_of(line: dict, rechecked: dict[str, dict]) -> str | None:
    """The category of one record line (a test's, or a file's or collector's), None when
    it passed. `rechecked`: {test or file: its `rechecked` line} of what failed (or was
    killed) under the guard and was run again without it (and, a test that then passed,
    once more under it: `guarded_again`)."""
    outcome, reason = line.get("outcome", ""), line.get("reason", "")
    if outcome in STOPPED:
        rerun = rechecked.get(line.get("collector", ""), {})
        return GUARD_CHANGED if rerun.get("outcome") == COMPLETED else outcome
    if outcome == "skipped":
        return SKIPPED
    if outcome not in FAILING:
        return None
    if "collector" in line:
        return not_here(reason) or CANNOT_COLLECT
    if not_here(reason):
        return not_here(reason)
    if not line.get("guarded", True):
        return FAILED
    rerun = rechecked.get(line["test"])
    if rerun is None:
        return FAILED_UNRECHECKED
    if rerun.get("outcome") in FAILING:
        return FAILED
    # passed without the guard: flaky only when it passed under the guard once more
    return FLAKY if rerun.get("guarded_again") in NOT_FAILING else GUARD_CHANGED


def _rechecked(lines: list[dict]) -> dict[str, dict]:
    return {line["rechecked"]: line for line in lines if "rechecked" in line}


def guard_changed(lines: list[dict]) -> list[dict]:
    """What the guard changed, one entry per test or file: {file, test (for a file, the
    test that was running; '' before its first), what (one line, the same for every
    test, resp. every file), how (the reasons)}."""
    rechecked, found = _rechecked(lines), []
    for line in lines:
        if "rechecked" in line or category_of(line, rechecked) != GUARD_CHANGED:
            continue
        if "test" in line:
            rerun = rechecked[line["test"]]
            second = rerun.get("guarded_again") or "not run"
            found.append({"file": line["test"].split("::")[0], "test": line["test"],
                          "what": "the guard changed a test's outcome: it failed under the "
                                  "guard, passed without it and did not pass under it again",
                          "how": f"under the guard: {line.get('reason', '')}; once more "
                                 f"under it: {second} {rerun.get('guarded_again_reason', '')}"
                                 .strip()})
        else:
            found.append({"file": line["collector"], "test": line.get("running", ""),
                          "what": "the guard changed a file's outcome: its pytest was "
                                  "killed under the guard (twice) and completed without it",
                          "how": f"under the guard: {line.get('reason', '')}"})
    return found


def tally(lines: list[dict]) -> dict[str, dict]:
    """{category: {tests, files, reasons: [{reason, tests, files, example}]}}, categories in
    CATEGORIES order, most frequent reason first. `tests` counts tests (a collector's or a
    file's line counts none), `files` the distinct test files."""
    rechecked = _rechecked(lines)
    groups: dict[tuple[str, str], dict] = {}
    for line in lines:
        if "rechecked" in line:
            continue
        category = category_of(line, rechecked)
        if category is None:
            continue
        name = line.get("test") or line.get("collector", "")
        reason = normalize(line.get("reason", ""), numbers=category != SKIPPED)
        group = groups.setdefault((category, reason), {"reason": reason, "tests": 0,
                                                       "files": set(), "example": name})
        group["tests"] += "test" in line
        group["files"].add(name.split("::")[0])
    result: dict[str, dict] = {}
    for (category, _), group in sorted(groups.items(), key=lambda item: (
            CATEGORIES.index(item[0][0]), -item[1]["tests"], -len(item[1]["files"]),
            item[1]["reason"])):
        entry = result.setdefault(category, {"tests": 0, "files": set(), "reasons": []})
        entry["tests"] += group["tests"]
        entry["files"] |= group["files"]
        entry["reasons"].append({**group, "files": len(group["files"])})
    return {category: {**entry, "files": len(entry["files"])}
            for category, entry in result.items()}

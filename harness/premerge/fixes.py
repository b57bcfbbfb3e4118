"""Which registered bug a failure that is gone on the head was: a fix named by its entry.

A registered reproducer that stops reproducing names its entry directly (premerge/trial).
But a reproducer made from a frontend's bug holds the module the frontend *produced* (its
TVMScript), so a fix to the frontend never reaches it; the bug's catalog cases do, since
their check runs the frontend again. So a catalog row whose failure is gone on the head
names the entries that explain that failure on that case (the entry's case globs, its
path and its verdict), and the comment says which way the fix was seen.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from harness.catalog.issue_entry import KnownIssue
from harness.premerge.trial import FIXES, GONE, Finding

BY_CASES = "its cases no longer show it (its reproducer holds the converted module, " \
    "which the change does not reach)"


def named(findings: list[Finding], entries: Iterable[KnownIssue]) -> list[Finding]:
    """The findings, with each gone catalog failure a registered entry explains turned into
    a fix of that entry (one per entry; a fix its reproducer already showed is kept)."""
    shown = {finding.entry for finding in findings if finding.kind == FIXES}
    by_entry: dict[str, Finding] = {}
    rest = []
    for finding in findings:
        entry = _explaining(finding, entries) if finding.kind == GONE else None
        if entry is None or entry.id in shown:
            rest.append(finding)
        elif entry.id not in by_entry:
            by_entry[entry.id] = Finding(FIXES, finding.row, finding.signature, finding.state,
                                         entry.id, finding.recheck, BY_CASES)
    return rest + list(by_entry.values())


def _explaining(finding: Finding, entries: Iterable[KnownIssue]) -> KnownIssue | None:
    """The entry that explains a gone catalog row's failure ("report PATH CASE LAYOUT
    TARGET"), by its cases, its path and its verdict; None for any other row."""
    parts = finding.row.split()
    if len(parts) < 3 or parts[0] != "report":
        return None
    path, case = parts[1], parts[2]
    kind = finding.signature.split(":", 1)[0]
    for entry in entries:
        if entry.verdict == kind and entry.path in ("", path) and \
                any(fnmatch.fnmatch(case, glob) for glob in entry.case):
            return entry
    return None

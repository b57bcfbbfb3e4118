"""What the registry remembers of where TVM broke: the cases its bugs showed on, by the file
at fault and by the pass.

A registered bug names the line that causes it (`at_fault`) and, for a pass's bug, the
pass; the cases it shows on are the cases most likely to show the next change there
(history-based selection, as PyTorch's target determination weighs tests that failed with
a file before). `try` adds them to what a changed file or pass selects, each with the bug
it remembers; bench/try_recall leaves the bug under test out (`excluding`).
"""
from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable

from harness.catalog.issue_entry import KnownIssue, source_line

PATHS = ("extract", "compile")


@dataclasses.dataclass(frozen=True)
class Remembered:
    entry: str           # the registry entry
    cases: tuple[str, ...]
    paths: tuple[str, ...]


@dataclasses.dataclass
class History:
    by_file: dict[str, list[Remembered]] = dataclasses.field(default_factory=dict)
    by_pass: dict[str, list[Remembered]] = dataclasses.field(default_factory=dict)


def from_registry(entries: Iterable[KnownIssue], case_ids: list[str],
                  excluding: frozenset[str] = frozenset()) -> History:
    """The catalog cases (`case_ids`) each entry's globs name, by its file at fault and its
    pass; entries in `excluding` are left out (a measurement's own bug)."""
    history = History()
    for entry in entries:
        if entry.id in excluding:
            continue
        named: set[str] = set()
        for glob in entry.case:   # one compiled pattern a glob (fnmatch.filter)
            named.update(fnmatch.filter(case_ids, glob))
        cases = tuple(case for case in case_ids if case in named)
        if not cases:
            continue
        paths = (entry.path,) if entry.path in PATHS else PATHS
        remembered = Remembered(entry.id, cases, paths)
        try:
            where = source_line(entry)
        except ValueError:
            where = None
        if where is not None and where.repo == "apache/tvm":
            history.by_file.setdefault(where.path, []).append(remembered)
        if entry.pass_name and not any(char in entry.pass_name for char in "*?["):
            history.by_pass.setdefault(entry.pass_name, []).append(remembered)
    return history

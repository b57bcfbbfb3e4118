"""What a nightly page says first: per release set how many rows are news, known or passing,
and what changed since the previous night.

A nightly that is green but for news is read at a glance only when the registered known
issues (hundreds of rows) do not look like the one new failure. News is every reading that
fails a run (`Outcome.failing`: new, stale, harness-error; a crash or timeout the registry
does not explain is `new`); a registered issue, a pass or a case that cannot be tested here
is not. Pure: cells in, counts and changes out; matrix_page draws them.
"""
from __future__ import annotations

import dataclasses

from harness.verdict import Outcome

# The readings a page shows, worst first: the summary's columns, and how rows sort when
# grouped by status (a row is as bad as its worst cell).
SUMMARY_ORDER = (Outcome.HARNESS_ERROR, Outcome.NEW, Outcome.STALE, Outcome.KNOWN,
                 Outcome.UNSUPPORTED, Outcome.PASS)
# The kinds of change between two nights, in the order the page lists them.
CHANGE_KINDS = ("newly failing", "newly passing", "newly known", "gone", "otherwise changed")


def is_news(status: str) -> bool:
    """Whether a cell's reading fails the run: what a person must look at."""
    return Outcome.of(status).failing


def counts(cells: dict, labels: list[str]) -> dict[str, dict[str, int]]:
    """{column: {status: rows}} for every column, each status of SUMMARY_ORDER present
    (0 where none), others (a sweep's own readings) as they come."""
    found = {label: {str(status): 0 for status in SUMMARY_ORDER} for label in labels}
    for (_, label), cell in cells.items():
        column = found.setdefault(label, {str(status): 0 for status in SUMMARY_ORDER})
        column[cell["status"]] = column.get(cell["status"], 0) + 1
    return found


def worst(statuses) -> str:
    """The worst of a row's readings, by SUMMARY_ORDER (one it does not list sorts last)."""
    rank = {str(status): index for index, status in enumerate(SUMMARY_ORDER)}
    return min(statuses, key=lambda status: rank.get(status, len(rank)))


@dataclasses.dataclass(frozen=True)
class Change:
    row: str
    column: str
    before: str | None   # None: the row was not on the previous night's page
    after: str | None    # None: it is not on tonight's

    @property
    def kind(self) -> str | None:
        """Which of CHANGE_KINDS, or None for a row that did not change (or appeared
        without failing: a new case's first night is not news unless it fails)."""
        if self.before == self.after:
            return None
        if self.after is None:
            return "gone"
        if is_news(self.after) and (self.before is None or not is_news(self.before)):
            return "newly failing"
        if self.before is None:
            return None
        if self.after == Outcome.PASS:
            return "newly passing"
        if self.after == Outcome.KNOWN:
            return "newly known"
        return "otherwise changed"


def changes(previous: dict[tuple[str, str], str],
            tonight: dict[tuple[str, str], str]) -> dict[str, list[Change]]:
    """{kind: [Change]} between two nights' {(row, column): status}, each list sorted."""
    found: dict[str, list[Change]] = {kind: [] for kind in CHANGE_KINDS}
    for key in sorted(set(previous) | set(tonight)):
        change = Change(key[0], key[1], previous.get(key), tonight.get(key))
        if change.kind is not None:
            found[change.kind].append(change)
    return found


def appeared(previous: dict, tonight: dict) -> int:
    """Rows tonight's page has and the previous night's had not (a new case or column)."""
    return len(set(tonight) - set(previous))

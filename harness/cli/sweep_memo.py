"""The pass sweep's memory: a pass checked once on an input is not checked on it again.

A row is a function of the pass, its input, and what the row is read against: the
registry entries in scope at the case (and, when one of them is strict, the stages the
path ran: staleness reads them) and the violations of the prefix (the stages before the
pass, shared by every pass at that point of that case). All of it is the memo's key, so
a remembered row is the row the real check gives, verdict and detail alike.

Only a row whose pass did nothing wrong is kept: its own part of the result is empty, or
the pass call refusing its input (`rejected`). A finding (a mutation, a lossy copy, two
outputs, a crash, a timeout) is checked on every input it meets: its evidence, its blame
(which module of the case was mutated) and its flakiness are the case's own. A pass with
process-wide state is never answered from memory: those the registry says have it (an
entry on the run-twice check), and any the sweep itself sees give two outputs for one
input (harness.cli.sweep_schedule then checks again what it answered for that pass).

The memo lives for one run (one shard), on one TVM build, target and --register file;
`--shard` puts the inputs that repeat, a model's layouts, in one shard (cli.sweep_units).
A run resumed with `--resume` rebuilds it from its journal (`journaled`, `restore`).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json

from harness.catalog import known_issues
from harness.result import Result
from harness.verdict import UNSETTLED, Outcome, Phase


@dataclasses.dataclass(frozen=True)
class Seen:
    """What one check (or a point's probe) says beyond its row, for the memo."""
    key: str | None        # the pass input's key (runner.sweep_input); None: not reached
    prefix: str            # digest of the prefix's violations: every pass at the point shares it
    rememberable: bool     # the pass's own part is nothing, or its refusal
    volatile: bool         # the pass gave two outputs for one input (process-wide state)
    unreachable: bool      # no pass can start: the prefix failed as TVM decided it


def seen_of(swept: str, result: Result, key: str | None) -> Seen:
    """A check of `swept`: its input, the prefix's part and the pass's own part."""
    stage = f"pass:{swept}"
    ran = {record.name for record in result.stages}
    prefix, own = _split(result, ran - {stage})
    refusal_only = all(v.kind == Outcome.ERROR and v.phase == Phase.STAGE and v.stage == stage
                       for v in own)
    reached = stage in ran and key is not None
    return Seen(key if reached else None, _digest(prefix),
                rememberable=reached and _settled(result) and refusal_only,
                volatile=any(v.phase == Phase.DETERMINISM for v in own), unreachable=False)


def probe_of(result: Result, key: str | None) -> Seen:
    """A probe: the prefix alone (every stage it ran is the prefix's)."""
    prefix, own = _split(result, {record.name for record in result.stages})
    unreachable = (key is None and _settled(result) and bool(prefix) and not own
                   and all(v.kind in (Outcome.ERROR, Outcome.UNSUPPORTED) for v in prefix))
    return Seen(key, _digest(prefix), rememberable=False, volatile=False,
                unreachable=unreachable)


def _split(result: Result, prefix_stages: set[str]) -> tuple[list, list]:
    """(the prefix's violations, the rest): a violation at the import or a stage before the
    pass is the prefix's; one at the pass, or named by no stage, is not."""
    prefix_stages = prefix_stages | {"import"}
    return ([v for v in result.violations if v.stage in prefix_stages],
            [v for v in result.violations if v.stage not in prefix_stages])


def _settled(result: Result) -> bool:
    """Ended as TVM decided: no crash, no time limit, no bug of ours (none may recur)."""
    return result.verdict not in UNSETTLED


def _digest(violations: list) -> str:
    texts = sorted(json.dumps(v.to_json(), sort_keys=True) for v in violations)
    return hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:16]


def context_of(case, point: str, versions: dict) -> str:
    """What a row of this case and point is read against, beside its violations: the
    registry entries in scope there, and the point and layout when a strict one is among
    them (a strict entry goes stale only where its stage ran)."""
    entries = known_issues.in_scope(case.id, versions, case.layout, "pass")
    where = [case.layout, point] if any(entry.strict for entry in entries) else []
    return json.dumps([sorted(entry.id for entry in entries), where])


def volatile_in_registry(versions: dict) -> list[str]:
    """Globs over pass names the registry says give two outputs for one input here."""
    globs = []
    for entry in known_issues.registry():
        if entry.phase == Phase.DETERMINISM and entry.on_stack(versions):
            named = entry.pass_name or entry.stage.removeprefix("pass:")
            globs.append(named or "*")
    return globs


@dataclasses.dataclass(frozen=True)
class Origin:
    case: str
    layout: str
    point: str


class Memo:
    """(pass, input key, context, prefix) -> the row of the check that first saw it."""

    def __init__(self, volatile_globs: list[str] = ()):
        self.volatile_globs = list(volatile_globs)
        self.volatile: set[str] = set()
        self._rows: dict[tuple, tuple[dict, Origin]] = {}

    def is_volatile(self, swept: str) -> bool:
        return swept in self.volatile or any(
            fnmatch.fnmatch(swept, glob) for glob in self.volatile_globs)

    def lookup(self, swept: str, key: tuple) -> tuple[dict, Origin] | None:
        if self.is_volatile(swept):
            return None
        return self._rows.get((swept, *key))

    def store(self, swept: str, key: tuple, row: dict, origin: Origin) -> None:
        if not self.is_volatile(swept):
            self._rows.setdefault((swept, *key), (row, origin))

    def forget(self, swept: str) -> None:
        """`swept` gave two outputs for one input: nothing of it is answered again."""
        self.volatile.add(swept)
        for memo_key in [k for k in self._rows if k[0] == swept]:
            del self._rows[memo_key]


def journaled(row: dict, seen: Seen) -> dict:
    """The row as the journal keeps it: with what the memo needs to be rebuilt from it when
    the run is resumed (`restore`), for a row the memo kept or a pass it forgot."""
    if not (seen.rememberable or seen.volatile):
        return row
    return {**row, "memo": {"prefix": seen.prefix, "rememberable": seen.rememberable,
                            "volatile": seen.volatile}}


def restore(memo: Memo, rows, cases: dict, context_of) -> int:
    """The memo as the interrupted run left it, from its journal's rows (`journaled`): a
    resumed sweep does not check again an input the first part checked. A pass that gave
    two outputs for one input is forgotten first, as the run did. How many rows came back."""
    kept = [row for row in rows if row.get("memo") and "remembered" not in row
            and row["case"] in cases and row.get("input")]
    for row in kept:
        if row["memo"]["volatile"]:
            memo.forget(row["pass"])
    restored = 0
    for row in kept:
        if row["memo"]["rememberable"] and not memo.is_volatile(row["pass"]):
            case = cases[row["case"]]
            memo.store(row["pass"], (row["input"], context_of(case, row["point"]),
                                     row["memo"]["prefix"]),
                       row, Origin(case.id, case.layout, row["point"]))
            restored += 1
    return restored


def remembered_row(row: dict, swept: str, case: str, point: str, origin: Origin) -> dict:
    """The first check's row for another (case, point): its verdict, failing, exit and
    detail as they are, saying where it was first checked; no seconds (nothing ran)."""
    # not "judged": a remembered row is answered from memory again on another night
    kept = {name: value for name, value in row.items()
            if name not in ("seconds", "remembered", "judged")}
    return {**kept, "pass": swept, "case": case, "point": point,
            "remembered": dataclasses.asdict(origin)}

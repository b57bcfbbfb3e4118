"""Which of the sweep's checks run, and which are answered from memory (cli.sweep_memo).

The checks at one point of one case form a group: they all give their pass the same
input. A probe learns it first: the prefix alone, in a child, guarded as in a check,
stopping before the pass (runner.sweep_input); it costs one prefix per point, about what
one check of a pass that changes nothing costs. Then each check of the group is answered
from memory if its pass was checked on an identical input (in any group of this run:
another case, layout or point), waits if such a check is running, else runs. So within
a run no (pass, input) is checked twice.

A point whose probe failed in the prefix as TVM decided (an error, not a crash or a
timeout, which may not happen again) is unreachable: every pass there gets the row its
check would give, read from the probe's result (the pass never starts, so the row says
nothing about it), marked as remembered from that point.

What was answered is taken back, and checked for real, when a pass turns out to give
two outputs for one input, or a group's checks disagree with its probe on the input or
the prefix's violations: the real row then replaces the remembered one.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from harness.cli.sweep_memo import Memo, Origin, Seen, remembered_row


@dataclasses.dataclass(frozen=True)
class Job:
    item: tuple                 # (pass name, Case, point)
    answer: dict | None = None  # a remembered row: nothing runs
    probe: bool = False         # the prefix of the item's point alone (the pass names no more)


@dataclasses.dataclass
class _Group:
    items: list
    context: str
    seen: Seen | None = None    # the probe's
    unstable: bool = False
    answered: list = dataclasses.field(default_factory=list)

    @property
    def memo_key(self) -> tuple:
        return (self.seen.key, self.context, self.seen.prefix)


class Schedule:
    """`start()` the first jobs; `probed(job, seen, result)` and `finished(job, row, seen)`
    after each, the jobs that can go now. With `memo` None every check runs, in order,
    as the sweep always did, and nothing is probed."""

    def __init__(self, todo: list, memo: Memo | None, context_of: Callable[[object, str], str],
                 row_of: Callable[[tuple, object], dict]):
        self.todo, self.memo, self.row_of = todo, memo, row_of
        self.groups: dict[tuple, _Group] = {}
        for item in todo:
            _, case, point = item
            group = self.groups.setdefault((case.id, point), _Group([], context_of(case, point)))
            group.items.append(item)
        self.running: dict[str, dict[tuple, tuple]] = {}   # pass -> running item -> memo key
        self.waiting: dict[tuple, list] = {}    # a running item -> the items waiting on it
        self.answered: dict[str, list] = {}     # pass -> items answered from memory
        self.remembered = 0
        self.probes = 0

    def start(self) -> list[Job]:
        if self.memo is None:
            return [Job(item) for item in self.todo]
        self.probes = len(self.groups)
        return [Job(group.items[0], probe=True) for group in self.groups.values()]

    def probed(self, job: Job, seen: Seen, result) -> list[Job]:
        _, case, point = job.item
        group = self.groups[(case.id, point)]
        group.seen = seen
        if seen.unreachable:
            origin = Origin(case.id, case.layout, point)
            return [self._answer(item, self.row_of(item, result), origin, group, of_pass=False)
                    for item in group.items]
        jobs = []
        for item in group.items:
            jobs += self._dispatch(item)
        return jobs

    def finished(self, job: Job, row: dict, seen: Seen) -> list[Job]:
        if self.memo is None or job.answer is not None:
            return []
        swept, case, point = item = job.item
        group = self.groups[(case.id, point)]
        self.running[swept].pop(item, None)
        jobs = []
        if seen.volatile and not self.memo.is_volatile(swept):
            self.memo.forget(swept)
            jobs += self._take_back(self.answered.get(swept, []))
        if seen.key is not None and not group.unstable \
                and (seen.key, seen.prefix) != (group.seen.key, group.seen.prefix):
            group.unstable = True   # its input moves between runs: answer nothing there
            jobs += self._take_back(group.answered)
        if seen.rememberable:
            self.memo.store(swept, (seen.key, group.context, seen.prefix), row,
                            Origin(case.id, case.layout, point))
        for waiter in self.waiting.pop(item, []):
            jobs += self._dispatch(waiter)
        return jobs

    def _dispatch(self, item) -> list[Job]:
        swept, case, point = item
        group = self.groups[(case.id, point)]
        if group.seen.key is None or group.unstable or self.memo.is_volatile(swept):
            return [self._run(item, ())]
        memo_key = group.memo_key
        found = self.memo.lookup(swept, memo_key)
        if found is not None:
            row, origin = found
            return [self._answer(item, row, origin, group)]
        for running, fills in self.running.get(swept, {}).items():
            if fills == memo_key:
                self.waiting.setdefault(running, []).append(item)
                return []
        return [self._run(item, memo_key)]

    def _run(self, item, fills: tuple) -> Job:
        """A real check; `fills` the memo key its row may fill (() for none)."""
        self.running.setdefault(item[0], {})[item] = fills
        return Job(item)

    def _answer(self, item, row: dict, origin: Origin, group: _Group,
                of_pass: bool = True) -> Job:
        """`of_pass` False: the row says nothing about the pass (an unreachable point), so
        nothing the pass or the group's input does later takes it back."""
        swept, case, point = item
        if of_pass:
            self.answered.setdefault(swept, []).append(item)
            group.answered.append(item)
        self.remembered += 1
        return Job(item, remembered_row(row, swept, case.id, point, origin))

    def _take_back(self, items: list) -> list[Job]:
        """Check for real what was answered from memory (its real row replaces it)."""
        taken = list(dict.fromkeys(items))
        for item in taken:
            swept, case, point = item
            group = self.groups[(case.id, point)]
            group.answered = [other for other in group.answered if other != item]
            self.answered[swept] = [other for other in self.answered.get(swept, [])
                                    if other != item]
        self.remembered -= len(taken)
        return [self._run(item, ()) for item in taken]

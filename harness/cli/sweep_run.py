"""One run of the pass sweep: what to check, each check, its row kept, the run's report.

`passes` picks the passes and cases; this runs them. The rows are one dict keyed by
(pass, case id, point) from the plan to the end: the journal's and the carried rows first,
then each check's as it is decided (a check answered from memory may be checked for real
later, which replaces its row). The batch loop (process.batch) calls `check` in its workers
and `keep` in order; the memo's schedule (cli.sweep_schedule) says which items are
answered from memory, which are probed first and which are checked.
"""
from __future__ import annotations

import json
import os
import sys
import time

from harness import shards
from harness.cli import carry, sweep_memo, sweep_schedule, sweep_units
from harness.cli.journal import Journal
from harness.cli.options import output_dir
from harness.cli.sweep_rows import make_row, markdown, row_of
from harness.options import Options
from harness.process import batch
from harness.process.isolate import run_isolated, validate
from harness.runner import sweep_input
from harness.tvmapi import loading
from harness.verdict import BadInput, Outcome, exit_code_of_rows


def row_key(row: dict) -> tuple:
    return (row["pass"], row["case"], row["point"])


def item_key(item) -> tuple:
    """A work item's row key: (pass, case id, point)."""
    name, case, point = item
    return name, case.id, point


def duration_key(key: tuple) -> str:
    """A check's key in a durations file (shards.py)."""
    return "passes:" + ":".join(key)


class SweepRun:
    """The (pass, case, point) checks of one `passes` command, from plan to report."""

    def __init__(self, args, cases: list, selected: list, on_pipeline: frozenset[str]):
        self.args = args
        runnable = [swept for swept in selected if swept.make is not None]
        work = [(swept.name, case, point) for swept in runnable for case in cases
                for point in swept.points_on(on_pipeline)
                if not args.point or point in args.point]
        cost = sweep_units.cost_of(shards.read_durations(args.durations),
                                   lambda item: duration_key(item_key(item)))
        self.work = sweep_units.select(work, cost, shards.chosen(args.shard))
        if not self.work and runnable:
            points = {point for swept in runnable for point in swept.points_on(on_pipeline)}
            raise BadInput(f"no (pass, point) to run: the selected passes run at "
                           f"{sorted(points)}, --point asks for {args.point} (TIR passes run "
                           "from legalized on; compiled: the passes tvm.compile runs)")
        if args.out:
            output_dir(args.out)
        # a row depends on the TVM stack, the target and the passes a --register file adds
        self.versions = loading.versions()
        stack = {**self.versions, "target": args.target, "register": args.register or ""}
        self.journal = (Journal(args.out, "passes", args.resume, row_key, stack, args.fresh)
                        if args.out else None)
        journaled = self.journal.done if self.journal else {}
        self.rows = {(swept.name, "*", "*"): make_row(swept.name, "*", "*", Outcome.SKIPPED,
                                                      swept.skipped)
                     for swept in selected if swept.make is None}
        self.rows.update({item_key(item): journaled[item_key(item)] for item in self.work
                          if item_key(item) in journaled})
        todo = [item for item in self.work if item_key(item) not in journaled]
        self.carried = self._carry(todo)
        self.rows.update(self.carried)
        self.todo = [item for item in todo if item_key(item) not in self.carried]
        self.already_done = len(self.work) - len(todo)
        self.memo = (None if args.no_memo else
                     sweep_memo.Memo(sweep_memo.volatile_in_registry(self.versions)))
        earlier = [*journaled.values(), *self.carried.values()]
        self.restored = (sweep_memo.restore(self.memo, earlier, {case.id: case for case in cases},
                                            self._context_of)
                         if self.memo is not None and earlier else 0)
        self.schedule = sweep_schedule.Schedule(
            self.todo, self.memo, self._context_of,
            lambda item, result: row_of(item[0], item[1].id, item[2], result))
        self.decided = 0
        self.unjournaled: dict[tuple, dict] = {}   # remembered rows: journaled at the end
        tir = sum(1 for swept in runnable if swept.tir)
        self.plan = (f"passes: {len(runnable)} passes ({tir} TIR) x {len(cases)} cases x "
                     f"their points = {len(self.work)} checks, {self.already_done} already done"
                     + (f", {len(self.carried)} carried from an earlier run with the same "
                        "inputs" if args.carry else "")
                     + (f" ({self.restored} of them back in the memo)" if self.restored else "")
                     + f"; {len(selected) - len(runnable)} passes skipped")

    def _context_of(self, case, point):
        return sweep_memo.context_of(case, point, self.versions)

    def _options_of(self, item, probe: bool = False) -> Options:
        name, case, point = item
        return Options(layout=case.layout, target=self.args.target, path="pass",
                       sweep_pass=name, sweep_point=point, sweep_register=self.args.register,
                       sweep_probe=probe)

    def run(self) -> int:
        """Check what is left, keep each row as it comes, write the report; the exit code."""
        print(self.plan, file=sys.stderr)
        started = time.monotonic()
        validate_first = ((lambda: validate(self.todo[0][1].id, self._options_of(self.todo[0])))
                          if self.todo else None)
        try:
            interrupted = batch.run(self.schedule.start(), self.check, self.args.jobs,
                                    self.keep, first=validate_first)
        finally:
            if self.journal:
                for row in self.unjournaled.values():
                    self.journal.append(row)
                self.journal.close()
        rows = list(self.rows.values())
        if interrupted:
            kept = f"; {self.journal.kept()}" if self.journal else ""
            print(f"passes: interrupted after {self.decided} of {len(self.todo)} checks{kept}",
                  file=sys.stderr)
        self._report(rows, time.monotonic() - started)
        return interrupted if interrupted else exit_code_of_rows(rows)

    def check(self, job):
        """(row, Seen) of a check; (None, (Seen, Result)) of a probe; a remembered row."""
        if job.answer is not None:
            return job.answer, None
        name, case, point = job.item
        begun = time.monotonic()
        inputs = []
        result = run_isolated(case.id, self._options_of(job.item, job.probe),
                              timeout=self.args.timeout,
                              on_event=lambda event: inputs.append(event)
                              if event["event"] == sweep_input.EVENT else None)
        key = inputs[0]["key"] if inputs else None
        if job.probe:
            return None, (sweep_memo.probe_of(result, key), result)
        seen = sweep_memo.seen_of(name, result, key)
        facts = inputs[0].get("facts") if inputs else None
        row = {**row_of(name, case.id, point, result, facts, self.args.target),
               "seconds": round(time.monotonic() - begun, 2), "judged": carry.judged(result),
               "input_facts": facts}
        return (sweep_memo.journaled({**row, "input": seen.key}, seen) if seen.key
                else row), seen

    def keep(self, job, outcome):
        """A decided job's row kept (journaled, unless memory may still take it back)."""
        row, seen = outcome
        if job.probe:
            return self.schedule.probed(job, *seen)
        key = item_key(job.item)
        checked_after_answer = key in self.rows   # remembered first, now checked for real
        self.decided += not checked_after_answer
        self.rows[key] = row
        if job.answer is not None:
            self.unjournaled[key] = row
        elif self.journal:
            self.unjournaled.pop(key, None)
            self.journal.append(row)
        if row["failing"] or self.decided % 50 == 0 or self.decided == len(self.todo):
            print(f"[{self.decided}/{len(self.todo)}] {row['pass']} on {row['case']} @ "
                  f"{row['point']}: {row['verdict']}", file=sys.stderr, flush=True)
        return self.schedule.finished(job, row, seen)

    def _carry(self, todo: list) -> dict[tuple, dict]:
        """The rows of `todo` an earlier run (--carry DIR) made from the same inputs
        (harness.cli.carry), read again against today's registry and journaled."""
        if not self.args.carry:
            return {}
        earlier = carry.earlier(self.args, "passes", self.journal.stack, row_key)
        carried = {}
        for item in todo:
            found = earlier.get(item_key(item))
            if found is None or "judged" not in found[0] or not carry.case_carries(item[1]):
                continue
            row, folder = found
            swept, case, point = item
            judged_today = row_of(swept, case.id, point,
                                  carry.result_of(row["judged"], case.id),
                                  row.get("input_facts"), self.args.target)
            carried[item_key(item)] = {**row, **judged_today, "carried": folder}
            self.journal.append(carried[item_key(item)])
        return carried

    def _report(self, rows: list[dict], seconds: float) -> None:
        args = self.args
        if args.store_durations:
            shards.write_durations(args.store_durations, {
                duration_key(row_key(row)): row.get("seconds", 0.0) for row in rows
                if "seconds" in row or "remembered" in row})
        if args.out:
            with open(os.path.join(args.out, "passes.json"), "w") as handle:
                json.dump({"rows": rows, "seconds": round(seconds, 1)}, handle, indent=1)
            with open(os.path.join(args.out, "passes.md"), "w") as handle:
                handle.write(markdown(rows, with_matrix=True))
        if args.json:
            print(json.dumps({"rows": rows}, indent=1))
        else:
            print(markdown(rows))
        checked = self.decided - self.schedule.remembered
        print(f"passes: {checked} checks in {seconds:.0f} s "
              f"({checked / seconds if seconds else 0:.1f}/s), {self.schedule.remembered} more "
              f"answered from memory ({self.schedule.probes} points probed)", file=sys.stderr)

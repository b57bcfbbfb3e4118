"""`python -m harness passes`: every registered pass on catalog modules.

By default every relax pass and the TIR passes `tvm.compile` runs (see
harness.tvmapi.passes); `--pass GLOB` picks any registered one by name.

Each (pass, case, point) is one check on the `pass` path: the extract path up to the
point (imported, legalized, fused), or `tvm.compile` up to the pass (compiled), then the
pass alone. Through the one runner: the pass's input is not mutated (per-pass guard, hash,
its JSON text at the end), its output round-trips with every copier, and a second run on
the same input and a run on a deepcopy of the input give the same module. Each check runs
isolated (a crash is a row, not the end); what its row says is cli.sweep_rows'.

A pass already checked on an identical input (another case, layout or point) is not
checked again: its row is answered from memory and says where it was checked
(cli.sweep_memo, cli.sweep_schedule); `--shard` takes (model, pass group) units, so a
model's layouts meet in one shard and a heavy model is spread (cli.sweep_units).
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys
import time

from harness import shards
from harness.catalog import cases as catalog
from harness.cli import batch, carry, sweep_memo, sweep_schedule, sweep_units
from harness.cli.journal import Journal
from harness.cli.options import (
    add_carry_options,
    add_journal_options,
    add_shard_options,
    output_dir,
    positive_float,
    positive_int,
)
from harness.cli.sweep_rows import make_row, markdown, row_of
from harness.options import Options
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated, validate
from harness.runner import sweep_input
from harness.tvmapi import loading
from harness.tvmapi import passes as registry
from harness.tvmapi.inject import load_module
from harness.verdict import (
    EXIT_CANNOT_TEST,
    EXIT_PASS,
    EXIT_VIOLATED,
    BadInput,
    Outcome,
    exit_code_of_rows,
)


def select(globs: list[str] | None, target: str = "llvm") -> list[registry.RegisteredPass]:
    """The passes `--pass GLOB...` names, or the default selection."""
    if not globs:
        return registry.default_selection(target)
    selected = [p for p in registry.registered()
                if any(fnmatch.fnmatch(p.name, glob) for glob in globs)]
    if not selected:
        raise BadInput(f"no registered pass matches {globs} (relax passes by short name, "
                       "e.g. 'Fold*'; TIR passes by TVM's name, e.g. 'tirx.*', 's_tir.Lower*')")
    return selected


def listing(selected, target: str = "llvm") -> list[dict]:
    on_pipeline = registry.pipeline_pass_names(target)
    return [{"pass": p.name, "family": "tir" if p.tir else "relax",
             "points": list(p.points_on(on_pipeline)),
             "on_compile_pipeline": p.on(on_pipeline), "skipped": p.skipped}
            for p in selected]


def _compile_pipeline(globs: list[str] | None, target: str) -> frozenset[str]:
    """The passes tvm.compile runs (their `compiled` point). The default selection has
    recorded them already; passes named by --pass run at the other points when that
    compile fails (--pass GLOB is the way out of it)."""
    try:
        return registry.pipeline_pass_names(target)
    except registry.PipelineUnknown:
        if not globs:
            raise
        return frozenset()


def cmd_passes(args) -> int:
    try:
        return _sweep(args)
    except registry.PipelineUnknown as exc:   # TVM failing: a violation, not our bug
        print(f"passes: {exc}", file=sys.stderr)
        return EXIT_VIOLATED
    except loading.TVMUnavailable as exc:      # the parent lists passes: it needs TVM
        print(f"passes: cannot test here: {exc}", file=sys.stderr)
        return EXIT_CANNOT_TEST


def _sweep(args) -> int:
    cases = [] if args.list else catalog.select_for_run(args.cases)
    if not any(case.needs_torch for case in cases):   # the parent imports TVM to list passes
        loading.torch_not_needed()
    loading.tvm()   # the harness's import, before a --register file's own `import tvm`
    if args.register:
        load_module(args.register, flag="--register")   # passes registered under test names
    selected = select(args.pass_, args.target)
    if args.list:
        entries = listing(selected, args.target)
        if args.json:
            print(json.dumps({"passes": entries}, indent=1))
        else:
            for entry in entries:
                print(f"{entry['pass']:45} {entry['family']:5} {','.join(entry['points']):34} "
                      f"{entry['skipped'] or 'runs'}")
        return EXIT_PASS
    if (args.resume or args.fresh or args.carry) and not args.out:
        raise BadInput("--resume, --fresh and --carry are about the rows journal of --out DIR: "
                       "give --out")
    runnable = [p for p in selected if p.make is not None]
    on_pipeline = _compile_pipeline(args.pass_, args.target)
    work = [(p.name, case, point) for p in runnable for case in cases
            for point in p.points_on(on_pipeline) if not args.point or point in args.point]
    durations = shards.read_durations(args.durations)
    cost = sweep_units.cost_of(durations, lambda item: _duration_key(_name(item)))
    work = sweep_units.select(work, cost, shards.chosen(args.shard))
    if not work and runnable:
        points = {point for p in runnable for point in p.points_on(on_pipeline)}
        raise BadInput(f"no (pass, point) to run: the selected passes run at {sorted(points)}, "
                       f"--point asks for {args.point} (TIR passes run from legalized on; "
                       "compiled: the passes tvm.compile runs)")
    if args.out:
        output_dir(args.out)
    # a row depends on the TVM stack, the target and the passes a --register file adds
    versions = loading.versions()
    stack = {**versions, "target": args.target, "register": args.register or ""}
    journal = Journal(args.out, "passes", args.resume, row_key, stack, args.fresh) \
        if args.out else None
    done = journal.done if journal else {}
    rows = {(p.name, "*", "*"): make_row(p.name, "*", "*", Outcome.SKIPPED, p.skipped)
            for p in selected if p.make is None}
    rows.update({_name(item): done[_name(item)] for item in work if _name(item) in done})
    todo = [item for item in work if _name(item) not in done]
    carried = _carry(args, journal, todo)
    rows.update(carried)
    todo = [item for item in todo if _name(item) not in carried]
    memo = None if args.no_memo else sweep_memo.Memo(sweep_memo.volatile_in_registry(versions))
    context_of = lambda case, point: sweep_memo.context_of(case, point, versions)  # noqa: E731
    earlier = [*done.values(), *carried.values()]
    restored = sweep_memo.restore(memo, earlier, {case.id: case for case in cases},
                                  context_of) if memo is not None and earlier else 0
    schedule = sweep_schedule.Schedule(
        todo, memo, context_of,
        lambda item, result: row_of(item[0], item[1].id, item[2], result))
    tir = sum(1 for p in runnable if p.tir)
    print(f"passes: {len(runnable)} passes ({tir} TIR) x {len(cases)} cases x "
          f"their points = {len(work)} checks, {len(work) - len(todo) - len(carried)} "
          "already done"
          + (f", {len(carried)} carried from an earlier run with the same inputs"
             if args.carry else "")
          + (f" ({restored} of them back in the memo)" if restored else "")
          + f"; {len(selected) - len(runnable)} passes skipped", file=sys.stderr)
    started = time.monotonic()
    decided = 0

    def options_of(item, probe: bool = False) -> Options:
        name, case, point = item
        return Options(layout=case.layout, target=args.target, path="pass",
                       sweep_pass=name, sweep_point=point, sweep_register=args.register,
                       sweep_probe=probe)

    def one(job):
        """(row, Seen) of a check; (None, (Seen, Result)) of a probe; a remembered row."""
        if job.answer is not None:
            return job.answer, None
        name, case, point = job.item
        begun = time.monotonic()
        inputs = []
        result = run_isolated(case.id, options_of(job.item, job.probe), timeout=args.timeout,
                              on_event=lambda event: inputs.append(event)
                              if event["event"] == sweep_input.EVENT else None)
        key = inputs[0]["key"] if inputs else None
        if job.probe:
            return None, (sweep_memo.probe_of(result, key), result)
        seen = sweep_memo.seen_of(name, result, key)
        facts = inputs[0].get("facts") if inputs else None
        row = {**row_of(name, case.id, point, result, facts, args.target),
               "seconds": round(time.monotonic() - begun, 2), "judged": carry.judged(result),
               "input_facts": facts}
        return (sweep_memo.journaled({**row, "input": seen.key}, seen) if seen.key
                else row), seen

    def keep(job, outcome):
        nonlocal decided
        row, seen = outcome
        if job.probe:
            return schedule.probed(job, *seen)
        again = _name(job.item) in rows   # checked for real after it was answered
        decided += not again
        rows[_name(job.item)] = row
        if job.answer is not None:   # journaled at the end: memory may take it back
            unjournaled[_name(job.item)] = row
        elif journal:
            unjournaled.pop(_name(job.item), None)
            journal.append(row)
        if row["failing"] or decided % 50 == 0 or decided == len(todo):
            print(f"[{decided}/{len(todo)}] {row['pass']} on {row['case']} @ "
                  f"{row['point']}: {row['verdict']}", file=sys.stderr, flush=True)
        return schedule.finished(job, row, seen)

    first = (lambda: validate(todo[0][1].id, options_of(todo[0]))) if todo else None
    unjournaled: dict[tuple, dict] = {}   # remembered rows, one journal line each at the end
    try:
        interrupted = batch.run(schedule.start(), one, args.jobs, keep, first=first)
    finally:
        if journal:
            for row in unjournaled.values():
                journal.append(row)
            journal.close()
    rows = list(rows.values())
    checked = decided - schedule.remembered
    if interrupted:
        kept = f"; {journal.kept()}" if journal else ""
        print(f"passes: interrupted after {decided} of {len(todo)} checks{kept}",
              file=sys.stderr)
    seconds = time.monotonic() - started
    if args.store_durations:
        shards.write_durations(args.store_durations, {
            _duration_key(row_key(row)): row.get("seconds", 0.0) for row in rows
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
    print(f"passes: {checked} checks in {seconds:.0f} s "
          f"({checked / seconds if seconds else 0:.1f}/s), {schedule.remembered} more "
          f"answered from memory ({schedule.probes} points probed)", file=sys.stderr)
    return interrupted if interrupted else exit_code_of_rows(rows)


def row_key(row: dict) -> tuple:
    return (row["pass"], row["case"], row["point"])


def _carry(args, journal, todo: list) -> dict[tuple, dict]:
    """The rows of `todo` an earlier run (--carry DIR) made from the same inputs
    (harness.cli.carry), read again against today's registry and journaled."""
    if not args.carry:
        return {}
    earlier = carry.earlier(args, "passes", journal.stack, row_key)
    carried = {}
    for item in todo:
        found = earlier.get(_name(item))
        if found is None or "judged" not in found[0] or not carry.case_carries(item[1]):
            continue
        row, folder = found
        swept, case, point = item
        again = row_of(swept, case.id, point, carry.result_of(row["judged"], case.id),
                       row.get("input_facts"), args.target)
        carried[_name(item)] = {**row, **again, "carried": folder}
        journal.append(carried[_name(item)])
    return carried


def _name(item) -> tuple:
    """A work item's row key: (pass, case id, point)."""
    name, case, point = item
    return name, case.id, point


def _duration_key(key: tuple) -> str:
    """A check's key in a durations file (shards.py)."""
    return "passes:" + ":".join(key)


def register(sub) -> None:
    p = sub.add_parser("passes", help="sweep every registered pass over catalog modules")
    p.add_argument("cases", nargs="*", help="case ids or globs (default: the default catalog)")
    p.add_argument("--pass", dest="pass_", action="append", metavar="GLOB",
                   help="only passes whose name matches (repeatable), e.g. 'Fold*', "
                        "'tirx.*' (default: every relax pass and the TIR passes compile runs)")
    p.add_argument("--point", action="append", choices=registry.POINTS,
                   help="where each pass runs: a point of the extract path (TIR passes "
                        "from legalized on), or compiled, the input tvm.compile hands the "
                        "passes it runs (default: every point of each pass)")
    p.add_argument("--register", metavar="FILE.py",
                   help="import this file first (in the parent and every child): it may "
                        "register more passes (relax.transform or TIR)")
    p.add_argument("--list", action="store_true",
                   help="list the selected passes (family, points, why skipped) and stop")
    p.add_argument("--json", action="store_true", help='print {"rows": [...]}')
    p.add_argument("--out", default=None,
                   help="also write passes.md (with the pass x case x point matrix), "
                        "passes.json and the rows journal here")
    add_journal_options(p, "passes-rows.jsonl", "this TVM, target and --register file")
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1)
    add_carry_options(p, "passes-rows.jsonl",
                      "the TVM stack, target, --register file and the catalog")
    p.add_argument("--no-memo", action="store_true",
                   help="check every (pass, case, point), even a pass on an input it was "
                        "already checked on (by default that row is remembered)")
    add_shard_options(p, "(model, pass group) units of checks")
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT)
    p.set_defaults(func=cmd_passes)

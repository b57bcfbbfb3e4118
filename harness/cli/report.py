"""`python -m harness report`: run the catalog and write Markdown and JSON tables.

Each finished case is appended to `report-rows.jsonl` at once, so an interrupted run
keeps what it finished and `--resume` picks up from there (rows are keyed by
case x layout x path x target on the same TVM stack). A folder that already holds
rows is refused unless the run says --resume or --fresh. Exit 0 when no row fails
(every non-pass row is a registered known issue or cannot be tested here), 1 on
anything new or on a registered issue that no longer happens (stale: the registry
must be updated), 4 on a harness error anywhere.
"""
from __future__ import annotations

import json
import os
import sys
import time

from harness import shards
from harness.catalog import cases as catalog
from harness.catalog import known_issues, torch_cases
from harness.cli import carry
from harness.cli.journal import Journal
from harness.cli.options import (
    add_carry_options,
    add_journal_options,
    add_shard_options,
    output_dir,
    positive_float,
    positive_int,
)
from harness.options import LAYOUTS, OUTCOME_UNITS, PATH_NAMES, Options
from harness.process import batch
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated, validate
from harness.result import Result
from harness.signature import Signature
from harness.tvmapi import loading
from harness.verdict import exit_code_of_rows


def row_of(case: catalog.Case, result: Result, wall: float) -> dict:
    return {"case": case.id, "tags": list(case.tags), "layout": result.options.get("layout"),
            "path": result.options.get("path", "extract"), "target": result.options.get("target"),
            "verdict": str(result.verdict), **_reading(result),
            "outcome_count": result.outcome_count,
            "wall_seconds": round(wall, 2), "stages": {s.name: s.seconds for s in result.stages},
            "violations": [v.one_line() for v in result.violations],
            "signatures": [Signature.of(v).text() for v in result.violations],
            "answers": [{"comparison": record.comparison, "status": record.status,
                         "sensitive": record.sensitive, "max_abs_error": record.max_abs_error,
                         "max_rel_error": record.max_rel_error, "headroom": record.headroom,
                         "detail": record.detail[:300]}
                        for record in result.answers],
            "tvm_version": result.tvm_version, "tvm_ffi_version": result.tvm_ffi_version,
            # the frontend converters the import looked up: `reach --from report.json`
            "converters": ({"frontend": result.converters.frontend,
                            "used": result.converters.used}
                           if result.converters and result.converters.measurable else None),
            # the passes the path ran on it (the guard's records): `try --exercised`
            "passes": sorted({record.name for record in result.passes}),
            "judged": carry.judged(result)}


def _reading(result: Result) -> dict:
    """What the registry says of the result: the fields a carried row gets anew."""
    judgement = known_issues.judge(result)
    status = judgement.status   # a member of the outcome table: failing, exit
    return {"status": str(status), "failing": status.failing, "exit": status.exit,
            "known": judgement.lines(), "stale": judgement.stale_lines()}


def carried_row(row: dict, folder: str) -> dict:
    """An earlier night's row, read again against today's registry."""
    return {**row, **_reading(carry.result_of(row["judged"], row["case"])), "carried": folder}


def row_key(row: dict) -> tuple:
    return (row["case"], row.get("layout"), row.get("path", "extract"), row.get("target"))


def markdown(rows: list[dict]) -> str:
    stage_names = []
    for row in rows:
        stage_names += [s for s in row["stages"] if s not in stage_names]
    head = ["case", "layout", "path", "target", "verdict", "status", "outcome", "wall s",
            *stage_names, "tvm", "tvm-ffi"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in sorted(rows, key=row_key):
        cells = [row["case"], str(row.get("layout")), row.get("path", "extract"),
                 str(row.get("target")), row["verdict"], row.get("status", ""),
                 str(row["outcome_count"]), f"{row['wall_seconds']:.1f}"]
        cells += [f"{row['stages'][s]:.2f}" if s in row["stages"] else "" for s in stage_names]
        cells += [str(row["tvm_version"]), str(row["tvm_ffi_version"])]
        lines.append("| " + " | ".join(cells) + " |")
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    problems = [f"- **{r['case']}** ({r.get('layout')}, {r.get('path', 'extract')}, "
                f"{r['status']}): {v}" for r in rows for v in r["violations"]]
    problems += [f"- **{r['case']}**: {line}" for r in rows for line in r.get("stale", [])]
    return "\n".join([f"# Extraction invariants: {len(rows)} rows ({summary})", "", *lines,
                      "", "## Violations", "", *(problems or ["none"]), "",
                      *pytorch_routes(rows)])


def pytorch_routes(rows: list[dict]) -> list[str]:
    """The PyTorch door's models next to their twins by PyTorch's other routes (ONNX,
    torch.fx, torch.compile): a failure only some routes show is marked."""
    by_key = {row_key(row): row for row in rows}
    routes = [tag for _, tag in torch_cases.TWINS.values()]
    lines = []
    for key, row in sorted(by_key.items()):
        twins = torch_cases.twins_of(row["case"])
        others = [by_key.get((twins[tag], *key[1:])) for tag in routes] if twins else []
        if not any(others):
            continue
        present = [row] + [other for other in others if other is not None]
        mark = "same" if len({frozenset(r.get("signatures", [])) for r in present}) == 1 \
            else "**differs**"
        cells = " | ".join(_door_cell(other) if other else "-" for other in [row] + others)
        lines.append(f"| {row['case']} | {row.get('layout')} | {row.get('path', 'extract')} | "
                     f"{cells} | {mark} |")
    if not lines:
        return []
    return ["## PyTorch's routes, one model", "",
            "The same model through TVM's PyTorch frontend (torch.export), through "
            "torch.onnx.export and the ONNX frontend, through torch.fx and through "
            "torch.compile's relax_dynamo import; `differs`: the routes do not fail alike "
            "(signatures).", "",
            "| model | layout | path | torch.export | ONNX | torch.fx | torch.compile | "
            "failures |", "|---" * 8 + "|", *lines, ""]


def _door_cell(row: dict) -> str:
    signatures = "; ".join(row.get("signatures", [])) or "-"
    return f"{row['verdict']} ({row['status']}, {row['outcome_count']}): {signatures}"


def write_tables(rows: list[dict], out_dir: str) -> None:
    with open(os.path.join(out_dir, "report.json"), "w") as handle:
        json.dump({"rows": rows}, handle, indent=1)
    with open(os.path.join(out_dir, "report.md"), "w") as handle:
        handle.write(markdown(rows))


def plan(args) -> list[tuple[catalog.Case, Options]]:
    """Every (case, options) this run covers; pure, and bad input is refused here."""
    cases = catalog.select_for_run(args.pattern, everything=args.all)
    return [(case, Options(layout=args.layout or case.layout, target=args.target,
                           path=args.path)) for case in cases]


def _key(case: catalog.Case, options: Options) -> tuple:
    return (case.id, options.layout, options.path, options.target)


def _duration_key(key: tuple) -> str:
    """A row's key in a durations file (shards.py)."""
    return "report:" + ":".join(str(part) for part in key)


def _carry(args, journal: Journal, todo: list) -> list[dict]:
    """The rows of `todo` an earlier run (--carry DIR) made from the same inputs
    (harness.cli.carry), read again against today's registry and journaled (the journal is
    closed with the run's own rows)."""
    if not args.carry:
        return []
    earlier = carry.earlier(args, "report", journal.stack, row_key)
    carried = [carried_row(*earlier[_key(case, options)]) for case, options in todo
               if carry.case_carries(case) and _key(case, options) in earlier
               and "judged" in earlier[_key(case, options)][0]]
    for row in carried:
        journal.append(row)
    return carried


def _this_shard(args, items: list) -> list:
    """This shard's rows: a model's rows whole in one shard (Case.model_group), so its
    export and its import's copies are made once there. A group weighs its cases' recorded
    seconds on every path (an unrecorded case the median one): the extract and compile
    runs of one night put a model in the same shard."""
    per_case: dict[str, float] = {}
    for key, seconds in shards.read_durations(args.durations).items():
        if key.startswith("report:"):
            case_id = key.removeprefix("report:").rsplit(":", 3)[0]
            per_case[case_id] = per_case.get(case_id, 0.0) + seconds
    unrecorded = shards.unrecorded_cost(list(per_case.values()))
    cases_of: dict[str, set[str]] = {}
    for case, _ in items:
        cases_of.setdefault(case.model_group, set()).add(case.id)
    return shards.select_groups(
        items, lambda item: item[0].model_group, shards.chosen(args.shard),
        lambda group: sum(per_case.get(case_id, unrecorded) for case_id in cases_of[group]))


def cmd_report(args) -> int:
    work = _this_shard(args, plan(args))
    output_dir(args.out)
    journal = Journal(args.out, "report", args.resume, row_key, loading.versions(), args.fresh)
    selected = {_key(case, options) for case, options in work}
    rows = [row for key, row in journal.done.items() if key in selected]
    todo = [(case, options) for case, options in work if _key(case, options) not in journal.done]
    carried = _carry(args, journal, todo)
    rows += carried
    taken = {row_key(row) for row in carried}
    todo = [item for item in todo if _key(*item) not in taken]
    print(f"report: {len(work)} rows to decide, {len(rows) - len(carried)} already done, "
          + (f"{len(carried)} carried from an earlier run with the same inputs, "
             if args.carry else "")
          + f"{len(todo)} to run, {args.jobs} at a time", file=sys.stderr)
    started = time.monotonic()

    def check_one(item):
        case, options = item
        begun = time.monotonic()
        result = run_isolated(case.id, options, timeout=args.timeout)
        return row_of(case, result, time.monotonic() - begun)

    def keep(item, row):
        journal.append(row)
        rows.append(row)
        print(f"[{len(rows)}/{len(work)}] {row['case']}: {row['verdict']} ({row['status']}, "
              f"{row['outcome_count']} {OUTCOME_UNITS.get(row['path'], 'signatures')}, "
              f"{row['wall_seconds']:.1f} s)", file=sys.stderr, flush=True)

    first = (lambda: validate(todo[0][0].id, todo[0][1])) if todo else None
    with journal:
        interrupted = batch.run(todo, check_one, args.jobs, keep, first=first)
    write_tables(rows, args.out)
    if args.store_durations:
        shards.write_durations(args.store_durations,
                               {_duration_key(row_key(row)): row["wall_seconds"] for row in rows})
    if interrupted:
        print(f"report: interrupted; {len(rows)} of {len(work)} rows decided, "
              f"{journal.kept()}", file=sys.stderr)
        return interrupted
    print(f"report: {len(rows)} rows in {time.monotonic() - started:.0f} s -> "
          f"{os.path.join(args.out, 'report.md')}", file=sys.stderr)
    for row in rows:
        if row["failing"]:
            print(f"report: {row['status']}: {row['case']} ({row.get('layout')}, "
                  f"{row.get('path')}): {row['verdict']}", file=sys.stderr)
    return exit_code_of_rows(rows)


def register(sub) -> None:
    p = sub.add_parser("report", help="run the catalog, write report.md and report.json")
    p.add_argument("pattern", nargs="*", help="glob over case ids and tags (default: all)")
    p.add_argument("--out", default="reports", help="output folder (default ./reports)")
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                   help="cases checked at once (default: one per core)")
    p.add_argument("--all", action="store_true", help="include cases tagged slow or nightly")
    add_journal_options(p, "report-rows.jsonl", "this TVM")
    add_carry_options(p, "report-rows.jsonl", "the TVM stack and the catalog")
    add_shard_options(p, "case x layout x path rows")
    p.add_argument("--layout", choices=sorted(LAYOUTS), default=None)
    p.add_argument("--path", choices=PATH_NAMES, default="extract",
                   help="the path every case runs (see `check --help`)")
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT)
    p.set_defaults(func=cmd_report)

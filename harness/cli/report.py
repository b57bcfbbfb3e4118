"""`python -m harness report`: run the catalog and write Markdown and JSON tables.

Each finished case is appended to `report-rows.jsonl` at once, so an interrupted run
keeps what it finished and `--resume` picks up from there (rows are keyed by
case x layout x path x target on the same TVM stack). Exit 0 when every
non-pass row is a registered known issue, 1 on anything new or on a registered
issue that no longer happens (stale: the registry must be updated).
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import time

from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.cli.journal import Journal
from harness.tvmapi import compat
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated
from harness.tvmapi.pipelines import PATH_NAMES, Options
from harness.verdict import (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_PASS, EXIT_VIOLATED,
                             Result)


def row_of(case: catalog.Case, result: Result, wall: float) -> dict:
    judgement = known_issues.judge(result)
    return {"case": case.id, "tags": list(case.tags), "layout": result.options.get("layout"),
            "path": result.options.get("path", "extract"), "target": result.options.get("target"),
            "verdict": result.verdict, "status": judgement.status, "tasks": result.tasks,
            "wall_seconds": round(wall, 2), "stages": {s.name: s.seconds for s in result.stages},
            "violations": [v.one_line() for v in result.violations],
            "known": judgement.lines(),
            "tvm_version": result.tvm_version, "tvm_ffi_version": result.tvm_ffi_version}


def row_key(row: dict) -> tuple:
    return (row["case"], row.get("layout"), row.get("path", "extract"), row.get("target"))


def exit_code_of(rows: list[dict]) -> int:
    """0 when nothing is new or stale; a harness error anywhere wins (exit 4)."""
    statuses = {row.get("status", row["verdict"]) for row in rows}
    if "harness-error" in statuses:
        return EXIT_INTERNAL
    return EXIT_VIOLATED if statuses & {"new", "stale"} else EXIT_PASS


def markdown(rows: list[dict]) -> str:
    stage_names = []
    for row in rows:
        stage_names += [s for s in row["stages"] if s not in stage_names]
    head = ["case", "path", "verdict", "status", "tasks", "wall s", *stage_names, "tvm",
            "tvm-ffi"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in sorted(rows, key=row_key):
        cells = [row["case"], row.get("path", "extract"), row["verdict"],
                 row.get("status", ""), str(row["tasks"]), f"{row['wall_seconds']:.1f}"]
        cells += [f"{row['stages'][s]:.2f}" if s in row["stages"] else "" for s in stage_names]
        cells += [str(row["tvm_version"]), str(row["tvm_ffi_version"])]
        lines.append("| " + " | ".join(cells) + " |")
    counts = {}
    for row in rows:
        status = row.get("status", row["verdict"])
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    problems = [f"- **{r['case']}** ({r.get('path', 'extract')}, {r.get('status', '')}): {v}"
                for r in rows for v in r["violations"]]
    problems += [f"- **{r['case']}**: {line}" for r in rows for line in r.get("known", [])
                 if line.startswith("stale")]
    return "\n".join([f"# Extraction invariants: {len(rows)} cases ({summary})", "", *lines,
                      "", "## Violations", "", *(problems or ["none"]), ""])


def write_tables(rows: list[dict], out_dir: str) -> None:
    with open(os.path.join(out_dir, "report.json"), "w") as handle:
        json.dump({"rows": rows}, handle, indent=1)
    with open(os.path.join(out_dir, "report.md"), "w") as handle:
        handle.write(markdown(rows))


def cmd_report(args) -> int:
    # bad input first: opening a fresh journal replaces the old one
    cases = catalog.select_for_run(args.pattern, everything=args.all)
    journal = Journal(args.out, "report", args.resume, row_key, compat.versions())
    done = journal.done

    def options_of(case) -> Options:
        return Options(layout=args.layout or case.layout, target=args.target, path=args.path)

    def key_of(case) -> tuple:
        options = options_of(case)
        return (case.id, options.layout, options.path, options.target)

    todo = [c for c in cases if key_of(c) not in done]
    print(f"report: {len(cases)} cases, {len(done)} already done, {args.jobs} at a time",
          file=sys.stderr)
    rows = list(done.values())
    started = time.monotonic()

    def one(case):
        t0 = time.monotonic()
        return (case, run_isolated(case.id, options_of(case), timeout=args.timeout),
                time.monotonic() - t0)

    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool, journal:
            for index, future in enumerate(
                    concurrent.futures.as_completed([pool.submit(one, c) for c in todo]), 1):
                case, result, wall = future.result()
                row = row_of(case, result, wall)
                journal.append(row)
                rows.append(row)
                print(f"[{index}/{len(todo)}] {case.id}: {result.verdict} ({row['status']}, "
                      f"{result.tasks} tasks, {wall:.1f} s)", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"report: interrupted; {len(rows)} rows kept in {journal.path} "
              "(--resume continues)",
              file=sys.stderr)
        write_tables(rows, args.out)
        return EXIT_INTERRUPTED
    write_tables(rows, args.out)
    print(f"report: {len(rows)} rows in {time.monotonic() - started:.0f} s -> "
          f"{os.path.join(args.out, 'report.md')}", file=sys.stderr)
    for row in rows:
        if row.get("status") in ("new", "stale", "harness-error"):
            print(f"report: {row['status']}: {row['case']} ({row.get('path')}): {row['verdict']}",
                  file=sys.stderr)
    return exit_code_of(rows)


def register(sub) -> None:
    p = sub.add_parser("report", help="run the catalog, write report.md and report.json")
    p.add_argument("pattern", nargs="*", help="glob over case ids and tags (default: all)")
    p.add_argument("--out", default="reports", help="output folder (default ./reports)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="cases checked at once (default: one per core)")
    p.add_argument("--all", action="store_true", help="include cases tagged slow or nightly")
    p.add_argument("--resume", action="store_true",
                   help="keep rows already in OUT/report-rows.jsonl for this TVM and run the rest")
    p.add_argument("--layout", choices=["nchw", "nhwc"], default=None)
    p.add_argument("--path", choices=PATH_NAMES, default="extract",
                   help="the path every case runs (see `check --help`)")
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    p.set_defaults(func=cmd_report)

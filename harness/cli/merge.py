"""`python -m harness merge DIR... --out OUT`: shards and release sets joined into one page.

Each DIR is the --out of a `report`, `passes` or `guard-suite` run (a shard of it, on
one release set). Their rows journals are read as written, never re-run: OUT gets
report.md / report.json (rows of every set, each with its `set`), matrix.html (cases x
release sets, the page `matrix` writes), passes.md and guard-suite/summary.*, and the
exit code is computed on the merged rows. Refused (exit 2), before anything is written:
rows of two harness versions or row formats, and the same row in two folders
(overlapping shards, or one folder given twice). With --previous (the previous night's
report.json or matrix.html) the page also says what changed since.
"""
from __future__ import annotations

import json
import os
import sys

from harness.cli import report as report_cli
from harness.cli import sweep_rows, sweep_run
from harness.cli.journal import read_rows
from harness.cli.options import output_dir
from harness.pages import matrix_page, page_cells, page_news
from harness.suite import summary
from harness.verdict import BadInput, Outcome, exit_code_of_rows

COMMANDS = {"report": report_cli.row_key, "passes": sweep_run.row_key}
# The fields the merged page reads, per command: a row without them was written by a
# harness older than its row format says (refused, never a crash of the merge).
NEEDED = {"report": ("case", "verdict", "status", "failing", "exit", "outcome_count",
                     "wall_seconds", "violations"),
          "passes": ("pass", "case", "point", "verdict", "failing", "exit")}


def read(folders: list[str]) -> dict[str, list[tuple[str, dict]]]:
    """{command: [(set label, row)]} of every folder; refuses what must not be joined."""
    found: dict[str, list[tuple[tuple[str, str], dict]]] = {command: [] for command in COMMANDS}
    seen: dict[tuple, str] = {}
    harness_of: dict[tuple, str] = {}
    for folder in folders:
        if not os.path.isdir(folder):
            raise BadInput(f"{folder} is not a folder: give the --out folders of the runs")
        lines = 0
        for command, key in COMMANDS.items():
            for line in read_rows(os.path.join(folder, f"{command}-rows.jsonl")):
                lines += 1
                stack = line["stack"]
                version = (stack.get("harness"), stack.get("row_format"))
                harness_of.setdefault(version, folder)
                if len(harness_of) > 1:
                    (first, where), (second, there) = list(harness_of.items())[:2]
                    raise BadInput(f"rows of two harness versions (harness, row format): "
                                   f"{first} in {where}, {second} in {there}; run them again "
                                   "with one harness")
                missing = [field for field in NEEDED[command] if field not in line["row"]]
                if missing:
                    raise BadInput(f"a {command} row in {folder} has no {', '.join(missing)}: "
                                   "it was written by another harness version; run it again")
                label, named = page_cells.set_label(stack), line.get("set") or ""
                identity = (command, named, label, json.dumps(stack, sort_keys=True),
                            key(line["row"]))
                if identity in seen:
                    raise BadInput(f"{command} row {key(line['row'])} on {label} is in both "
                                   f"{seen[identity]} and {folder}: overlapping shards")
                seen[identity] = folder
                found[command].append(((label, named), line["row"]))
        if not lines and not summary.read([os.path.join(folder, "files")]):
            raise BadInput(f"{folder} holds no rows of report, passes or guard-suite")
    return _columns(found)


def _columns(found: dict) -> dict[str, list[tuple[str, dict]]]:
    """A release set's column is its TVM stack; where two named sets (the nightly's
    HARNESS_RELEASE_SET) resolved the same stack, as `newest` does when the newest
    packages are a pinned set's, each is a column of its own, named after it: they were
    installed apart (the pinned set with torch, the newest without), so neither's rows
    may hide the other's, and the same rows twice are no overlapping shards."""
    sets_of: dict[str, set[str]] = {}
    for entries in found.values():
        for (label, named), _ in entries:
            sets_of.setdefault(label, set()).add(named)
    return {command: [(f"{label} ({named})" if named and len(sets_of[label]) > 1 else label,
                       row) for (label, named), row in entries]
            for command, entries in found.items()}


def write(found: dict, folders: list[str], out: str, previous: dict | None = None) -> int:
    """The merged outputs; the exit code of the merged rows. `previous`: the previous
    night's {(row, column): status}, for the page's changes."""
    report_rows = [{**row, "set": label} for label, row in found["report"]]
    labels = sorted({row["set"] for row in report_rows})
    with open(os.path.join(out, "report.json"), "w") as handle:
        json.dump({"rows": report_rows, "sets": labels, "from": folders}, handle, indent=1)
    sections = [report_cli.markdown([row for row in report_rows if row["set"] == label])
                .replace("# Extraction invariants", f"# {label}:", 1) for label in labels]
    with open(os.path.join(out, "report.md"), "w") as handle:
        handle.write("\n".join(sections) or "no report rows\n")
    names = sorted({page_cells.row_name(row) for row in report_rows})
    cells = {(page_cells.row_name(row), row["set"]): page_cells.cell_of_row(row)
             for row in report_rows}
    with open(os.path.join(out, "matrix.html"), "w") as handle:
        handle.write(matrix_page.render(names, labels, cells, previous=previous,
                                        title=f"merged from {len(folders)} folders"))
    pass_rows = [row for _, row in found["passes"]]
    if pass_rows:
        with open(os.path.join(out, "passes.md"), "w") as handle:
            handle.write(sweep_rows.markdown(pass_rows, with_matrix=True))
    decided = report_rows + pass_rows
    records = summary.read([os.path.join(folder, "files") for folder in folders])
    if records:
        merged = summary.summarize(records)
        os.makedirs(os.path.join(out, "guard-suite"), exist_ok=True)
        summary.write(merged, os.path.join(out, "guard-suite"))
        status = Outcome.of(merged["status"])   # the guarded suite's reading: one more row
        decided.append({"failing": status.failing, "exit": status.exit})
    code = exit_code_of_rows(decided)
    print(f"merge: {len(report_rows)} report rows on {len(labels)} release sets "
          f"({_by_status(cells, labels)}), {len(pass_rows)} pass-sweep rows, {len(records)} "
          f"guarded tests -> {out}", file=sys.stderr)
    return code


def _by_status(cells: dict, labels: list[str]) -> str:
    """The page's summary in one line: rows by reading over every release set. (`pass
    rows` once stood here for the pass sweep's rows, and read as passing rows: 0 of them
    on a page full of passes.)"""
    total: dict[str, int] = {}
    for column in page_news.counts(cells, labels).values():
        for status, number in column.items():
            total[status] = total.get(status, 0) + number
    return ", ".join(f"{number} {status}" for status, number in total.items() if number) \
        or "none"


def cmd_merge(args) -> int:
    found = read(args.folders)
    previous = page_cells.read_previous(args.previous) if args.previous else None
    output_dir(args.out)
    return write(found, args.folders, args.out, previous)


def register(sub) -> None:
    p = sub.add_parser("merge", help="join the --out folders of shards and release sets")
    p.add_argument("folders", nargs="+", metavar="DIR", help="--out folders of report, passes "
                                                              "or guard-suite runs")
    p.add_argument("--out", default="merged", help="output folder (default ./merged)")
    p.add_argument("--previous", default=None, metavar="FILE",
                   help="the previous night's merged report.json (or its matrix.html, or a "
                        "matrix.json): the page then lists the rows newly failing, newly "
                        "passing, newly known and gone")
    p.set_defaults(func=cmd_merge)

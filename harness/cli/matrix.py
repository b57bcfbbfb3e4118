"""`python -m harness matrix`: cases x version sets in one table, from cached environments.

Writes matrix.md and matrix.html (one static page) to --out; exits like
`report`: 0 when every non-pass cell is a registered known issue. With
--cross-release, a column per adjacent pair of sets ("A -> B json"): each case's module
and tuning log saved in A's environment and read in B's (versions.cross_release).
With more than one --target (`--targets cuda,metal,opencl,webgpu`), a row per case and
target ("CASE [TARGET]"): the targets that compile without a device, side by side.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import sys

from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.cli.options import output_dir, positive_float, positive_int
from harness.options import PATH_NAMES, Options
from harness.pages import matrix_page, page_cells
from harness.process import batch
from harness.process.commands import reproduce_command
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated, validate
from harness.verdict import BadInput, Outcome, exit_code_of_rows
from harness.versions import cross_release, envs


def parse_set(text: str) -> dict[str, str]:
    return envs.parse_requirements([p for p in text.replace(",", " ").split() if p])


def cmd_matrix(args) -> int:
    sets = [parse_set(s) for s in args.set]
    if not sets:
        raise BadInput("give at least one --set 'apache-tvm==V,apache-tvm-ffi==V'")
    if args.cross_release and len(sets) < 2:
        raise BadInput("--cross-release needs at least two --set: it saves in each set and "
                       "loads in the next")
    cases = catalog.select_for_run(args.pattern, everything=True)
    targets = target_list(args.target)
    output_dir(args.out)
    labels = [" ".join(f"{n.removeprefix('apache-')}=={v}" for n, v in sorted(s.items()))
              for s in sets]
    cells: dict = {}
    pythons = []
    for packages in sets:   # every set built and the options validated before any check
        path = envs.ensure(packages, log=lambda t: print(t, file=sys.stderr, flush=True),
                           extra=envs.packages_for(cases))
        envs.touch(path)
        pythons.append(envs.python_of(path))
        for target in targets:   # a target TVM refuses: exit 2 before any check
            validate(cases[0].id, Options(layout=cases[0].layout, path=args.path,
                                          target=target), python=pythons[-1])
    # A row per case and target: (row name, case, target)
    rows = [(row_name(case.id, target, targets), case, target)
            for case in cases for target in targets]
    # (column, row, python, the python of the release that loads: a cross-release pair)
    work = [(label, row, python, None) for label, python in zip(labels, pythons, strict=True)
            for row in rows]
    pairs = _pairs(args, labels, pythons)
    work += [(label, row, saves, loads) for label, (saves, loads) in pairs for row in rows]

    def check_one(item):
        label, (_, case, target), python, loads = item
        facts = {"target": target, "layout": case.layout,
                 "family": page_cells.family_of(case.tags)}   # what the page filters by
        if loads is not None:
            options = Options(layout=case.layout, path="extract", target=target)
            result = cross_release.run_pair(case.id, options, python, loads,
                                            timeout=args.timeout)
            return {**cell_of(result, _pair_command(args, case, target, label, labels)),
                    **facts}
        options = Options(layout=case.layout, path=args.path, target=target)
        result = run_isolated(case.id, options, timeout=args.timeout, python=python)
        return {**cell_of(result, reproduce_command(case.id, options)), **facts}

    def keep(item, cell):
        label, (name, _, _), _, _ = item
        cells[name, label] = cell
        print(f"[{label}] {name}: {cell['verdict']} ({cell['status']})", file=sys.stderr,
              flush=True)

    interrupted = batch.run(work, check_one, args.jobs, keep)
    _write(args, [name for name, _, _ in rows], labels, cells, [label for label, _ in pairs])
    if interrupted:
        print(f"matrix: interrupted; the {len(cells)} cells decided are in {args.out}",
              file=sys.stderr)
        return interrupted
    return exit_code_of_rows(cells.values())


# A comma list of plain kinds ("cuda,metal"); a target with options is one --target each.
_KINDS = re.compile(r"^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)+$")


def target_list(given: list[str] | None) -> list[str]:
    """The targets of --target / --targets, in order, each once (default: llvm). A value
    that is a comma list of kinds is split; any other value (options, JSON) is one target."""
    targets: list[str] = []
    for value in given or ["llvm"]:
        for target in value.split(",") if _KINDS.match(value.strip()) else [value]:
            if target.strip() and target.strip() not in targets:
                targets.append(target.strip())
    return targets


def row_name(case_id: str, target: str, targets: list[str]) -> str:
    """A row's name: the case, with its target when the matrix has more than one."""
    return case_id if len(targets) == 1 else f"{case_id} [{target}]"


def _pairs(args, labels: list[str], pythons: list[str]) -> list[tuple[str, tuple]]:
    """(column label, (A's python, B's python)) for each adjacent pair of sets."""
    if not args.cross_release:
        return []
    return [(pair_label(labels[i], labels[i + 1]), (pythons[i], pythons[i + 1]))
            for i in range(len(labels) - 1)]


def pair_label(saved_in: str, loaded_in: str) -> str:
    return f"{saved_in} -> {loaded_in} json"


def _pair_command(args, case, target: str, label: str, labels: list[str]) -> str:
    """The matrix run of just this case and pair: what re-runs a cross-release cell."""
    first = next(i for i in range(len(labels) - 1)
                 if pair_label(labels[i], labels[i + 1]) == label)
    words = ["python", "-m", "harness", "matrix", case.id, "--set", args.set[first],
             "--set", args.set[first + 1], "--cross-release"]
    if target != "llvm":
        words += ["--target", target]
    return shlex.join(words)


def _write(args, case_ids: list[str], labels, cells, pairs: list[str] = ()) -> None:
    """matrix.md (also printed), matrix.json and matrix.html; a cell not decided is blank.
    `case_ids` are the rows' names (a case, with its target when there are several)."""
    columns = list(labels) + list(pairs)
    table = markdown(case_ids, columns, cells)
    print(table)
    with open(os.path.join(args.out, "matrix.md"), "w") as handle:
        handle.write(table + "\n")
    with open(os.path.join(args.out, "matrix.json"), "w") as handle:
        json.dump({"cases": case_ids, "sets": labels, "cross_release": list(pairs),
                   "path": args.path, "targets": target_list(args.target),
                   "cells": [{"case": case_id, "set": label, **cell}
                             for (case_id, label), cell in cells.items()]},
                  handle, indent=1)
    page = os.path.join(args.out, "matrix.html")
    with open(page, "w") as handle:
        handle.write(matrix_page.render(case_ids, columns, cells, title=f"path {args.path}"))
    print(f"matrix: {page}", file=sys.stderr)


def cell_of(result, command: str) -> dict:
    """What one cell shows: verdict, known-issue status, size, time, the first violation."""
    judgement = known_issues.judge(result)
    status = judgement.status   # a member of the outcome table: failing, exit
    first = result.violations[0] if result.violations else None
    return {"verdict": str(result.verdict), "status": str(status), "failing": status.failing,
            "exit": status.exit, "outcome_count": result.outcome_count,
            "seconds": round(sum(stage.seconds for stage in result.stages), 2),
            "stage": first.stage if first else "", "pass": (first.pass_name or "") if first else "",
            "detail": first.one_line() if first else "", "known": judgement.lines(),
            "path": result.options.get("path", "extract"),
            "reproduce": command if result.verdict != Outcome.PASS else ""}


def markdown(case_ids: list[str], labels: list[str], cells: dict) -> str:
    def text(cell):
        marked = (Outcome.KNOWN, Outcome.STALE, Outcome.NEW)
        mark = f" ({cell['status']})" if cell["status"] in marked else ""
        return f"{cell['verdict']}{mark}"
    lines = ["| case | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    lines += [f"| {case} | " + " | ".join(text(cells[case, label]) if (case, label) in cells
                                         else "" for label in labels) + " |"
              for case in case_ids]
    return "\n".join(lines)


def register(sub) -> None:
    p = sub.add_parser("matrix", help="cases x version sets, one table")
    p.add_argument("pattern", nargs="+", help="case ids or globs")
    p.add_argument("--set", action="append", default=[], metavar="PKG==V,PKG==V",
                   help="one column: a version set (repeatable)")
    p.add_argument("--path", choices=PATH_NAMES, default="extract")
    p.add_argument("--target", "--targets", action="append", default=None, metavar="T",
                   help="a row per case and target (repeatable; a comma list of kinds, "
                        "e.g. cuda,metal,opencl,webgpu; default llvm)")
    p.add_argument("--out", default="reports", help="folder for matrix.md/.json/.html")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT)
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="cells checked at once (default 1: sets are whole TVM installs)")
    p.add_argument("--cross-release", action="store_true",
                   help="also a column per adjacent pair of sets, in the order given: each "
                        "case's module saved with save_json and its tasks' tuning log "
                        "written in one set, loaded in the next and compared with that set's "
                        "own import and tasks (extract path, whatever --path says). Costs "
                        "about one more check per case and pair")
    p.set_defaults(func=cmd_matrix)

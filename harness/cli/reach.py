"""`python -m harness reach`: which of each TVM frontend's converters the catalog exercises.

Each selected case's model goes through its door's import alone, in a child (crash
isolation, as every check), with the frontend's converter map noted; the rows are kept in
the cache per TVM stack and frameworks, one line each as it is decided, so an interrupted
run loses nothing and a second run measures only what is new. `--from REPORT.json` adds
the converters a report's checks recorded instead of measuring again.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

from harness import jsonl, paths
from harness.catalog import cases as catalog
from harness.catalog import onnx_node
from harness.cli.options import positive_int
from harness.options import Options
from harness.process import batch, isolate
from harness.process.work import Work
from harness.reach import reach_map
from harness.tvmapi import loading
from harness.verdict import EXIT_CANNOT_TEST, EXIT_PASS, BadInput

FORMAT = 1   # bump when what a row holds changes
_STACK = ("apache-tvm", "apache-tvm-ffi", "onnx", "torch", "tensorflow-cpu", "jax")


def _stack() -> dict[str, str | None]:
    return {dist: paths.package_version(dist) for dist in _STACK}


def _stack_file(kind: str, suffix: str) -> str:
    """The measured rows (or totals) of this TVM stack and these frameworks (what decides a
    case's converters and the frontends' maps), in the harness cache."""
    key = json.dumps([FORMAT, _stack(), loading.versions()], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return os.path.join(paths.cache_dir(), "reach", f"{kind}-{digest}.{suffix}")


def _totals() -> dict:
    """reach.totals in a child with torch visible (the PyTorch frontend's maps need it),
    remembered per stack: the maps are the installed packages' (5 s of imports)."""
    path = _stack_file("totals", "json")
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    env = dict(os.environ)
    env.pop(loading.WITHOUT_TORCH, None)
    proc = subprocess.run([sys.executable, "-m", "harness.reach.totals"], capture_output=True,
                          text=True, env=env)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise loading.TVMUnavailable(f"reading the frontends' converters failed: {tail[0]}")
    paths.write_shared(path, proc.stdout)
    return json.loads(proc.stdout)


def _row_of(case, result) -> dict:
    converters = result.converters
    failure = next((violation for violation in result.violations), None)
    return {"case": case.id, "frontend": converters.frontend if converters else "",
            "used": converters.used if converters else [],
            "verdict": str(result.verdict), "detail": failure.detail if failure else ""}


def rows_of_report(path: str, flag: str = "--from") -> list[dict]:
    """A report's rows that recorded their converters; a missing or foreign file is bad
    input naming `flag`."""
    if not os.path.isfile(path):
        raise BadInput(f"{flag} {path}: no such file (a report.json `python -m harness "
                       "report --out DIR` wrote)")
    try:
        with open(path) as handle:
            rows = json.load(handle)["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{flag} {path}: not a report.json of `python -m harness report` "
                       f"({type(exc).__name__}: {exc})") from None
    measured = [row for row in rows if row.get("converters")]
    if not measured:
        raise BadInput(f"{flag} {path}: its rows record no converters (a report written "
                       "before the reach map; run `python -m harness reach` instead)")
    return [{"case": row["case"], **row["converters"], **_import_of(row)} for row in measured]


def _import_of(row: dict) -> dict:
    """A report row's import alone: its verdict there and the failure ("pass" when the
    import went through, whatever the path found after it)."""
    for signature, line in zip(row.get("signatures", []), row.get("violations", []),
                               strict=False):
        kind, _, rest = signature.partition(":")
        if rest.split(":", 1)[0] == "import":
            return {"verdict": kind, "detail": line}
    return {"verdict": "pass", "detail": ""}


def cmd_reach(args) -> int:
    cases = catalog.select_for_run(args.pattern, everything=args.all)
    reported = [row for path in args.from_report or () for row in rows_of_report(path)]
    try:   # bad input (a pattern, a --from file) is refused above, before this work
        totals = _totals()
    except loading.TVMUnavailable as exc:
        print(f"harness: cannot test: {exc}", file=sys.stderr)
        return EXIT_CANNOT_TEST
    if reported and not args.pattern:   # the report's cases alone
        rows = reported
    else:   # the named cases, measured where the reports do not hold them
        held = {row["case"] for row in reported}
        measured, interrupted = _measure([case for case in cases if case.id not in held], args)
        if interrupted is not None:
            return interrupted
        rows = reported + measured
    node_tests = onnx_node.operators_by_case()
    found = reach_map.build(rows, totals, node_tests)
    if args.json:
        selection = args.pattern or (["--all"] if args.all else ["(the default selection)"])
        print(json.dumps({"frontends": {name: reach.to_json() for name, reach in found.items()},
                          "selection": selection, "versions": loading.versions()}, indent=1))
    else:
        print(reach_map.text(found))
    return EXIT_PASS


def recorded_rows() -> list[dict]:
    """Every import-only row this stack measured so far (`try` selects cases by them)."""
    return jsonl.read(_stack_file("rows", "jsonl"))


def measure(cases: list, jobs: int, timeout: float = 120.0) -> tuple[list[dict], int | None]:
    """Measure the cases' converters the cache lacks (as `reach CASES` does)."""
    import argparse
    return _measure(cases, argparse.Namespace(fresh=False, jobs=jobs, timeout=timeout))


def _rememberable(case) -> bool:
    """A built-in case whose model the stack's versions decide; a file may change."""
    return case.base == catalog.CASES_DIR and case.file is None


def _measure(cases: list, args) -> tuple[list[dict], int | None]:
    """(each case's import-only row, the exit code of an interruption or None): from the
    cache where this stack measured it, else a child each (`--jobs` at once), appended to
    the cache the moment it is decided."""
    path = _stack_file("rows", "jsonl")
    kept = {} if args.fresh else {row["case"]: row for row in jsonl.read(path)}
    todo = [case for case in cases if case.id not in kept or not _rememberable(case)]
    if todo:
        print(f"reach: measuring {len(todo)} case(s) ({len(cases) - len(todo)} from the "
              f"cache of this stack)", file=sys.stderr, flush=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    done = [0]

    def check_one(case):
        return isolate.run_isolated(case.id, Options(layout=case.layout), timeout=args.timeout,
                                    work=Work.import_only())

    def keep(case, result) -> None:
        row = _row_of(case, result)
        kept[case.id] = row
        if _rememberable(case):
            with open(path, "a") as handle:
                handle.write(json.dumps(row) + "\n")
        done[0] += 1
        if done[0] % 100 == 0 or done[0] == len(todo):
            print(f"reach: {done[0]} of {len(todo)} measured", file=sys.stderr, flush=True)

    interrupted = batch.run(todo, check_one, args.jobs, keep)
    if interrupted is not None:
        print(f"reach: interrupted; {done[0]} of {len(todo)} measured and kept (the same "
              "command measures the rest)", file=sys.stderr)
    return [kept[case.id] for case in cases if case.id in kept], interrupted


def register(sub) -> None:
    p = sub.add_parser("reach", help="which converters of each TVM frontend the catalog "
                                     "exercises, measured, and why the others are not")
    p.add_argument("pattern", nargs="*", help="glob over case ids and tags (default: the "
                                              "default selection; --all: every case)")
    p.add_argument("--all", action="store_true", help="every case, nightly and slow included")
    p.add_argument("--from", dest="from_report", action="append", metavar="REPORT_JSON",
                   help="the converters a report's checks recorded (repeatable), instead "
                        "of measuring them; with patterns, the cases they name that no "
                        "report holds are measured")
    p.add_argument("--json", action="store_true",
                   help='{"frontends": {"onnx": {"converters": N, "exercised": [...], '
                        '"unexercised": {NAME: reason}, ...}, "torch": ..., ...}}')
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                   help="imports at once (default: one per core)")
    p.add_argument("--fresh", action="store_true", help="measure again, ignoring the cache")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per import")
    p.set_defaults(func=cmd_reach)

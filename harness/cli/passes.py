"""`python -m harness passes`: every registered relax pass on catalog modules.

Each (pass, case, point) is one check on the `pass` path: the extract path up to
the point (imported, legalized, fused), then the pass alone. Through the one
runner: the pass's input is not mutated (per-pass guard, JSON at the end), its
input and output round-trip with every copier, a second run on the same input
and a run on a fresh copy give the same module. Each check runs isolated (a
crash is a row, not the end). A pass refusing an input it was not made for is
`rejected`; a point the case cannot reach is `skipped`; neither fails the sweep.
"""
from __future__ import annotations

import concurrent.futures
import fnmatch
import json
import os
import sys
import time

from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated
from harness.tvmapi import passes as registry
from harness.tvmapi.inject import load_module
from harness.tvmapi.pipelines import Options
from harness.verdict import EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATED, BadInput, Result

FAILING = ("mutated", "lossy-roundtrip", "nondeterministic", "crash", "timeout", "stale",
           "harness-error")


def row_of(swept: str, case: str, point: str, result: Result) -> dict:
    """One matrix cell: what happened to this pass on this module."""
    stage = f"pass:{swept}"
    judgement = known_issues.judge(result)
    if judgement.status in ("pass", "known", "unsupported"):
        verdict = {"unsupported": "skipped"}.get(judgement.status, judgement.status)
        detail = "; ".join(judgement.lines()) or (
            result.violations[0].detail if result.violations else "")
        return _row(swept, case, point, verdict, detail)
    if judgement.status == "stale":     # nothing new, but a registered issue is gone
        return _row(swept, case, point, "stale", "; ".join(judgement.lines()))
    first = judgement.unknown[0] if judgement.unknown else result.violations[0]
    if first.kind == "error" and first.path == "(determinism)":
        verdict = "nondeterministic"
    elif first.kind == "error" and first.stage == stage:
        verdict = "rejected"            # the pass refused this input: its precondition
    elif first.kind == "error":
        verdict = "skipped"             # the point itself cannot be reached on this case
    else:
        verdict = first.kind
    return _row(swept, case, point, verdict, first.one_line())


def _row(swept, case, point, verdict, detail) -> dict:
    return {"pass": swept, "case": case, "point": point, "verdict": verdict,
            "detail": detail[:400]}


def markdown(rows: list[dict]) -> str:
    verdicts = sorted({row["verdict"] for row in rows})
    by_pass: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = by_pass.setdefault(row["pass"], {})
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    lines = ["| pass | " + " | ".join(verdicts) + " |", "|---|" + "---|" * len(verdicts)]
    lines += [f"| {name} | " + " | ".join(str(counts.get(v, "")) for v in verdicts) + " |"
              for name, counts in sorted(by_pass.items())]
    findings = [f"- **{r['pass']}** on {r['case']} @ {r['point']}: {r['verdict']}: {r['detail']}"
                for r in rows if r["verdict"] in FAILING]
    skipped = sorted({f"- {r['pass']}: {r['detail']}" for r in rows
                      if r["verdict"] == "skipped" and r["case"] == "*"})
    return "\n".join([f"# Pass sweep: {len(rows)} (pass, case, point) rows", "", *lines, "",
                      "## Findings", "", *(findings or ["none"]), "",
                      "## Passes not run", "", *(skipped or ["none"]), ""])


def cmd_passes(args) -> int:
    if args.register:
        load_module(args.register, flag="--register")   # passes registered under test names
    selected = [p for p in registry.registered()
                if not args.pass_ or any(fnmatch.fnmatch(p.name, g) for g in args.pass_)]
    if not selected:
        raise BadInput(f"no registered relax.transform pass matches {args.pass_}")
    cases = catalog.select_for_run(args.cases)
    points = args.point or list(registry.POINTS)
    rows = [_row(p.name, "*", "*", "skipped", p.skipped) for p in selected if p.make is None]
    work = [(p.name, case, point) for p in selected if p.make is not None
            for case in cases for point in points]
    print(f"passes: {len(selected) - len(rows)} passes x {len(cases)} cases x {len(points)} "
          f"points = {len(work)} checks ({len(rows)} passes skipped)", file=sys.stderr)
    started = time.monotonic()

    def one(item):
        name, case, point = item
        options = Options(layout=case.layout, target=args.target, path="pass",
                          sweep_pass=name, sweep_point=point, sweep_register=args.register)
        return row_of(name, case.id, point, run_isolated(case.id, options, timeout=args.timeout))

    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for index, row in enumerate(pool.map(one, work), 1):
                rows.append(row)
                if row["verdict"] in FAILING or index % 50 == 0 or index == len(work):
                    print(f"[{index}/{len(work)}] {row['pass']} on {row['case']} @ "
                          f"{row['point']}: {row['verdict']}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"passes: interrupted after {len(rows)} rows; they are written", file=sys.stderr)
    seconds = time.monotonic() - started
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "passes.json"), "w") as handle:
            json.dump({"rows": rows, "seconds": round(seconds, 1)}, handle, indent=1)
        with open(os.path.join(args.out, "passes.md"), "w") as handle:
            handle.write(markdown(rows))
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
    else:
        print(markdown(rows))
    print(f"passes: {len(work)} checks in {seconds:.0f} s "
          f"({len(work) / seconds if seconds else 0:.1f}/s)", file=sys.stderr)
    verdicts = {row["verdict"] for row in rows}
    if "harness-error" in verdicts:
        return EXIT_INTERNAL
    return EXIT_VIOLATED if verdicts & set(FAILING) else EXIT_PASS


def register(sub) -> None:
    p = sub.add_parser("passes", help="sweep every registered relax pass over catalog modules")
    p.add_argument("cases", nargs="*", help="case ids or globs (default: the default catalog)")
    p.add_argument("--pass", dest="pass_", action="append", metavar="GLOB",
                   help="only passes whose name matches (repeatable), e.g. 'Fold*'")
    p.add_argument("--point", action="append", choices=registry.POINTS,
                   help="where on the extract path each pass runs (default: all three)")
    p.add_argument("--register", metavar="FILE.py",
                   help="import this file first (in the parent and every child): it may "
                        "register more passes under relax.transform")
    p.add_argument("--json", action="store_true", help='print {"rows": [...]}')
    p.add_argument("--out", default=None, help="also write passes.md and passes.json here")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--target", default="llvm")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    p.set_defaults(func=cmd_passes)

"""The pass sweep's rows: what one (pass, case, point) check says, and the report of them.

A row's verdict is decided from the check's first unregistered violation and its typed
phase: a prefix failing is `skipped` (the point cannot be reached), the pass call refusing
its input `rejected` only by a rule (cli.sweep_refusals), TVM failing after the pass a
finding; whether it fails the sweep, and its exit, come from the outcome table.
"""
from __future__ import annotations

from harness.catalog import known_issues
from harness.cli import sweep_refusals
from harness.result import Result
from harness.tvmapi import passes as registry
from harness.verdict import ROW_VERDICTS, Outcome, Phase, UnknownVerdict

# The row verdicts that fail the sweep: the outcome table says which (verdict.Outcome).
FAILING = tuple(verdict for verdict in ROW_VERDICTS if verdict.failing)
# Where a violation on the way to the swept pass means the point was not reached.
_PREFIX_PHASES = (Phase.STAGE, Phase.CHECKS, Phase.PROCESS)


def row_of(swept: str, case: str, point: str, result: Result,
           input_facts: list[str] | None = None, target: str = "llvm") -> dict:
    """One matrix cell: what happened to this pass on this module. `input_facts`: the TIR
    facts of the pass's input (runner.sweep_input), which a refusal is read against."""
    stage = f"pass:{swept}"
    judgement = known_issues.judge(result)
    status = judgement.status
    if status == Outcome.HARNESS_ERROR:
        bug = next(v for v in result.violations if v.kind == Outcome.HARNESS_ERROR)
        return make_row(swept, case, point, Outcome.HARNESS_ERROR, bug.one_line())
    if status in (Outcome.PASS, Outcome.KNOWN, Outcome.UNSUPPORTED):
        verdict = Outcome.SKIPPED if status == Outcome.UNSUPPORTED else status
        detail = "; ".join(judgement.lines()) or (
            result.violations[0].detail if result.violations else "")
        return make_row(swept, case, point, verdict, detail)
    if status == Outcome.STALE:     # nothing new, but a registered issue is gone
        return make_row(swept, case, point, Outcome.STALE, "; ".join(judgement.lines()))
    first = judgement.unknown[0]
    if first.phase == Phase.DETERMINISM:
        verdict = Outcome.NONDETERMINISTIC
    elif first.stage != stage and first.phase in _PREFIX_PHASES:
        # the prefix failed (the case's own `check` reports it): this point cannot be
        # reached on this case, and nothing is said about the swept pass
        verdict = Outcome.SKIPPED
    elif first.kind == Outcome.ERROR and first.phase == Phase.STAGE:
        # the pass call itself refused this input: a precondition by rule, else a finding
        rule = sweep_refusals.precondition(registry.lookup(swept), point, target, input_facts)
        if rule is not None:
            return make_row(swept, case, point, Outcome.REJECTED,
                            f"precondition ({rule}): {first.one_line()}")
        verdict = Outcome.ERROR
    else:
        verdict = first.kind    # after the pass (checks, copies) TVM failing is a finding
    return make_row(swept, case, point, verdict, first.one_line())


def make_row(swept, case, point, verdict, detail) -> dict:
    """A row whose `failing` and `exit` are its verdict's, from the outcome table."""
    outcome = Outcome.of(verdict)
    if outcome not in ROW_VERDICTS:
        raise UnknownVerdict(f"{outcome!r} is not a pass sweep row's verdict")
    return {"pass": swept, "case": case, "point": point, "verdict": str(outcome),
            "failing": outcome.failing, "exit": outcome.exit, "detail": detail[:400]}


def matrix(rows: list[dict]) -> list[str]:
    """The pass x case x point matrix: one table per case, a row per pass, a column per
    point, the verdict in each cell."""
    lines = ["## Matrix", ""]
    cases = sorted({row["case"] for row in rows if row["case"] != "*"})
    for case in cases:
        cells = {(row["pass"], row["point"]): row["verdict"] for row in rows
                 if row["case"] == case}
        points = [p for p in registry.POINTS if any(point == p for _, point in cells)]
        lines += [f"### {case}", "", "| pass | " + " | ".join(points) + " |",
                  "|---|" + "---|" * len(points)]
        lines += [f"| {name} | " + " | ".join(cells.get((name, p), "") for p in points) + " |"
                  for name in sorted({name for name, _ in cells})]
        lines.append("")
    return lines


def markdown(rows: list[dict], with_matrix: bool = False) -> str:
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
                      if r["verdict"] == Outcome.SKIPPED and r["case"] == "*"})
    remembered = sum(1 for row in rows if "remembered" in row)
    memory = [f"{remembered} rows answered from memory: the pass was checked on an identical "
              "input in another case, layout or point (`remembered` says where)", ""] \
        if remembered else []
    return "\n".join([f"# Pass sweep: {len(rows)} (pass, case, point) rows", "", *memory,
                      *lines, "",
                      "## Findings", "", *(findings or ["none"]), "",
                      "## Passes not run", "", *(skipped or ["none"]), "",
                      *(matrix(rows) if with_matrix else [])])



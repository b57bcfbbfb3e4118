"""The reach map: each frontend's converters, those the measured cases exercised, and for
every other one why not, from the corpus itself.

Rows are what an import-only check of each case recorded (its converters, its verdict);
totals are every converter the frontend has (reach.totals). A reason names what the corpus
lacks, most specific first: the framework's tests that use the operator fail to import
before its converter runs; they exist but were not measured (not in this selection); the
framework cannot produce it (torch.export's decomposition); no test uses it at all.
"""
from __future__ import annotations

import collections
import dataclasses

# The converter maps by the names people use (the reach command's JSON keys).
PUBLIC_NAMES = {"onnx": "onnx", "exported_program": "torch", "fx": "torch-fx",
                "tflite": "tflite", "stablehlo": "stablehlo"}
_NO_CASE = {"exported_program": "no case's exported program calls it",
            "fx": "no case's FX graph calls it",
            "tflite": "no case's TFLite model uses it",
            "stablehlo": "no case's StableHLO program uses it"}
_OUTSIDE_THE_MAP = {("stablehlo", "func.return"), ("stablehlo", "stablehlo.return")}


@dataclasses.dataclass
class FrontendReach:
    frontend: str                      # the converter map (frontend_reach.FRONTENDS)
    converters: list[str]
    exercised: dict[str, int]          # converter -> how many cases looked it up
    unexercised: dict[str, str]        # converter -> why no case did
    cases: int                         # cases measured through this map
    refused: dict[str, int]            # the frontend's refusals (first line) -> cases
    failed: dict[str, int]             # other import errors (first line) -> cases
    missing: str = ""                  # why the map could not be read here ("" it could)

    def to_json(self) -> dict:
        return {"converters": len(self.converters), "exercised": sorted(self.exercised),
                "unexercised": dict(sorted(self.unexercised.items())), "cases": self.cases,
                "uses": dict(sorted(self.exercised.items())),
                "refused": dict(self.refused), "failed": dict(self.failed),
                **({"missing": self.missing} if self.missing else {})}


def build(rows: list[dict], totals: dict, node_tests: dict[str, list[str]]) -> dict:
    """{public name: FrontendReach}. `rows`: one per measured case ({case, frontend, used,
    verdict, detail}); `totals`: reach.totals' answer; `node_tests`: {case id: operators}
    of the ONNX node tests in the whole catalog (their operators, read without importing)."""
    by_frontend: dict[str, list[dict]] = collections.defaultdict(list)
    for row in rows:
        if row.get("frontend"):
            by_frontend[row["frontend"]].append(row)
    found = {}
    for frontend, public in PUBLIC_NAMES.items():
        known = totals.get(frontend, {"converters": [], "notes": {}, "missing": "not read"})
        measured = by_frontend.get(frontend, [])
        exercised = collections.Counter(name for row in measured for name in row["used"])
        reasons = _Reasons(frontend, known.get("notes", {}), measured, node_tests)
        unexercised = {name: reasons.of(name) for name in known["converters"]
                       if name not in exercised}
        found[public] = FrontendReach(
            frontend, known["converters"], dict(exercised), unexercised, len(measured),
            _first_lines(row for row in measured if row["verdict"] == "unsupported"),
            _first_lines(row for row in measured if row["verdict"] not in ("pass",
                                                                           "unsupported")),
            known.get("missing", ""))
    return found


def _first_lines(rows) -> dict[str, int]:
    counted = collections.Counter(_first_line(row) or "(no detail)" for row in rows)
    return dict(counted.most_common())


def _first_line(row: dict) -> str:
    """A measured row's failure, its first line, short."""
    return (row.get("detail") or "").split("\n", 1)[0][:160]


class _Reasons:
    """Why a converter was not exercised, from the measured rows and the node tests."""

    def __init__(self, frontend: str, notes: dict[str, str], measured: list[dict],
                 node_tests: dict[str, list[str]]):
        self.frontend = frontend
        self.notes = notes
        self.measured = {row["case"]: row for row in measured}
        self.tests_of: dict[str, list[str]] = collections.defaultdict(list)
        if frontend == "onnx":
            for case_id, operators in node_tests.items():
                for operator in operators:
                    self.tests_of[operator].append(case_id)

    def of(self, name: str) -> str:
        """"KIND: detail", where KIND groups the converters that lack the same thing."""
        if (self.frontend, name) in _OUTSIDE_THE_MAP:
            return "handled outside the map: looked up before it, never counted"
        if name in self.notes:
            return self.notes[name]
        if self.frontend != "onnx":
            return _NO_CASE[self.frontend]
        tests = self.tests_of.get(name, [])
        if not tests:
            return "no ONNX node test uses it"
        ran = [self.measured[case] for case in tests if case in self.measured]
        if not ran:
            return (f"not in this selection (--all measures them): {len(tests)} ONNX node "
                    f"test(s), e.g. {tests[0]}")
        failed = [row for row in ran if row["verdict"] != "pass"]
        if not failed:
            return f"imported without looking it up: {len(ran)} ONNX node test(s)"
        return (f"its node tests fail to import before its converter runs: {len(failed)} "
                f"of {len(ran)}, e.g. {failed[0]['case']}: {_first_line(failed[0])}")


def text(found: dict) -> str:
    """The map for a terminal: one line per frontend, then each unexercised converter."""
    lines = []
    for public, reach in found.items():
        if reach.missing:
            lines.append(f"{public}: not measured ({reach.missing})")
            continue
        lines.append(f"{public}: {len(reach.exercised)} of {len(reach.converters)} converters "
                     f"exercised by {reach.cases} cases; {len(reach.unexercised)} not")
    for public, reach in found.items():
        if reach.missing or not reach.unexercised:
            continue
        by_kind: dict[str, list[str]] = collections.defaultdict(list)
        for name, reason in reach.unexercised.items():
            by_kind[reason.partition(":")[0]].append(name)
        lines.append(f"\n{public}: not exercised")
        for kind, names in sorted(by_kind.items(), key=lambda item: -len(item[1])):
            shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)"
                                            if len(names) > 12 else "")
            lines.append(f"  {kind} ({len(names)}): {shown}")
    return "\n".join(lines)


def table(measured: dict) -> str:
    """A `reach --json` answer as a Markdown table: per frontend, its converters, how many
    the corpus exercised, and the others counted by the kind of reason."""
    rows = ["| frontend | converters | exercised | cases measured | not exercised, by reason |",
            "|---|---|---|---|---|"]
    for public, reach in measured["frontends"].items():
        kinds = collections.Counter(reason.partition(":")[0]
                                    for reason in reach["unexercised"].values())
        why = "; ".join(f"{kind}: {count}" for kind, count in kinds.most_common()) or "-"
        rows.append(f"| `{public}` | {reach['converters']} | {len(reach['exercised'])} | "
                    f"{reach['cases']} | {why} |")
    return "\n".join(rows)

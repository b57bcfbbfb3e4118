"""A try's answer as a pull-request comment (Markdown) and as JSON.

New failures first (each with the command that checks it again), then the registered
bugs the change fixes (with the entry's upstream reference), what else stopped failing,
then the selection and why each part of it is in, and the cost.
"""
from __future__ import annotations

import json
from typing import Any

from harness.premerge.change import Change
from harness.premerge.targets import Selection
from harness.premerge.trial import GONE, Finding, TrialOutcome
from harness.versions import nights


def _reproduce(recheck: dict[str, Any], head: str) -> str:
    if "case" in recheck:
        return (f"`python -m harness check {recheck['case']} {' '.join(recheck['args'])}` "
                f"on a build of {head[:10]}")
    if "script" in recheck:
        return f"`python {recheck['script']}` on a build of {head[:10]}"
    return ""


def markdown(change: Change, selection: Selection, outcome: TrialOutcome | None,
             references: dict[str, str], nightly_checks: int) -> str:
    """`outcome` None: nothing was run (an inert change, or --dry-run)."""
    title = f"### harness try: {change.head_label} ({change.head[:10]}) on {change.base[:10]}"
    lines = [title, ""]
    if outcome is None:
        if selection.empty:
            lines.append("Nothing to run: every changed file is one no check runs "
                         f"({', '.join(selection.inert[:6])}"
                         f"{' ...' if len(selection.inert) > 6 else ''}).")
        else:
            lines.append(f"Selected {selection.size()} checks (not run: --dry-run).")
        lines += ["", *_selection(selection, nightly_checks)]
        return "\n".join(lines) + "\n"
    new, fixes = outcome.new, outcome.fixes
    gone = [finding for finding in outcome.findings if finding.kind == GONE
            and finding.state != nights.FLAKY]
    flaky = [finding for finding in outcome.findings if finding.state == nights.FLAKY]
    lines.append(f"**{len(new)} new**, {len(fixes)} fixed, {len(gone)} no longer failing, "
                 f"{len(outcome.stayed)} failing alike on both; {selection.size()} checks "
                 f"selected of the nightly's {nightly_checks}.")
    if new:
        lines += ["", "#### New on the head", "", "| check | what it shows | checked again | "
                  "check it again |", "|---|---|---|---|"]
        for finding in new:
            # the build's lines go in a block below the table, never inside a cell
            note = f" ({finding.note})" if finding.note and finding.row != "build" else ""
            lines.append(f"| {finding.row} | `{finding.signature}`{note} | {finding.state} | "
                         f"{_reproduce(finding.recheck, change.head)} |")
            if finding.row == "build" and finding.note:
                lines += ["", "```", finding.note.strip(), "```"]
    if fixes:
        lines += ["", "#### Fixes", ""]
        for finding in fixes:
            reference = references.get(finding.entry, "")
            how = finding.note or "its reproducer reproduced on the base and does not on the head"
            lines.append(f"- fixes `{finding.entry}`: {how} ({finding.state})"
                         + (f"; upstream: {reference}" if reference else ""))
    if gone:
        lines += ["", "#### No longer failing", ""]
        lines += [f"- {finding.row}: `{finding.signature}` ({finding.state})"
                  for finding in gone]
    if flaky:
        lines += ["", f"{len(flaky)} change(s) did not repeat when checked again (flaky, "
                  "not the change's): " + "; ".join(f"{f.row}: {f.signature}"
                                                   for f in flaky[:5])]
    if outcome.stayed:
        lines += ["", f"<details><summary>{len(outcome.stayed)} check(s) fail alike on the "
                  "base and the head</summary>", ""]
        lines += [f"- {row}" for row in outcome.stayed] + ["", "</details>"]
    if outcome.errors:
        lines += ["", "#### The harness's own errors (not TVM's)", ""]
        lines += [f"- {error}" for error in outcome.errors]
    lines += ["", *_selection(selection, nightly_checks), "", *_cost(outcome)]
    return "\n".join(lines) + "\n"


def _selection(selection: Selection, nightly_checks: int) -> list[str]:
    lines = ["#### Selection", ""]
    for path, by_case in sorted(selection.cases.items()):
        reasons: dict[str, list[str]] = {}
        for case, why in by_case.items():
            for reason in why:
                reasons.setdefault(reason, []).append(case)
        for reason, cases in reasons.items():
            shown = ", ".join(cases[:6]) + (f" and {len(cases) - 6} more" if len(cases) > 6
                                            else "")
            lines.append(f"- {path} path, {len(cases)} case(s) ({shown}): {reason}")
    for name, why in sorted(selection.passes.items()):
        lines.append(f"- the sweep of {name} on the sample: {'; '.join(why)}")
    lines += [f"- {why}" for why in selection.reproducers]
    lines += [f"- not run: {note}" for note in selection.notes]
    if selection.inert:
        lines.append(f"- inert (no check runs them): {', '.join(selection.inert[:8])}"
                     f"{' ...' if len(selection.inert) > 8 else ''}")
    lines.append(f"- {selection.size()} checks of the nightly's {nightly_checks}")
    return lines


def _cost(outcome: TrialOutcome) -> list[str]:
    parts = []
    for side in outcome.sides:
        build = side.build
        built = ("did not build" if not build.get("ok", True) else
                 "build reused" if build.get("reused") else f"built in {build.get('seconds')} s")
        parts.append(f"{side.name} {side.commit[:10]}: {built}, {side.rows} rows "
                     f"({side.failing} failing), {side.seconds:.0f} s")
    return ["Cost: " + "; ".join(parts) + "."]


def to_json(change: Change, selection: Selection, outcome: TrialOutcome | None,
            references: dict[str, str], nightly_checks: int) -> str:
    data = {"base": change.base, "head": change.head, "head_label": change.head_label,
            "files": [item.path or item.old_path for item in change.files],
            "selection": selection.to_json(), "nightly_checks": nightly_checks}
    if outcome is not None:
        data.update(
            new=[_finding(finding) for finding in outcome.new],
            fixes=[{**_finding(finding), "reference": references.get(finding.entry, "")}
                   for finding in outcome.fixes],
            findings=[_finding(finding) for finding in outcome.findings],
            stayed=outcome.stayed, errors=outcome.errors,
            sides=[{"side": side.name, "commit": side.commit, "seconds": side.seconds,
                    "rows": side.rows, "failing": side.failing,
                    "build": {key: side.build.get(key) for key in ("ok", "seconds", "reused")}}
                   for side in outcome.sides])
    return json.dumps(data, indent=1)


def _finding(finding: Finding) -> dict[str, str]:
    return {"kind": finding.kind, "row": finding.row, "signature": finding.signature,
            "state": finding.state, "entry": finding.entry, "note": finding.note}

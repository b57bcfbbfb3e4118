"""A guarded session's records, merged, judged and written as summary.md/.json/.html.

The records are OUT/records-*.jsonl, one file per pytest process (xdist workers each
write their own), one line per test. Findings are grouped by signature (kind, pass,
normalized message): one row per distinct finding with its count, one example test and
the registry's reading. Used by the plugin at the end of a session and by
`guard-suite`, which merges the folders of its per-file runs.
"""
from __future__ import annotations

import dataclasses
import glob
import html
import json
import os

from harness import jsonl
from harness.catalog import known_issues
from harness.signature import Signature
from harness.verdict import Outcome, Violation, reading

RECORDS = "records-*.jsonl"


def records_path(out_dir: str, worker: str) -> str:
    return os.path.join(out_dir, f"records-{worker}.jsonl")


def read(folders: list[str]) -> list[dict]:
    """Every test line under `folders` (searched recursively); a line a kill cut short
    is dropped."""
    lines = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "**", RECORDS), recursive=True)):
            lines += jsonl.read(path)
    return lines


@dataclasses.dataclass
class Finding:
    signature: str
    kind: str
    pass_name: str
    count: int
    example_test: str
    example_detail: str
    status: str       # known | new | unsupported | harness-error
    entry: str = ""   # the registry entry that explains it
    reference: str = ""


def summarize(lines: list[dict]) -> dict:
    """Totals, distinct findings and the registry's verdict, as JSON."""
    versions = next(({"tvm_version": line.get("tvm_version"),
                      "tvm_ffi_version": line.get("tvm_ffi_version")} for line in lines), {})
    findings = [(line["test"], Violation.from_json(raw))
                for line in lines for raw in line["violations"]]
    judgement = known_issues.judge_suite(findings, [line["test"] for line in lines], versions)
    explained = {(test, id(violation)): entry for test, violation, entry in judgement.known}
    groups: dict[str, Finding] = {}
    for test, violation in findings:
        text = Signature.of(violation).text()
        entry = explained.get((test, id(violation)))
        # a finding read as a result is: unsupported or harness-error stands, else known/new
        status = str(reading(violation.kind, entry is None, False, entry is not None))
        key = f"{status} {text}"
        if key not in groups:
            groups[key] = Finding(text, str(violation.kind), violation.pass_name or "", 0, test,
                                  violation.detail[:400], status,
                                  entry.id if entry else "", entry.reference if entry else "")
        groups[key].count += 1
    outcomes: dict[str, int] = {}
    for line in lines:
        outcomes[line.get("outcome", "?")] = outcomes.get(line.get("outcome", "?"), 0) + 1
    distinct_passes = sorted({name for line in lines for name in line.get("pass_names", [])})
    return {
        "status": str(judgement.status), "exit": judgement.exit_code,
        "versions": versions,
        "tests": len(lines), "outcomes": outcomes,
        "pass_applications": sum(line.get("passes", 0) for line in lines),
        "distinct_passes": len(distinct_passes), "passes": distinct_passes,
        "modules_copied": sum(line.get("modules_copied", 0) for line in lines),
        "modules_remembered": sum(line.get("modules_remembered", 0) for line in lines),
        "over_cap": sum(line.get("over_cap", 0) for line in lines),
        "held_after": sum(line.get("held_after", 0) for line in lines),
        "test_seconds": round(sum(line.get("test_seconds", 0.0) for line in lines), 2),
        "guard_seconds": round(sum(line.get("guard_seconds", 0.0) for line in lines), 2),
        "findings": [dataclasses.asdict(finding) for finding in
                     sorted(groups.values(), key=lambda f: (_ORDER.index(f.status), -f.count))],
        "stale": [{"entry": entry.id, "reference": entry.reference}
                  for entry in judgement.stale],
    }


_ORDER = (Outcome.HARNESS_ERROR, Outcome.NEW, Outcome.KNOWN, Outcome.UNSUPPORTED)


def headline(summary: dict) -> str:
    counts = {}
    for finding in summary["findings"]:
        counts[finding["status"]] = counts.get(finding["status"], 0) + 1
    found = ", ".join(f"{n} {status}" for status, n in counts.items()) or "no findings"
    stale = f", {len(summary['stale'])} stale registry entries" if summary["stale"] else ""
    return (f"{summary['tests']} tests, {summary['pass_applications']} pass applications of "
            f"{summary['distinct_passes']} distinct passes, {summary['modules_copied']} "
            f"modules copied ({summary['over_cap']} over the cap); distinct findings: "
            f"{found}{stale}; status {summary['status']}")


def markdown(summary: dict) -> str:
    outcomes = ", ".join(f"{n} {o}" for o, n in sorted(summary["outcomes"].items()))
    lines = [f"# Guarded test suite: {summary['status']}", "", headline(summary), "",
             f"Tests: {outcomes}. Test time {summary['test_seconds']} s, of which the guard "
             f"{summary['guard_seconds']} s. TVM {summary['versions'].get('tvm_version')}, "
             f"tvm-ffi {summary['versions'].get('tvm_ffi_version')}.", "",
             "| status | signature | count | example test | entry |", "|---|---|---|---|---|"]
    for finding in summary["findings"]:
        cell = finding["signature"].replace("|", "\\|")
        lines.append(f"| {finding['status']} | `{cell}` | {finding['count']} | "
                     f"`{finding['example_test']}` | {finding['entry']} |")
    if summary["stale"]:
        lines += ["", "## Stale registry entries (they no longer happen)", ""]
        lines += [f"- [{item['entry']}] {item['reference']}" for item in summary["stale"]]
    return "\n".join(lines) + "\n"


def html_page(summary: dict) -> str:
    rows = "".join(
        f"<tr class='{html.escape(f['status'])}'><td>{html.escape(f['status'])}</td>"
        f"<td><code>{html.escape(f['signature'])}</code></td><td>{f['count']}</td>"
        f"<td><code>{html.escape(f['example_test'])}</code><br>"
        f"<small>{html.escape(f['example_detail'])}</small></td>"
        f"<td>{html.escape(f['entry'])}</td></tr>" for f in summary["findings"])
    return ("<!doctype html><meta charset='utf-8'><title>Guarded test suite</title><style>"
            "body{font-family:sans-serif}td{border-top:1px solid #ccc;padding:4px;"
            "vertical-align:top}.new td:first-child{color:#b00;font-weight:bold}"
            f"</style><h1>Guarded test suite: {html.escape(summary['status'])}</h1>"
            f"<p>{html.escape(headline(summary))}</p><table><tr><th>status<th>signature"
            f"<th>count<th>example<th>entry</tr>{rows}</table>")


def write(summary: dict, out_dir: str) -> None:
    with open(os.path.join(out_dir, "summary.json"), "w") as handle:
        json.dump(summary, handle, indent=1)
    with open(os.path.join(out_dir, "summary.md"), "w") as handle:
        handle.write(markdown(summary))
    with open(os.path.join(out_dir, "summary.html"), "w") as handle:
        handle.write(html_page(summary))

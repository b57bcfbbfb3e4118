"""A guarded session's records, merged, judged and written as summary.md/.json/.html.

The records are OUT/records-*.jsonl, one file per pytest process (xdist workers each
write their own), one line per test; besides them, a line per collector pytest could not
collect or skipped whole (`collector`), per file killed at its time cap or by a signal
(`collector`, written by guard-suite) and per failed test or killed file run again
unguarded (`rechecked`). Findings are grouped by signature (kind, pass, normalized
message): one row per distinct finding with its count, one example test and the
registry's reading. What did not pass is counted by category and reason (not_passed.py),
beside the findings and never among them; but what the guard changed (a test failing only
under it, a file killed only under it) is the harness's own error: a `harness-error`
finding each, the summary's status (exit 4), and every such test named (`guard_changed`).
Used by the plugin at the end of a session and by `guard-suite`, which merges the folders
of its per-file runs.
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
from harness.suite import not_passed
from harness.verdict import Outcome, Phase, Violation, reading

RECORDS = "records-*.jsonl"


def records_path(out_dir: str, worker: str) -> str:
    return os.path.join(out_dir, f"records-{worker}.jsonl")


def tests_of(lines: list[dict]) -> list[dict]:
    """The lines of tests (not of collectors, files or re-runs)."""
    return [line for line in lines if "test" in line]


def read(folders: list[str]) -> list[dict]:
    """Every record line under `folders` (searched recursively; hidden folders are not);
    a line a kill cut short is dropped."""
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


def _changed(item: dict) -> tuple[str, Violation]:
    """An outcome the guard changed, as the harness error it is (never judged by the
    registry): the first line of its detail is its signature's message, the same for
    every test (resp. file), the second names it."""
    where = item["test"] or item["file"]
    return where, Violation(Outcome.HARNESS_ERROR, known_issues.SUITE_PATH, "(outcome)",
                            f"{item['what']}\n{where}: {item['how']}", phase=Phase.CHECKS)


def summarize(lines: list[dict]) -> dict:
    """Totals, distinct findings, what did not pass by reason, what the guard changed and
    the registry's verdict, as JSON."""
    versions = next(({"tvm_version": line.get("tvm_version"),
                      "tvm_ffi_version": line.get("tvm_ffi_version")}
                     for line in lines if line.get("tvm_version")), {})
    everything, lines = lines, tests_of(lines)
    findings = [(line["test"], Violation.from_json(raw))
                for line in lines for raw in line["violations"]]
    changed = not_passed.guard_changed(everything)
    findings += [_changed(item) for item in changed]
    # an unguarded test saw no pass: it can neither show nor fail to show a finding
    guarded = [line["test"] for line in lines if line.get("guarded", True)]
    judgement = known_issues.judge_suite(findings, guarded, versions)
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
    counted: dict[str, int] = {}
    for line in lines:
        counted[line.get("outcome", "?")] = counted.get(line.get("outcome", "?"), 0) + 1
    collectors: dict[str, int] = {}
    for line in everything:
        if "collector" in line:
            collectors[line["outcome"]] = collectors.get(line["outcome"], 0) + 1
    distinct_passes = sorted({name for line in lines for name in line.get("pass_names", [])})
    tally = not_passed.tally(everything)
    suite = _suite_status(len(lines), tally)
    return {
        "status": str(judgement.status), "guard_exit": judgement.exit_code,
        # the exit never hides a failure: the guard's finding, else the suite's own
        "exit": judgement.exit_code if judgement.status.failing else suite.exit,
        "suite_status": str(suite),
        "versions": versions,
        "guarded": not everything or any(line.get("guarded", True) for line in everything),
        "tests": len(lines), "outcomes": counted, "collectors": collectors,
        "not_passed": tally, "guard_changed": changed,
        "pass_applications": sum(line.get("passes", 0) for line in lines),
        "distinct_passes": len(distinct_passes), "passes": distinct_passes,
        "modules_copied": sum(line.get("modules_copied", 0) for line in lines),
        "modules_remembered": sum(line.get("modules_remembered", 0) for line in lines),
        "copies_remembered": sum(line.get("copies_remembered", 0) for line in lines),
        "over_cap": sum(line.get("over_cap", 0) for line in lines),
        "not_well_formed": sum(line.get("not_well_formed", 0) for line in lines),
        "held_after": sum(line.get("held_after", 0) for line in lines),
        "test_seconds": round(sum(line.get("test_seconds", 0.0) for line in lines), 2),
        "guard_seconds": round(sum(line.get("guard_seconds", 0.0) for line in lines), 2),
        "findings": [dataclasses.asdict(finding) for finding in
                     sorted(groups.values(), key=lambda f: (_ORDER.index(f.status), -f.count))],
        "stale": [{"entry": entry.id, "reference": entry.reference}
                  for entry in judgement.stale],
    }


_ORDER = (Outcome.HARNESS_ERROR, Outcome.NEW, Outcome.KNOWN, Outcome.UNSUPPORTED)


def _suite_status(tests: int, tally: dict) -> Outcome:
    """The suite's own outcome: no-tests when none ran, suite-failed when a test failed
    on its own or a file did not collect or was killed, else pass."""
    if not tests:
        return Outcome.NO_TESTS
    if any(category in not_passed.SUITE_FAILURES for category in tally):
        return Outcome.SUITE_FAILED
    return Outcome.PASS


def suite_text(summary: dict) -> str:
    """What the suite itself did, beside the guard's status."""
    status = summary.get("suite_status", Outcome.PASS)
    if status == Outcome.NO_TESTS:
        return "the suite: no test ran (nothing was checked)"
    if status != Outcome.SUITE_FAILED:
        return "the suite: its tests passed or cannot run here"
    parts = [f"{entry['tests']} tests, {entry['files']} files {category}"
             for category, entry in summary["not_passed"].items()
             if category in not_passed.SUITE_FAILURES]
    return "the suite failed on its own: " + "; ".join(parts)


def headline(summary: dict) -> str:
    counts = {}
    for finding in summary["findings"]:
        counts[finding["status"]] = counts.get(finding["status"], 0) + 1
    found = ", ".join(f"{n} {status}" for status, n in counts.items()) or "no findings"
    stale = f", {len(summary['stale'])} stale registry entries" if summary["stale"] else ""
    return (f"{summary['tests']} tests, {summary['pass_applications']} pass applications of "
            f"{summary['distinct_passes']} distinct passes, {summary['modules_copied']} "
            f"modules copied ({summary['over_cap']} over the cap, "
            f"{summary.get('not_well_formed', 0)} not well-formed, so not guarded, "
            f"{summary.get('copies_remembered', 0)} copies remembered from earlier runs of "
            "this build); distinct findings: "
            f"{found}{stale}; {guard_text(summary)}; {suite_text(summary)}")


def guard_text(summary: dict) -> str:
    """The guard's status, never "pass" over nothing checked."""
    if not summary["tests"]:
        return "the guard checked nothing"
    return f"the guard's status {summary['status']}"


def top_reasons(summary: dict, per_category: int = 3) -> list[str]:
    """One line per category of what did not pass, with its most frequent reasons."""
    text = []
    for category, entry in summary.get("not_passed", {}).items():
        top = "; ".join(f"{group['reason']!r} ({group['tests']} tests, {group['files']} files)"
                        for group in entry["reasons"][:per_category])
        more = len(entry["reasons"]) - per_category
        text.append(f"{category}: {entry['tests']} tests, {entry['files']} files "
                    f"({not_passed.MEANING[category]}): {top}"
                    + (f"; and {more} more reasons" if more > 0 else ""))
    return text


def _reason_rows(summary: dict) -> list[tuple[str, dict]]:
    return [(category, group) for category, entry in summary.get("not_passed", {}).items()
            for group in entry["reasons"]]


def changed_text(item: dict) -> str:
    """One line naming an outcome the guard changed: the file, the test, why."""
    return (f"{item['file']}, test {item['test'] or '(none started)'}: {item['what']}; "
            f"{item['how']}")


def _title(summary: dict) -> str:
    return "Guarded test suite" if summary.get("guarded", True) else "Test suite, not guarded"


def markdown(summary: dict) -> str:
    counted = ", ".join(f"{n} {o}" for o, n in sorted(summary["outcomes"].items()))
    lines = [f"# {_title(summary)}: {summary['status']}", "", headline(summary), "",
             f"Tests: {counted}. The tests' own time {summary['test_seconds']} s, the "
             f"guard's {summary['guard_seconds']} s on top. "
             f"TVM {summary['versions'].get('tvm_version')}, "
             f"tvm-ffi {summary['versions'].get('tvm_ffi_version')}.", "",
             "| status | signature | count | example test | entry |", "|---|---|---|---|---|"]
    for finding in summary["findings"]:
        cell = finding["signature"].replace("|", "\\|")
        lines.append(f"| {finding['status']} | `{cell}` | {finding['count']} | "
                     f"`{finding['example_test']}` | {finding['entry']} |")
    if summary["stale"]:
        lines += ["", "## Stale registry entries (they no longer happen)", ""]
        lines += [f"- [{item['entry']}] {item['reference']}" for item in summary["stale"]]
    if summary.get("guard_changed"):
        lines += ["", "## The guard changed these outcomes (harness errors)", "",
                  *[f"- {changed_text(item)}" for item in summary["guard_changed"]]]
    if summary.get("not_passed"):
        lines += ["", "## Not passed, by reason (none of them a guard finding)", "",
                  *[f"- {category}: {entry['tests']} tests, {entry['files']} files: "
                    f"{not_passed.MEANING[category]}"
                    for category, entry in summary["not_passed"].items()], "",
                  "| category | reason | tests | files | example |", "|---|---|---|---|---|"]
        for category, group in _reason_rows(summary):
            reason = group["reason"].replace("|", "\\|")
            lines.append(f"| {category} | `{reason}` | {group['tests']} | {group['files']} | "
                         f"`{group['example']}` |")
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
            f"</style><h1>{_title(summary)}: {html.escape(summary['status'])}</h1>"
            f"<p>{html.escape(headline(summary))}</p><table><tr><th>status<th>signature"
            f"<th>count<th>example<th>entry</tr>{rows}</table>{_changed_html(summary)}"
            f"{_reasons_html(summary)}")


def _changed_html(summary: dict) -> str:
    items = "".join(f"<li>{html.escape(changed_text(item))}"
                    for item in summary.get("guard_changed", []))
    return f"<h2>The guard changed these outcomes (harness errors)</h2><ul>{items}</ul>" \
        if items else ""


def _reasons_html(summary: dict) -> str:
    if not summary.get("not_passed"):
        return ""
    meaning = "".join(f"<li><b>{html.escape(category)}</b>: {entry['tests']} tests, "
                      f"{entry['files']} files: {html.escape(not_passed.MEANING[category])}"
                      for category, entry in summary["not_passed"].items())
    rows = "".join(f"<tr><td>{html.escape(category)}</td><td><code>"
                   f"{html.escape(group['reason'])}</code></td><td>{group['tests']}</td>"
                   f"<td>{group['files']}</td><td><code>{html.escape(group['example'])}"
                   f"</code></td></tr>" for category, group in _reason_rows(summary))
    return (f"<h2>Not passed, by reason (none of them a guard finding)</h2><ul>{meaning}</ul>"
            f"<table><tr><th>category<th>reason<th>tests<th>files<th>example</tr>{rows}"
            "</table>")


def write(summary: dict, out_dir: str) -> None:
    with open(os.path.join(out_dir, "summary.json"), "w") as handle:
        json.dump(summary, handle, indent=1)
    with open(os.path.join(out_dir, "summary.md"), "w") as handle:
        handle.write(markdown(summary))
    with open(os.path.join(out_dir, "summary.html"), "w") as handle:
        handle.write(html_page(summary))

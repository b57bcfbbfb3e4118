"""The checks run against one build, as the harness's own commands, and their rows.

A watched night (cli/watch) and a try of a change (premerge) run these.

Each item is one `python -m harness ...` command run with the build's python and
environment (what `bisect-step` checks with), writing into the night's folder; its
output is read back as rows: {name: {"signatures": [...], "recheck": {...}}}. A row's
`recheck` says how to check it again alone, on this build or on any commit of a hunt:
`{"case": ID, "args": [...]}` for a catalog case (`harness check`), `{"script": FILE}` for a
standalone reproducer (exit 1: it reproduces).
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from typing import Any, Callable

from harness.paths import REPO_ROOT
from harness.versions.nights import REPRODUCES

Rows = dict[str, dict[str, Any]]   # {row name: {"signatures": [...], "recheck": {...}}}


@dataclasses.dataclass(frozen=True)
class Item:
    name: str
    argv: tuple[str, ...]                  # after `python -m harness`; {out} is the folder
    read: Callable[[str, str], Rows]       # (its folder, its stdout) -> rows


def _report_rows(folder: str, stdout: str) -> Rows:
    with open(os.path.join(folder, "report.json")) as handle:
        rows = json.load(handle)["rows"]
    found = {}
    for row in rows:
        path, layout, target = row.get("path", "extract"), row.get("layout"), row.get("target")
        if row["verdict"] in ("unsupported", "harness-error"):   # nothing TVM did: no row
            continue
        found[f"report {path} {row['case']} {layout} {target}"] = {
            "signatures": sorted(set(row.get("signatures", []))),
            "recheck": {"case": row["case"], "args": ["--layout", str(layout), "--path", path,
                                                      "--target", str(target)]}}
    return found


def _reproducer_rows(folder: str, stdout: str) -> Rows:
    with open(os.path.join(folder, "reproducers.json")) as handle:
        rows = json.load(handle)["rows"]
    return {f"reproducer {row['entry']}": {
        "signatures": [REPRODUCES] if row["exit"] == "1" else [],
        "recheck": {"script": row["path"]}}
        for row in rows if row["exit"] in ("0", "1")}


def _fuzz_rows(name: str) -> Callable[[str, str], Rows]:
    def read(folder: str, stdout: str) -> Rows:
        found = re.search(r"^fuzz: reproducer: (.+)$", stdout, re.MULTILINE)
        what = re.search(r"^fuzz: (?!shrunk|reproducer)([\w-]+): (.+)$", stdout, re.MULTILINE)
        if not found or not what:
            return {name: {"signatures": [], "recheck": {}}}
        return {name: {"signatures": [f"{what.group(1)}: {what.group(2)[:200]}"],
                       "recheck": {"script": os.path.abspath(found.group(1).strip())}}}
    return read


def _suite_rows(folder: str, stdout: str) -> Rows:
    """TVM's own tests under the guard as one row: every finding's signature, each checked
    again (and hunted) on its example test alone. No test ran: the harness's failure (its
    environment cannot run the suite), never a night without findings."""
    with open(os.path.join(folder, "summary.json")) as handle:
        summary = json.load(handle)
    if summary.get("suite_status") == "no-tests":
        raise ValueError("no test of the suite ran (is pytest in the build's environment?)")
    findings = [finding for finding in summary["findings"]
                if finding["status"] != "unsupported"]
    return {"suite": {"signatures": sorted({finding["signature"] for finding in findings}),
                      "recheck": {"suite_tests": {finding["signature"]: finding["example_test"]
                                                  for finding in findings}}}}


def reproducers_item(entries: tuple[str, ...] = (), jobs: int = 1) -> Item:
    """The registered reproducers (all, or `entries`) run against the build."""
    return Item("reproducers", ("reproducers", "--run", *entries, "--source", "{source}",
                                "--build-dir", "{build}", "--json", "{out}/reproducers.json",
                                "--jobs", str(jobs)), _reproducer_rows)


def report_item(path: str, patterns: list[str], jobs: int = 1) -> Item:
    return Item(f"report-{path}", ("report", *patterns, "--path", path, "--out", "{out}",
                                   "--fresh", "--jobs", str(jobs)), _report_rows)


def passes_item(pass_name: str, cases: list[str], jobs: int = 1) -> Item:
    """One pass's sweep rows over `cases` at every point (`passes --pass NAME`)."""
    return Item(f"passes-{pass_name}", ("passes", *cases, "--pass", pass_name, "--out", "{out}",
                                        "--fresh", "--no-memo", "--jobs", str(jobs)),
                _sweep_rows)


def _sweep_rows(folder: str, stdout: str) -> Rows:
    """A row per (pass, case, point): a failing or known verdict is its signature (the
    verdict and the detail's first line); a skipped or refused point shows nothing."""
    with open(os.path.join(folder, "passes.json")) as handle:
        rows = json.load(handle)["rows"]
    found = {}
    for row in rows:
        if row["verdict"] == "harness-error":   # ours, never TVM's news
            continue
        shown = row["failing"] or row["verdict"] in ("known", "stale")
        detail = (row["detail"].splitlines() or [""])[0][:200]
        found[f"passes {row['pass']} {row['case']} {row['point']}"] = {
            "signatures": [f"{row['verdict']}: {detail}"] if shown else [], "recheck": {}}
    return found


def plan(patterns: list[str], paths: list[str], reproducers: bool, fuzz_examples: int,
         fuzz_seed: int, suite: tuple[str, ...] | list[str] = ()) -> list[Item]:
    """The night's commands, cheapest first; TVM's own tests (`suite`: folders of the
    checkout's tests/python) last."""
    items = [reproducers_item()] if reproducers else []
    items += [report_item(path, patterns) for path in paths if patterns]
    if fuzz_examples:
        for path in paths:
            name = f"fuzz ops {path} seed {fuzz_seed}"
            items.append(Item(f"fuzz-ops-{path}", (
                "fuzz", "--generator", "ops", "--path", path, "--examples", str(fuzz_examples),
                "--seed", str(fuzz_seed), "--out", "{out}"), _fuzz_rows(name)))
    if suite:
        items.append(Item("guard-suite", ("guard-suite", *(os.path.join("{source}", folder)
                                                           for folder in suite),
                                          "--out", "{out}", "--jobs", "1", "--fresh",
                                          "--allow-suite-failures"), _suite_rows))
    return items


def run_item(item: Item, python: str, env: dict[str, str], folder: str,
             where: dict[str, str], log: Callable[[str], None]) -> tuple[Rows, str]:
    """(its rows, "" or why it failed): a command that exits 2 or 4 (bad input, our own
    bug) or leaves nothing to read is the harness's failure, never TVM's news. `where`
    fills {source} and {build} (the checkout and the folder whose lib/ holds its build)."""
    os.makedirs(folder, exist_ok=True)
    fill = {"{out}": folder, **{"{" + name + "}": value for name, value in where.items()}}
    argv = [python, "-m", "harness"]
    for part in item.argv:
        for placeholder, value in fill.items():
            part = part.replace(placeholder, value)
        argv.append(part)
    log(f"  $ {' '.join(argv[1:])}")
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    stdout, stderr = _relay(proc, folder)
    error = ""
    if proc.returncode not in (0, 1):   # its rows that were decided still stand
        error = f"{item.name} exited {proc.returncode}: " \
            f"{(stderr.strip().splitlines() or ['?'])[-1]}"
    try:
        return item.read(folder, stdout), error
    except (OSError, ValueError, KeyError) as exc:
        return {}, error or f"{item.name} left nothing to read ({type(exc).__name__}: {exc})"


def _relay(proc: subprocess.Popen[str], folder: str) -> tuple[str, str]:
    """The command's stderr shown as it comes (its progress) and kept in the folder."""
    import threading
    assert proc.stdout is not None and proc.stderr is not None   # opened with PIPE
    stdout, stderr = proc.stdout, proc.stderr
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(stdout.read()), daemon=True)
    reader.start()
    err = []
    with open(os.path.join(folder, "stderr.log"), "w") as log_file:
        for line in stderr:
            err.append(line)
            log_file.write(line)
            sys.stderr.write("    " + line)
    proc.wait()
    reader.join()
    return "".join(out), "".join(err)


def shows(recheck: dict[str, Any], signature: str, python: str, env: dict[str, str],
          timeout: float, source: str = "") -> bool | None:
    """Does the row show `signature` when checked again alone on this build (None: the
    check could not run)? A check row by its signatures, a script row by exit 1, a test of
    TVM's suite by the findings of the guard on that test alone."""
    test = recheck.get("test") or recheck.get("suite_tests", {}).get(signature)
    if "test" in recheck or "suite_tests" in recheck:
        if not test:
            return None
        from harness.versions import suite_test
        found = suite_test.signatures(python, env, source, test, timeout)
        return None if found is None else signature in found
    if "script" in recheck:
        argv = [python, recheck["script"]]
        cwd = os.path.dirname(recheck["script"])
    elif "case" in recheck:
        argv = [python, "-m", "harness", "check", recheck["case"], "--quiet", "--json",
                "--ignore-known", *recheck["args"]]
        cwd = REPO_ROOT
    else:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if "script" in recheck:
        return {0: False, 1: True}.get(proc.returncode)
    if proc.returncode not in (0, 1):
        return None
    from harness.versions.bisect import read_check
    return signature in read_check(proc.stdout)[1]

"""`python -m harness upstream ENTRY_ID`: every finding with a reproducer is an issue
upstream can act on, in apache/tvm's bug-report shape, built from the registry alone.

No TVM runs here: the report is text from the entry and its reproducer file. The
source lines at fault are checked against a git repository of apache/tvm (and
apache/tvm-ffi) in the nightly (`-m nightly -k line_at_fault` with HARNESS_TVM_GIT and
HARNESS_TVM_FFI_GIT set), so a line number that drifted or a path that moved fails.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess

import pytest
from helpers import ROOT, cli_here

from harness.catalog import known_issues
from harness.cli import upstream
from harness.verdict import BadInput

SECTIONS = ("### Expected behavior", "### Actual behavior", "### Environment",
            "### Steps to reproduce", "### Triage")
REPORTABLE = [entry for entry in known_issues.registry() if entry.reproducer]
# Git repositories of apache/tvm and apache/tvm-ffi, from variables (the product names no
# folder of any machine). The README's set-up gives none, so the tests that read one are
# nightly: deselected from the default run, never a skip a contributor reads on every run.
GIT = {"apache/tvm": [os.environ.get("HARNESS_TVM_GIT", "")],
       "apache/tvm-ffi": [os.environ.get("HARNESS_TVM_FFI_GIT", "")]}


@pytest.mark.parametrize("entry", REPORTABLE, ids=[entry.id for entry in REPORTABLE])
def test_every_entry_with_a_reproducer_is_a_whole_report(entry):
    text = upstream.report(entry)
    title = entry.title.replace('"', '\\"')
    assert text.startswith(f'---\ntitle: "{title}"\nlabels: "needs-triage, type: bug"\n')
    assert entry.title.startswith("[Bug]")
    positions = [text.index(section) for section in SECTIONS]
    assert positions == sorted(positions)
    with open(os.path.join(entry.base, entry.reproducer)) as handle:
        assert handle.read().rstrip("\n") in text   # inlined whole
    assert f"apache-tvm {entry.tvm}" in text and entry.measured_on
    assert all(" ".join(item.split()) in text for item in entry.measured_on)
    where = upstream.source_line(entry)
    if where is not None:
        assert f"]({where.url})" in text and where.url.endswith(f"#L{where.line}")


def _git_with(repo: str, commit: str) -> str | None:
    for folder in GIT[repo]:
        probe = ["git", "-C", folder, "cat-file", "-e", f"{commit}^{{commit}}"]
        if folder and subprocess.run(probe, capture_output=True).returncode == 0:
            return folder
    return None


AT_FAULT = [entry for entry in REPORTABLE if entry.at_fault]


@pytest.mark.nightly
@pytest.mark.parametrize("entry", AT_FAULT, ids=[entry.id for entry in AT_FAULT])
def test_each_line_at_fault_is_a_line_of_code_at_its_commit(entry):
    where = upstream.source_line(entry)
    folder = _git_with(where.repo, where.commit)
    if folder is None:
        pytest.skip(f"no git repository of {where.repo} holding {where.commit} here "
                    "(set HARNESS_TVM_GIT / HARNESS_TVM_FFI_GIT)")
    proc = subprocess.run(["git", "-C", folder, "show", f"{where.commit}:{where.path}"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"{where.path} is not in {where.repo} at {where.commit}"
    lines = proc.stdout.splitlines()
    assert where.line <= len(lines) and lines[where.line - 1].strip(), (
        f"{where.path}:{where.line} at {where.commit} is blank or past the end")


def test_fields_it_lacks_are_said_unknown_and_the_bisect_results_rendered():
    """Never invented: no introduced_by is "not known"; once the bisect names the commits,
    the report carries them."""
    entry = upstream.find("torch-frontend-grid-sample-grid-layout")
    bare = dataclasses.replace(entry, introduced_by="", fixed_by="", at_fault="",
                               first_bad_release="")
    text = upstream.report(bare)
    assert "- First bad commit: not known (not bisected)" in text
    assert "- First bad release: not known" in text and "Fixed by" not in text
    assert "Where in the source: not located yet." in text
    assert upstream.missing(bare)[1] == ["at_fault", "first_bad_release", "introduced_by"]
    bisected = dataclasses.replace(
        entry, introduced_by="0123456789 [Relax][Torch] Convert grid_sample (#1)",
        fixed_by="abcdef0123456789abcdef0123456789abcdef01 [Fix] Permute the grid (#2)")
    text = upstream.report(bisected)
    assert "- First bad commit: 0123456789 [Relax][Torch] Convert grid_sample (#1)" in text
    assert "- Fixed by: abcdef0123456789abcdef0123456789abcdef01 [Fix] Permute the grid" in text
    assert "- First bad release: apache-tvm 0.26.0 (0.25.0 converts it right)" in text
    assert "Save the script below as `torch_frontend_grid_sample_grid_layout.py`" in text
    assert "apache-tvm and torch installed" in text


def test_a_malformed_field_is_refused_not_rendered():
    entry = upstream.find("convert-layout-dropout")
    for field, value in (("at_fault", "nn.cc line 895"), ("introduced_by", "abc fix"),
                         ("fixed_by", "not a hash at all")):
        with pytest.raises(BadInput, match=field):
            upstream.report(dataclasses.replace(entry, **{field: value}))


def test_the_command_writes_the_report_and_refuses_what_it_cannot_write(tmp_path):
    out = tmp_path / "issue.md"
    code, stdout, err = cli_here("upstream", "convert-layout-dropout", "--out", out)
    assert code == 0 and stdout == "", err
    assert out.read_text() == upstream.report(upstream.find("convert-layout-dropout"))
    assert "has no first_bad_release, introduced_by: the report says it is not known" in err
    code, stdout, err = cli_here("upstream", "convert-layout-drop")
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1
    assert "did you mean convert-layout-dropout" in err
    code, _, err = cli_here("upstream", "onnx-resize-axes-upsample")   # a limitation, no repro
    assert code == 2 and "no title, expected, actual, reproducer" in err
    code, _, err = cli_here("upstream", "convert-layout-dropout", "--out", tmp_path)
    assert code == 2 and "--out" in err


def test_the_findings_pages_count_of_lines_at_fault_is_its_tables():
    """docs/explanation/findings.md says how many findings are still in the source above the
    table of their lines: the figure is the table's row count (it had drifted: 77 over 76 rows)."""
    import re
    with open(os.path.join(ROOT, "docs", "explanation", "findings.md")) as handle:
        text = handle.read()
    section = text.split("## Upstream-ready")[1].split("\n## ")[0]
    stated = int(re.search(r"(\d+) findings are still there", section).group(1))
    rows = [line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| finding |")]
    assert stated == len(rows), (stated, len(rows))

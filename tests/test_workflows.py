"""The GitHub workflows stay safe to run on strangers' pull requests, by zizmor's static
audit (actions pinned by hash, no persisted credentials, no template injection, no
dangerous trigger), and the try workflow calls the command as it is.

A seeded workflow (a tag-pinned action, a checkout that keeps its token) proves the audit
refuses what it should.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

WORKFLOWS = [os.path.join(ROOT, ".github", "workflows"),
             os.path.join(ROOT, "docs", "how-to", "try-tvm-pull-request.yml")]
ZIZMOR = shutil.which("zizmor", path=os.path.dirname(sys.executable)) or shutil.which("zizmor")


def _audit(*paths: str) -> subprocess.CompletedProcess:
    if ZIZMOR is None:
        pytest.fail("zizmor is not installed: pip install -e '.[test]'")
    return subprocess.run([ZIZMOR, "--offline", *paths], capture_output=True, text=True,
                          timeout=120)


def test_the_workflows_are_clean():
    proc = _audit(*WORKFLOWS)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # a file it cannot parse is skipped with a warning, not a finding: that is a failure too
    assert "failed to parse" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    for name in ("try.yml", "nightly.yml", "try-tvm-pull-request.yml"):
        assert f"completed {name}" in proc.stderr or name in proc.stderr, proc.stderr[-2000:]


def test_the_audit_refuses_a_tag_pinned_action_and_a_kept_token(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    with open(os.path.join(ROOT, ".github", "workflows", "try.yml")) as handle:
        text = handle.read()
    seeded = text.replace("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
                          "actions/checkout@v4", 1).replace(
        "          persist-credentials: false\n", "", 1)
    assert seeded != text
    (folder / "try.yml").write_text(seeded)
    proc = _audit(str(folder))
    assert proc.returncode != 0
    assert "unpinned-uses" in proc.stdout and "artipacked" in proc.stdout


def test_the_try_workflow_calls_the_command_with_options_it_has():
    with open(os.path.join(ROOT, ".github", "workflows", "try.yml")) as handle:
        text = handle.read()
    called = re.search(r"python -m harness try (.+?)(?:\n\s*code=)", text, re.S).group(1)
    flags = set(re.findall(r"(--[a-z-]+)", called))
    help_text = subprocess.run([sys.executable, "-m", "harness", "try", "--help"],
                               capture_output=True, text=True, cwd=ROOT).stdout
    assert flags and all(flag in help_text for flag in flags), flags
    assert not re.search(r"^\s*pull_request_target\s*:", text, re.M)

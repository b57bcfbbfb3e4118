"""A catalog of your own: HARNESS_CASES / --cases adds cases and known issues to the
built-in ones, and the plugin's `catalog_case` fixture works in the user's own tests.

The throwaway project holds two models (one that passes, one that ConvertLayout
breaks) and a registry entry of its own for the second; its tests take the fixture
alone, and the documented case_result/invariant pair.
"""
import json
import os
import subprocess
import sys

import onnx
from helpers import ROOT

from harness.catalog import cases as catalog

CATALOG = """
[[case]]
id = "mine-conv"
source = "file:models/conv.onnx"

[[case]]
id = "mine-dropout-nhwc"
source = "file:models/dropout.onnx"
layout = "nhwc"
"""
REGISTRY = """
[[issue]]
id = "mine-convert-layout-dropout"
case = "mine-dropout-nhwc"
layout = "nhwc"
stage = "convert-layout"
verdict = "error"
reference = "ours: ConvertLayout on dropout"
"""
TESTS = """
from harness.pytest_plugin import assert_invariant


def test_each_of_my_models_is_collected(catalog_case):
    assert catalog_case.id.startswith("mine-")


def test_my_models_keep_the_invariants(case_result, invariant):
    result, command = case_result
    assert_invariant(result, invariant, command)
"""


def _project(tmp_path):
    cases = tmp_path / "cases"
    (cases / "models").mkdir(parents=True)
    onnx.save(catalog.resolve("Conv2d").model(), str(cases / "models" / "conv.onnx"))
    onnx.save(catalog.resolve("conv-dropout-nhwc").model(), str(cases / "models" / "dropout.onnx"))
    (cases / "catalog.toml").write_text(CATALOG)
    (cases / "known_issues.toml").write_text(REGISTRY)
    (tmp_path / "test_mine.py").write_text(TESTS)
    return cases


def test_a_users_catalog_adds_cases_and_known_issues_to_the_built_in_ones(tmp_path):
    cases = _project(tmp_path)
    env = dict(os.environ, PYTHONPATH=ROOT)
    listed = subprocess.run([sys.executable, "-m", "harness", "list", "--cases", str(cases)],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    ids = listed.stdout.split()
    assert {"mine-conv", "mine-dropout-nhwc", "yolov3-tiny"} <= set(ids), listed.stderr
    check = subprocess.run([sys.executable, "-m", "harness", "check", "mine-dropout-nhwc",
                            "--quiet", "--json", "--cases", str(cases)], cwd=ROOT,
                           capture_output=True, text=True, env=env, timeout=300)
    data = json.loads(check.stdout)
    assert check.returncode == 0 and data["status"] == "known", check.stdout + check.stderr
    assert [entry["entry"] for entry in data["known"]] == ["mine-convert-layout-dropout"]


def test_the_plugins_fixture_works_in_a_users_own_tests(tmp_path):
    cases = _project(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--harness-case", "mine-*", "-rx", "test_mine.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, HARNESS_CASES=str(cases), PYTHONPATH=ROOT))
    summary = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # 2 fixture-only items and 2 cases x 2 invariants: ConvertLayout's bug xfails both
    # items of mine-dropout-nhwc by our entry, AnnotateEntryFunc mine-conv's no-mutation
    # by the built-in one
    assert "3 passed" in summary and "3 xfailed" in summary, summary
    assert "ours: ConvertLayout on dropout" in proc.stdout


def test_a_registry_that_does_not_read_is_refused_before_any_work(tmp_path):
    """A registry file of a --cases folder that is not TOML is the folder's to fix: one line,
    exit 2, before the check runs (it once surfaced only when the check's result was
    judged, after the whole path)."""
    from helpers import cli_here
    (tmp_path / "known_issues").mkdir()
    (tmp_path / "known_issues" / "a.toml").write_text("[[issue]\n")
    code, out, err = cli_here("check", "conv-reshape-concat", "--cases", tmp_path)
    assert code == 2, (out, err)
    assert "a.toml is not valid TOML" in err and "import ..." not in err

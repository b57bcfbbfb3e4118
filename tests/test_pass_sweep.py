"""The pass sweep: every registered pass, found by reflection, guarded like a path.

One pytest item per pass: a small selection on one case in the default run; every
pass of the sweep's default selection over the whole default catalog in the
nightly (`-m ""`), where the names come from `passes --list` at collection.
"""
import json
import subprocess
import sys

import pytest

from helpers import ROOT, SMALL_CASE, cli

SEEDED_SWEEP = f"{ROOT}/tests/seeded_sweep.py"


# ConvertLayout: the seed bug's layout pass; RealizeVDevice once mutated its input
# (upstream #17205); FoldConstant runs a nested build; LegalizeOps makes the PrimFuncs.
DEFAULT_PASSES = ("ConvertLayout", "FoldConstant", "RealizeVDevice", "LegalizeOps")
PASSING = ("pass", "known", "rejected", "skipped")


def _nightly_selected(config) -> bool:
    return "not nightly" not in (config.getoption("markexpr") or "")


def _registered_passes() -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "harness", "passes", "--list", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    return [entry for entry in json.loads(proc.stdout)["passes"] if not entry["skipped"]]


def pytest_generate_tests(metafunc):
    if "swept_pass" not in metafunc.fixturenames:
        return
    params = [pytest.param(name, ("imported", "legalized", "fused"), [SMALL_CASE], id=name)
              for name in DEFAULT_PASSES]
    if _nightly_selected(metafunc.config):   # else deselected anyway: spare the listing
        from harness.catalog import cases as catalog
        every_case = [case.id for case in catalog.select_for_run(None)]
        params += [pytest.param(entry["pass"], tuple(entry["points"]), every_case,
                                id=f"catalog-{entry['pass']}", marks=pytest.mark.nightly)
                   for entry in _registered_passes()]
    metafunc.parametrize(("swept_pass", "points", "case_ids"), params)


def test_pass_keeps_both_invariants(swept_pass, points, case_ids):
    """The pass leaves its input alone, its output round-trips, two runs agree: on every
    case and point; a registered issue is an xfail, decided by the registry."""
    from harness.catalog import cases as catalog
    from harness.cli.passes import row_of
    from harness.process.isolate import run_isolated
    from harness.tvmapi.pipelines import Options
    rows = []
    for case in map(catalog.resolve, case_ids):
        for point in points:
            options = Options(layout=case.layout, path="pass", sweep_pass=swept_pass,
                              sweep_point=point)
            rows.append(row_of(swept_pass, case.id, point, run_isolated(case.id, options)))
    failing = [row for row in rows if row["verdict"] not in PASSING]
    assert not failing, "\n".join(
        f"{row['case']} @ {row['point']}: {row['verdict']}: {row['detail']}\n  reproduce: "
        f"python -m harness passes {row['case']} --pass {swept_pass} --point {row['point']}"
        for row in failing)
    assert any(row["verdict"] in ("pass", "known") for row in rows), rows   # something ran
    known = [row["detail"] for row in rows if row["verdict"] == "known"]
    if known:
        pytest.xfail(known[0])


def _rows(*args):
    code, out, err = cli("passes", *args, "--json")
    assert out.strip(), err
    return code, json.loads(out)["rows"], err


def test_seeded_passes_registered_under_test_names_are_swept_and_caught():
    # One sweep for three concerns (each CLI call imports TVM): the seeded passes, a TIR
    # pass (run from legalized on) and a pass that needs arguments (skipped, with why).
    code, rows, err = _rows(SMALL_CASE, "--register", SEEDED_SWEEP, "--pass", "HarnessSeeded*",
                            "--pass", "*.LowerInitBlock", "--pass", "Gradient")
    assert code == 1, err
    verdicts = {(row["pass"], row["point"]): row["verdict"] for row in rows}
    for point in ("imported", "legalized", "fused"):
        assert verdicts["HarnessSeededMutator", point] == "mutated"
        # only the second run on the same input sees hidden state
        assert verdicts["HarnessSeededHiddenState", point] == "nondeterministic"
        assert verdicts["HarnessSeededRespanner", point] == "mutated"
    assert any("harness_seeded" in row["detail"] for row in rows)   # the access path
    assert sorted((row["point"], row["verdict"]) for row in rows
                  if row["pass"].endswith(".LowerInitBlock")) == [
        ("fused", "pass"), ("legalized", "pass")]
    (gradient,) = [row for row in rows if row["pass"] == "Gradient"]
    assert gradient["verdict"] == "skipped" and "func_name" in gradient["detail"]


@pytest.mark.in_process_tvm
def test_a_span_only_edit_of_the_passs_input_is_seen_by_its_json_check_alone():
    """Past the imported point the pass's input is not the source, so the source's JSON
    check cannot see it; with the per-pass guard off, only the input's JSON text can."""
    from helpers import run_in_process
    result = run_in_process(path="pass", sweep_pass="HarnessSeededRespanner",
                            sweep_point="legalized", sweep_register=SEEDED_SWEEP,
                            pass_guard=False)
    assert [(v.kind, v.path) for v in result.violations] == [
        ("mutated", "(outside structural equality)")], result.violations
    assert "JSON text" in result.violations[0].detail


def test_the_default_selection_is_every_relax_pass_and_the_tir_passes_compile_runs():
    code, out, err = cli("passes", "--list", "--json")
    assert code == 0, err
    listed = {entry["pass"]: entry for entry in json.loads(out)["passes"]}
    tir = [entry for entry in listed.values() if entry["family"] == "tir"]
    assert len(tir) >= 20 and all(entry["on_compile_pipeline"] for entry in tir), tir[:3]
    assert all(entry["points"] == ["legalized", "fused"] for entry in tir)
    assert {"FoldConstant", "ConvertLayout"} <= set(listed)


def test_an_interrupted_sweep_resumes_from_its_rows_journal(tmp_path):
    args = (SMALL_CASE, "--pass", "Normalize", "--point", "imported", "--out", str(tmp_path))
    code, rows, err = _rows(*args)
    assert code == 0 and [row["verdict"] for row in rows] == ["pass"], rows
    code, resumed, err = _rows(*args, "--resume")   # nothing left to decide
    assert "1 already done" in err and "passes: 0 checks" in err, err
    assert resumed == rows


def test_an_unknown_pass_glob_is_bad_input():
    code, _, err = cli("passes", SMALL_CASE, "--pass", "NoSuchPass*")
    assert code == 2 and "no registered pass matches" in err


def test_a_registered_issue_gone_stale_is_a_failing_row_not_a_crash(tmp_path, monkeypatch):
    """A strict entry in scope that explains nothing (no violation at all) once made the
    sweep's row builder index an empty list."""
    from harness.catalog import known_issues
    from harness.cli import passes
    from harness.verdict import Result
    registry = tmp_path / "known_issues.toml"
    registry.write_text('[[issue]]\ncase = "node-split*"\nverdict = "error"\n'
                        'reference = "gone upstream"\n')
    entries = known_issues.registry(str(registry))
    monkeypatch.setattr(known_issues, "registry", lambda: entries)
    result = Result("node-split_zero_size_splits_opset18", options={"path": "pass"},
                    tvm_version="0.27.0.post1", tvm_ffi_version="0.1.14.post1")
    row = passes.row_of("Normalize", result.case, "imported", result)
    assert row["verdict"] == "stale" and "gone upstream" in row["detail"]
    assert "stale" in passes.FAILING

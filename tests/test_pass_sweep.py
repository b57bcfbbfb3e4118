"""The pass sweep: every registered relax pass, found by reflection, guarded like a path."""
import json

import pytest

from helpers import ROOT, SMALL_CASE, cli

SEEDED_SWEEP = f"{ROOT}/tests/seeded_sweep.py"


def _rows(*args):
    code, out, err = cli("passes", *args, "--json")
    assert out.strip(), err
    return code, json.loads(out)["rows"], err


def test_seeded_passes_registered_under_test_names_are_swept_and_caught():
    code, rows, err = _rows(SMALL_CASE, "--register", SEEDED_SWEEP, "--pass", "HarnessSeeded*")
    assert code == 1, err
    verdicts = {(row["pass"], row["point"]): row["verdict"] for row in rows}
    for point in ("imported", "legalized", "fused"):
        assert verdicts["HarnessSeededMutator", point] == "mutated"
        # only the second run on the same input sees hidden state
        assert verdicts["HarnessSeededHiddenState", point] == "nondeterministic"
    assert any("harness_seeded" in row["detail"] for row in rows)   # the access path


def test_a_selection_of_real_passes_keeps_both_invariants():
    # ConvertLayout: the seed bug's layout pass; RealizeVDevice once mutated its input
    # (upstream #17205); FoldConstant runs a nested build.
    code, rows, err = _rows(SMALL_CASE, "--pass", "FoldConstant", "--pass", "ConvertLayout",
                            "--pass", "RealizeVDevice")
    assert code == 0, [row for row in rows if row["verdict"] not in ("pass", "known")]
    assert {row["pass"] for row in rows} == {"FoldConstant", "ConvertLayout", "RealizeVDevice"}
    assert len(rows) == 3 * 3


def test_passes_that_need_arguments_are_listed_skipped_with_the_reason():
    code, rows, _ = _rows(SMALL_CASE, "--pass", "Gradient", "--pass", "Normalize",
                          "--point", "imported")
    skipped = [row for row in rows if row["verdict"] == "skipped"]
    assert [row["pass"] for row in skipped] == ["Gradient"]
    assert "func_name" in skipped[0]["detail"]


def test_an_unknown_pass_glob_is_bad_input():
    code, _, err = cli("passes", SMALL_CASE, "--pass", "NoSuchPass*")
    assert code == 2 and "no registered relax.transform pass matches" in err


@pytest.mark.nightly
def test_every_pass_on_the_default_catalog():
    code, rows, err = _rows()
    assert code == 0, [row for row in rows if row["verdict"] not in
                       ("pass", "known", "rejected", "skipped")][:10]


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

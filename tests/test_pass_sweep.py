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

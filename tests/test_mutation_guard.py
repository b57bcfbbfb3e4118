"""Invariant 1 bites: a pass that mutates its input in place is caught, with the stage."""
import pytest

import seeded
from harness.tvmapi import compat
from harness.oracles.fingerprint import Fingerprint
from helpers import SMALL_CASE, cli_json, run_in_process
from helpers import seeded as seeded_spec

pytestmark = pytest.mark.in_process_tvm


def _kinds(result):
    return [(v.kind, v.stage) for v in result.violations]


def test_clean_path_passes_with_tasks():
    result = run_in_process()
    assert result.verdict == "pass", result.violations
    assert result.tasks > 0
    assert [s.name for s in result.stages][0] == "import"
    assert not any(s.mutated_source for s in result.stages)


@pytest.mark.parametrize("spec", ["mutate_in_place", "mutating_pass"])
def test_mutating_pass_is_caught_with_its_stage(spec):
    result = run_in_process(inject_pass=seeded_spec(spec))
    assert result.verdict == "mutated"
    assert ("mutated", "injected") in _kinds(result)
    violation = next(v for v in result.violations if v.kind == "mutated")
    assert "attrs" in violation.path, violation.path  # the first mismatching access path


def test_mutation_of_the_source_itself_is_blamed_on_that_stage():
    result = run_in_process(inject_pass=seeded_spec("mutate_in_place"),
                            inject_before="decompose-ops-for-inference")
    flagged = [s.name for s in result.stages if s.mutated_source]
    assert flagged == ["injected"], flagged
    assert result.verdict == "mutated"


def test_pass_returning_a_fresh_module_is_not_flagged():
    result = run_in_process(inject_pass=seeded_spec("fresh_module"),
                            inject_before="decompose-ops-for-inference")
    assert result.verdict == "pass", result.violations


def test_fingerprint_sees_in_place_rebinding():
    mod = compat.from_onnx(__import__("harness.catalog", fromlist=["x"]).resolve(SMALL_CASE).model())
    fp = Fingerprint.of(mod, with_json=True)
    assert fp.changed_path(mod) is None
    seeded.mutate_in_place(mod)
    path = fp.changed_path(mod)
    assert path is not None and "attrs" in path


def test_cli_reports_mutated_and_exits_1():
    code, data, _ = cli_json("check", SMALL_CASE, "--inject-pass", seeded_spec("mutate_in_place"))
    assert code == 1
    assert data["verdict"] == "mutated"
    assert any(v["kind"] == "mutated" and v["stage"] == "injected" for v in data["violations"])
    assert set(data) >= {"verdict", "tasks", "stages", "violations", "tvm_version",
                         "tvm_ffi_version", "case"}
    assert all(set(s) == {"name", "seconds", "mutated_source"} for s in data["stages"])

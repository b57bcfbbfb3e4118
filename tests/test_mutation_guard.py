"""Invariant 1 bites: a pass that mutates its input in place is caught and named.

Each seeded pass (tests/seeded.py) breaks the invariant in a way only one guard
sees: a mutator hidden inside a Sequential (only the per-pass guard), a span-only
rebinding (only the identity map / JSON text, not the structural hash).
"""
import pytest
import seeded
from helpers import SMALL_CASE, cli_json, run_in_process
from helpers import seeded as seeded_spec

from harness.catalog import cases as catalog
from harness.oracles.fingerprint import Fingerprint
from harness.tvmapi import calls, structure

pytestmark = pytest.mark.in_process_tvm


def _mutations(result):
    return [v for v in result.violations if v.kind == "mutated"]


def test_clean_path_passes_with_tasks_and_records_every_pass():
    result = run_in_process()
    assert result.verdict == "pass", result.violations
    assert result.outcome_count > 0
    assert [s.name for s in result.stages][0] == "import"
    assert not any(s.mutated_source for s in result.stages)
    zero = [p for p in result.passes if p.stage == "zero-pipeline"]
    assert len(zero) >= 10 and [p.index for p in zero] == list(range(1, len(zero) + 1))
    assert {"LegalizeOps", "FuseOps", "FuseTIR"} <= {p.name for p in zero}
    assert not any(p.mutated_input for p in result.passes)


@pytest.mark.parametrize("spec", ["mutate_in_place", "mutating_pass"])
def test_mutating_pass_is_caught_with_its_stage_and_path(spec):
    result = run_in_process(inject_pass=seeded_spec(spec))
    assert result.verdict == "mutated"
    (violation,) = _mutations(result)
    assert violation.stage == "injected"
    assert "attrs" in violation.access_path, violation.access_path  # the first mismatch


def test_source_copies_made_after_the_path_are_of_the_source_as_it_is_then():
    """With `stop` (the fuzzer's) the source's copies are made after the path ran. A stage
    that changed the source (the injected stage takes it on the compile path) left the
    text the run began with stale: a copy loaded from it "lost" the mutation, a lossy round
    trip of TVM's that never happened (the json copier's, until 2026-12-06)."""
    from harness.options import Options
    from harness.result import Result
    from harness.runner.path_runner import PathRunner
    runner = PathRunner(Options(path="compile", inject_pass=seeded_spec("mutating_pass")),
                        stop=lambda result: False)
    result = runner.run_model(catalog.resolve(SMALL_CASE).model(), Result(SMALL_CASE))
    assert result.verdict == "mutated", result.violations
    assert {v.kind for v in result.violations} == {"mutated"}, result.violations
    assert {c.name for c in result.copiers if c.verdict == "pass"} >= {"deepcopy", "json"}


def test_mutator_hidden_in_a_sequential_is_named():
    """Its input is an intermediate module no stage-level fingerprint sees."""
    result = run_in_process(inject_pass=seeded_spec("hidden_mutator"))
    assert result.verdict == "mutated", result.violations
    (violation,) = _mutations(result)
    assert (violation.stage, violation.pass_name) == ("injected", "SeededMutatingPass")
    assert violation.pass_index == 3   # after the Sequential itself and the first Normalize
    assert result.outcome_count > 0            # the path went on after the finding


def test_a_mutation_in_a_passs_own_body_is_blamed_on_it_not_on_the_pass_it_nests():
    """The watched modules are looked at as a nested pass begins too: a change already
    there was made by the enclosing pass. Seen only at pass ends, it was blamed on the
    nested Normalize, which ends first (the sweep named tirx.ConvertSSA for
    tirx.SplitHostDevice's in-place update on scheduled GPU TIR)."""
    result = run_in_process(inject_pass=seeded_spec("mutates_then_nests"))
    assert result.verdict == "mutated", result.violations
    assert {v.pass_name for v in _mutations(result)} == {"SeededMutatesThenNests"}, \
        result.violations


def test_every_pass_that_mutates_in_one_stage_is_named():
    """One violation per mutating pass, not per stage: each is judged by the registry on
    its own, so a registered bug earlier in a stage cannot hide a new one after it."""
    result = run_in_process(inject_pass=seeded_spec("two_mutators"))
    assert {v.pass_name for v in _mutations(result)} == {
        "SeededMutatingPass", "SeededMutatesThenNests"}, result.violations


def test_global_infos_updated_in_place_are_named():
    """No function rebound and the module is an intermediate of a Sequential (no stage
    fingerprint sees it). The guard holds each piece it was handed, so UpdateGlobalInfo
    copies the map it would have edited, and the module's identity map names the pass."""
    result = run_in_process(inject_pass=seeded_spec("hidden_global_info"))
    (violation,) = _mutations(result)
    assert (violation.stage, violation.pass_name) == ("injected", "SeededGlobalInfoPass")
    assert "(global infos) replaced in place" in violation.detail, violation.detail


@pytest.mark.parametrize("spec, where", [("hidden_weight_write", "(pass input)"),
                                         ("weight_write_pass", "source")])
def test_a_deep_write_is_seen_at_the_stage_end_and_named_by_the_replay(spec, where):
    """A weight's bytes written through the tensor: no rebinding, no copy-on-write, so no
    identity map sees it; only a deep hash does. The guard hashes each piece once when
    first handed it and again at the stage's end, then replays the stage under the eager
    per-pass check to name the pass. Hidden in a pipeline on a fresh copy, nothing else
    sees it; on a weight shared with the source, the source's fingerprint sees it too."""
    result = run_in_process(inject_pass=seeded_spec(spec))
    (violation,) = _mutations(result)
    assert (violation.stage, violation.pass_name) == ("injected", "SeededWeightWritePass")
    assert where in violation.access_path + violation.detail, violation
    (record,) = [p for p in result.passes if p.mutated_input]
    assert (record.name, record.index) == ("SeededWeightWritePass", violation.pass_index)


@pytest.mark.parametrize("before", ["extract-tasks", "decompose-ops-for-inference"])
def test_span_only_mutation_is_caught_and_named(before):
    """Structural hash unchanged, JSON text changed: the stage guard alone misses it."""
    mod = calls.from_onnx(catalog.resolve(SMALL_CASE).model())
    fingerprint = Fingerprint.of(mod, with_json=True)
    seeded.respan_in_place(mod)
    assert not fingerprint.hash_changed(mod)          # invisible to the structural hash
    result = run_in_process(inject_pass=seeded_spec("span_pass"), inject_before=before)
    assert result.verdict == "mutated", result.violations
    (violation,) = _mutations(result)
    assert (violation.stage, violation.pass_name) == ("injected", "SeededSpanPass")


def test_a_deep_span_write_is_seen_by_the_source_json_check_alone():
    """A span written through a field setter deep inside the source's `main`: no identity
    map and no structural hash (the per-pass guard's, the stage guard's) moves. The
    source's JSON text, taken again at the end of the path, is the one check that sees
    it (the serialization it costs is kept for this), and its replay names the pass."""
    mod = calls.from_onnx(catalog.resolve(SMALL_CASE).model())
    fingerprint = Fingerprint.of(mod, with_json=True)
    identity = structure.module_identity(mod)
    seeded.respan_a_call_through_its_field(mod)
    assert not fingerprint.hash_changed(mod)
    assert not structure.identity_changes(identity, structure.module_identity(mod))
    assert fingerprint.changed_path(mod) is not None
    result = run_in_process(inject_pass=seeded_spec("deep_span_pass"),
                            inject_before="decompose-ops-for-inference")
    (violation,) = _mutations(result)
    assert (violation.stage, violation.pass_name) == ("injected", "SeededDeepSpanPass")
    assert "outside structural equality" in violation.detail, violation


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


def test_tvm_exception_in_a_pass_is_an_error_naming_the_pass():
    result = run_in_process(inject_pass=seeded_spec("raise_value_error"))
    assert result.verdict == "error"
    (violation,) = result.violations
    assert violation.stage == "injected" and violation.pass_name == "injected"
    assert violation.detail == "ValueError: seeded failure inside a pass"


def test_fingerprint_sees_in_place_rebinding():
    mod = calls.from_onnx(catalog.resolve(SMALL_CASE).model())
    fp = Fingerprint.of(mod, with_json=True)
    assert fp.changed_path(mod) is None
    seeded.mutate_in_place(mod)
    path = fp.changed_path(mod)
    assert path is not None and "attrs" in path


def test_cli_reports_mutated_with_the_pass_and_exits_1():
    code, data, _ = cli_json("check", SMALL_CASE, "--inject-pass", seeded_spec("hidden_mutator"))
    assert code == 1
    assert data["verdict"] == "mutated"
    assert any(v["kind"] == "mutated" and v["pass"] == "SeededMutatingPass"
               for v in data["violations"])
    assert set(data) >= {"verdict", "outcome_count", "stages", "violations", "passes", "copiers",
                         "tvm_version", "tvm_ffi_version", "case"}
    assert all(set(p) == {"stage", "name", "index", "seconds", "mutated_input", "raised"}
               for p in data["passes"])
    assert any(p["name"] == "SeededMutatingPass" for p in data["passes"])


def test_check_shows_each_violation_as_it_happens():
    """The README's first command prints progress, a violation included (no --quiet, no
    --json): each line from the violation event, as the final report names it."""
    from helpers import cli_here
    code, out, err = cli_here("check", SMALL_CASE, "--inject-pass",
                              seeded_spec("hidden_mutator"))
    assert code == 1, err
    assert f"[{SMALL_CASE}] ! mutated at stage " in err and "SeededMutatingPass" in err
    assert "internal error" not in err
    # the text says what --json says: this violation is new (no registry entry), exit 1
    assert "\n  new: mutated at stage " in out and "no registry entry explains it" in out, out

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


def _nightly_selected(config) -> bool:
    return "not nightly" not in (config.getoption("markexpr") or "")


def _registered_passes() -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "harness", "passes", "--list", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode:   # a collection error that says why, not a CalledProcessError
        raise RuntimeError(f"`python -m harness passes --list` exited {proc.returncode}:\n"
                           f"{proc.stderr[-3000:]}")
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
    from harness.cli.sweep_rows import row_of
    from harness.options import Options
    from harness.process.isolate import run_isolated
    from harness.runner import sweep_input
    rows = []
    for case in map(catalog.resolve, case_ids):
        for point in points:
            options = Options(layout=case.layout, path="pass", sweep_pass=swept_pass,
                              sweep_point=point)
            inputs = []   # the input's TIR facts, which a refusal is read against
            result = run_isolated(case.id, options, on_event=lambda event, kept=inputs: (
                kept.append(event) if event["event"] == sweep_input.EVENT else None))
            facts = inputs[0].get("facts") if inputs else None
            rows.append(row_of(swept_pass, case.id, point, result, facts))
    failing = [row for row in rows if row["failing"]]
    assert not failing, "\n".join(
        f"{row['case']} @ {row['point']}: {row['verdict']}: {row['detail']}\n  reproduce: "
        f"python -m harness passes {row['case']} --pass {swept_pass} --point {row['point']}"
        for row in failing)
    if not any(row["verdict"] in ("pass", "known") for row in rows):
        # e.g. a pass every input of which is refused by rule or not reached
        pytest.skip("no case and point could run the pass: "
                    + "; ".join(sorted({row["detail"] for row in rows}))[:300])
    known = [row["detail"] for row in rows if row["verdict"] == "known"]
    if known:
        pytest.xfail(known[0])


def _rows(*args):
    code, out, err = cli("passes", *args, "--json")
    assert out.strip(), err
    return code, json.loads(out)["rows"], err


def test_seeded_passes_registered_under_test_names_are_swept_and_caught():
    # One sweep for five concerns (each CLI call imports TVM): the seeded passes, a TIR
    # pass (run from legalized on, and where tvm.compile hands it its input), one leaving a
    # free variable, a refusal read by rule, and a pass that needs arguments (skipped).
    code, rows, err = _rows(SMALL_CASE, "--register", SEEDED_SWEEP, "--pass", "HarnessSeeded*",
                            "--pass", "*.LowerInitBlock", "--pass", "s_tir.HoistExpression",
                            "--pass", "tirx.FlattenBuffer", "--pass", "Gradient")
    assert code == 1, err
    verdicts = {(row["pass"], row["point"]): row["verdict"] for row in rows}
    for point in ("imported", "legalized", "fused"):
        assert verdicts["HarnessSeededMutator", point] == "mutated"
        # only the second run on the same input sees hidden state
        assert verdicts["HarnessSeededHiddenState", point] == "nondeterministic"
        assert verdicts["HarnessSeededRespanner", point] == "mutated"
        # TVM failing on the pass's output, after the pass: a failing row, not "skipped"
        assert verdicts["HarnessSeededUnserializable", point] == "error"
        # a refusal of an input of its phase (a relax pass's: any module) is a finding;
        # read as a precondition before refusals were read by rule
        assert verdicts["HarnessSeededRefusal", point] == "error"
    assert all(row["failing"] for row in rows if row["pass"] == "HarnessSeededUnserializable")
    assert all(row["failing"] for row in rows if row["pass"] == "HarnessSeededRefusal")
    assert any("harness_seeded" in row["detail"] for row in rows)   # the access path
    assert sorted((row["point"], row["verdict"]) for row in rows
                  if row["pass"].endswith(".LowerInitBlock")) == [
        ("compiled", "pass"), ("fused", "pass"), ("legalized", "pass")]
    # FlattenBuffer refuses TIR with blocks by an internal check: a precondition, by the
    # phase rule (tvm.compile hands it TIR without blocks); on its own input it runs
    flatten = {row["point"]: row for row in rows if row["pass"] == "tirx.FlattenBuffer"}
    assert flatten["compiled"]["verdict"] == "pass", flatten
    for point in ("legalized", "fused"):
        assert flatten[point]["verdict"] == "rejected" and not flatten[point]["failing"]
        assert flatten[point]["detail"].startswith("precondition (phase: ") \
            and "no-blocks" in flatten[point]["detail"], flatten[point]
    # its output holds a free variable (a block iterator hoisted out of its block): a copy
    # has its own, matched by position, not a lossy round trip
    assert {row["verdict"] for row in rows if row["pass"] == "s_tir.HoistExpression"} == {
        "pass"}, rows
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
    assert [(v.kind, v.access_path) for v in result.violations] == [
        ("mutated", "(outside structural equality)")], result.violations
    assert "JSON text" in result.violations[0].detail


def test_the_default_selection_is_every_relax_pass_and_the_tir_passes_compile_runs():
    code, out, err = cli("passes", "--list", "--json")
    assert code == 0, err
    listed = {entry["pass"]: entry for entry in json.loads(out)["passes"]}
    tir = [entry for entry in listed.values() if entry["family"] == "tir"]
    # every TIR pass the default selects is on tvm.compile's pipeline: its input there too
    assert all(entry["points"] == ["legalized", "fused", "compiled"] for entry in tir)
    # the recorded compile decides: passes every CPU build runs are in, profiling and
    # off-pipeline rewrites are not (though --pass reaches them)
    assert {"FoldConstant", "ConvertLayout", "tirx.ConvertSSA", "tirx.MakePackedAPI",
            "s_tir.LowerInitBlock",
            "tirx.ForceNarrowIndexToInt32"} <= set(listed)   # its PassInfo: NarrowDataType
    assert not {"s_tir.InstrumentProfileIntrinsics", "s_tir.HoistExpression"} & set(listed)


@pytest.mark.nightly   # 14 s; the journal's resume is also tested through report (default run)
def test_a_sweep_cut_short_resumes_from_its_rows_journal(tmp_path):
    common = (SMALL_CASE, "--point", "imported", "--out", str(tmp_path))
    code, rows, err = _rows(*common, "--pass", "Normalize")
    assert code == 0 and [row["verdict"] for row in rows] == ["pass"], rows
    with open(tmp_path / "passes-rows.jsonl", "a") as journal:   # killed mid-write
        journal.write('{"stack": {"tvm_version": "0.2')
    code, resumed, err = _rows(*common, "--pass", "Normalize", "--pass", "FoldConstant",
                               "--resume")
    assert "1 already done" in err and "passes: 1 checks" in err, err
    assert [row["pass"] for row in resumed] == ["Normalize", "FoldConstant"]
    assert resumed[0] == rows[0]


def test_a_journal_keeps_only_the_rows_of_the_stack_it_resumes_on(tmp_path):
    """Rows measured on another TVM, target or --register file are run again."""
    from harness.cli.journal import Journal
    key = lambda row: row["id"]  # noqa: E731
    with Journal(str(tmp_path), "passes", False, key, {"target": "llvm"}) as journal:
        journal.append({"id": 1})
    assert Journal(str(tmp_path), "passes", True, key, {"target": "llvm"}).done == {
        1: {"id": 1}}
    assert Journal(str(tmp_path), "passes", True, key, {"target": "other"}).done == {}
    assert Journal(str(tmp_path), "report", True, key, {"target": "llvm"}).done == {}
    # a line a kill cut short is dropped, and the next row is not glued to it
    with open(tmp_path / "passes-rows.jsonl", "a") as handle:
        handle.write('{"stack": {"target": "ll')
    with Journal(str(tmp_path), "passes", True, key, {"target": "llvm"}) as journal:
        journal.append({"id": 2})
    assert Journal(str(tmp_path), "passes", True, key, {"target": "llvm"}).done == {
        1: {"id": 1}, 2: {"id": 2}}


def test_an_unknown_pass_glob_is_bad_input():
    code, _, err = cli("passes", SMALL_CASE, "--pass", "NoSuchPass*")
    assert code == 2 and "no registered pass matches" in err


def test_a_registered_issue_gone_stale_is_a_failing_row_not_a_crash(tmp_path, monkeypatch):
    """A strict entry in scope that explains nothing (no violation at all) once made the
    sweep's row builder index an empty list."""
    from harness.catalog import known_issues
    from harness.cli import sweep_rows
    from harness.result import Result
    registry = tmp_path / "known_issues.toml"
    registry.write_text('[[issue]]\ncase = "node-split*"\nverdict = "error"\n'
                        'reference = "gone upstream"\n')
    entries = known_issues.read(str(registry))
    monkeypatch.setattr(known_issues, "registry", lambda: entries)
    result = Result("node-split_zero_size_splits_opset18", options={"path": "pass"},
                    tvm_version="0.27.0.post1", tvm_ffi_version="0.1.14.post1")
    row = sweep_rows.row_of("Normalize", result.case, "imported", result)
    assert row["verdict"] == "stale" and "gone upstream" in row["detail"]
    assert row["failing"] and "stale" in sweep_rows.FAILING


def _row_for(*violations, swept="Normalize", facts=None):
    from harness.cli import sweep_rows
    from harness.result import Result
    result = Result(SMALL_CASE, options={"path": "pass", "layout": "nchw"},
                    tvm_version="0.27.0.post1", tvm_ffi_version="0.1.14.post1")
    for violation in violations:
        result.add(violation)
    return sweep_rows.row_of(swept, SMALL_CASE, "fused", result, facts)


def test_a_rows_verdict_comes_from_where_the_violation_was_seen():
    """Typed phases, not stage-name suffixes: each of these once became a passing row."""
    from harness.verdict import Violation
    refused = Violation("error", "pass:Normalize", "(exception)", "TVMError: no", "Normalize", 1)
    in_checks = Violation("error", "pass:Normalize", "(exception)", "TypeError: no json",
                          phase="checks")
    prefix = Violation("error", "zero-pipeline", "(exception)", "ValueError: x", "FuseOps", 9)
    bug = Violation("harness-error", "pass:Normalize", "(harness)", "KeyError: x")
    # a relax pass refusing a module: no rule makes it a precondition
    assert (_row_for(refused)["verdict"], _row_for(refused)["failing"]) == ("error", True)
    assert (_row_for(prefix)["verdict"], _row_for(prefix)["failing"]) == ("skipped", False)
    assert (_row_for(in_checks)["verdict"], _row_for(in_checks)["failing"]) == ("error", True)
    row = _row_for(refused, bug)      # a harness error after a refusal is still ours
    assert (row["verdict"], row["failing"], row["exit"]) == ("harness-error", True, 4)
    # a lowering pass refusing TIR with blocks: a precondition by the phase rule
    flatten = Violation("error", "pass:tirx.FlattenBuffer", "(exception)", "InternalError: x",
                        "tirx.FlattenBuffer", 1)
    lowered = _row_for(flatten, swept="tirx.FlattenBuffer", facts=[])
    assert (lowered["verdict"], lowered["failing"]) == ("rejected", False), lowered
    assert "no-blocks" in lowered["detail"]
    # the same refusal of an input that has every fact its pipeline input has: a finding
    every = ["target-bound", "no-init-blocks", "opaque-blocks", "no-blocks", "packed-api"]
    assert _row_for(flatten, swept="tirx.FlattenBuffer", facts=every)["verdict"] == "error"


@pytest.mark.in_process_tvm
def test_tvm_failing_the_recording_compile_is_a_violation_not_our_bug(monkeypatch, capsys):
    """The default selection records the passes of a real compile; when TVM cannot make
    it, that is TVM's failure (exit 1) with the way out, not an internal error."""
    from harness.cli.main import main
    from harness.tvmapi import calls, copiers, targets
    from harness.tvmapi import passes as registry
    monkeypatch.setattr(targets, "_PROBED", {})    # the seed's failure stays in this test
    monkeypatch.setattr(calls, "compile_module",   # a genuine TVM exception
                        lambda mod, target: copiers.load_json("{not json"))
    registry.compile_phases.cache_clear()
    try:
        assert main(["passes", "--list"]) == 1
    finally:
        registry.compile_phases.cache_clear()
    err = capsys.readouterr().err
    assert "tvm.compile failed on a one-conv module" in err and "--pass GLOB" in err, err

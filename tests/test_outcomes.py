"""One outcome table: every verdict, registry reading and sweep row is a member of
verdict.Outcome, which says whether it fails and its exit code; known/new/stale is
decided by verdict.reading alone, and kinds, phases and signals are data, never read
back out of text. No TVM: results and rows are built by hand."""
import json

import pytest

from harness.catalog.known_issues import Judgement, SuiteJudgement
from harness.cli import report, sweep_rows
from harness.pages import matrix_page
from harness.process import death
from harness.result import Result
from harness.signature import text_of
from harness.suite import file_run, summary
from harness.verdict import (
    EXIT_CANNOT_TEST,
    EXIT_INTERNAL,
    EXIT_PASS,
    EXIT_VIOLATED,
    READING,
    ROW,
    ROW_VERDICTS,
    RUN,
    STATUSES,
    SUITE,
    VERDICTS,
    Outcome,
    UnknownVerdict,
    Violation,
    exit_code,
    reading,
)
from harness.versions import bisect


def test_failing_members_exit_non_zero_and_the_rest_zero_but_unsupported():
    for outcome in Outcome:
        if outcome == Outcome.HARNESS_ERROR:
            assert (outcome.failing, outcome.exit) == (True, EXIT_INTERNAL)
        elif outcome == Outcome.UNSUPPORTED:   # git bisect run: skip this revision
            assert (outcome.failing, outcome.exit) == (False, EXIT_CANNOT_TEST)
        else:
            assert outcome.exit == (EXIT_VIOLATED if outcome.failing else EXIT_PASS), outcome
        assert outcome.meaning and outcome.family in (RUN, READING, SUITE, ROW)


def test_a_member_is_its_own_name_in_json():
    assert Outcome.PASS == "pass" and Outcome.of("lossy-roundtrip") is Outcome.LOSSY_ROUNDTRIP
    assert json.dumps([Outcome.HARNESS_ERROR]) == '["harness-error"]'
    assert VERDICTS == tuple(o for o in Outcome if o.family == RUN)
    assert VERDICTS[0] == Outcome.HARNESS_ERROR and VERDICTS[-1] == Outcome.PASS
    assert set(STATUSES) <= set(Outcome) and set(ROW_VERDICTS) <= set(Outcome)
    assert Outcome.UNSUPPORTED not in ROW_VERDICTS and Outcome.NEW not in ROW_VERDICTS


@pytest.mark.parametrize("name", ["passed", "PASS", "", "ok"])
def test_an_unknown_name_is_a_harness_bug_never_a_pass(name):
    with pytest.raises(UnknownVerdict):
        Outcome.of(name)


def test_a_name_of_another_family_is_refused_where_it_does_not_belong():
    assert Outcome.MUTATED not in STATUSES   # a run's verdict, not a registry reading
    with pytest.raises(UnknownVerdict):
        exit_code("known")             # a reading, not a run's verdict
    with pytest.raises(UnknownVerdict):
        Violation("pass", "s", "(p)", "a pass is not a violation")
    with pytest.raises(UnknownVerdict):
        Violation("error", "s", "(p)", "d", phase="stage-ish")
    with pytest.raises(UnknownVerdict):
        sweep_rows.make_row("Normalize", "conv", "fused", Outcome.UNSUPPORTED, "not a row's")


@pytest.mark.parametrize("verdict, unknown, stale, known, expected", [
    ("harness-error", True, True, True, Outcome.HARNESS_ERROR),   # stands over everything
    ("unsupported", True, True, True, Outcome.UNSUPPORTED),
    ("mutated", True, True, True, Outcome.NEW),                   # then anything unexplained
    ("crash", False, True, True, Outcome.STALE),                  # then a registered one gone
    ("mutated", False, False, True, Outcome.KNOWN),
    ("pass", False, False, False, Outcome.PASS),
    ("pass", False, True, False, Outcome.STALE),
])
def test_reading_decides_known_new_and_stale_once(verdict, unknown, stale, known, expected):
    assert reading(verdict, unknown, stale, known) is expected


def test_a_result_and_a_suite_are_read_by_the_same_function():
    crash = Violation("crash", "zero-pipeline", "(process)", "SIGSEGV", signal="SIGSEGV")
    assert Judgement([], [crash], [], Outcome.CRASH).status is Outcome.NEW
    assert Judgement([], [], [], "unsupported").exit_code == EXIT_CANNOT_TEST
    assert not Judgement([(crash, None)], [], [], "crash").failing
    assert SuiteJudgement([], [], ["entry"], []).status is Outcome.STALE
    assert SuiteJudgement([], [("t", crash)], [], [("t", crash)]).exit_code == EXIT_INTERNAL
    assert Judgement([], [], [], "pass").to_json()["status"] == "pass"


def test_a_suite_findings_status_is_its_reading():
    def line(test, kind):
        return {"test": test, "violations": [Violation(kind, "suite", "(p)", "d").to_json()]}
    found = summary.summarize([line("t.py::a", "mutated"), line("t.py::b", "unsupported"),
                               line("t.py::c", "harness-error")])
    assert [f["status"] for f in found["findings"]] == ["harness-error", "new", "unsupported"]
    assert (found["status"], found["exit"]) == ("harness-error", EXIT_INTERNAL)


@pytest.mark.parametrize("verdict", ROW_VERDICTS)
def test_a_sweep_rows_failing_and_exit_are_its_members(verdict):
    row = sweep_rows.make_row("Normalize", "conv", "fused", verdict, "detail")
    assert (row["failing"], row["exit"]) == (verdict.failing, verdict.exit)
    assert type(row["verdict"]) is str and row["verdict"] == verdict   # plain JSON text
    assert (verdict in sweep_rows.FAILING) == verdict.failing


def test_an_old_crash_row_reads_back_with_its_signal():
    old = {"kind": "crash", "stage": "import", "path": "(process)", "phase": "checks",
           "detail": "SIGSEGV in stage import (checks); native stack: tvm::ffi::ToJSONGraph"}
    violation = Violation.from_json(old)
    assert violation.signal == "SIGSEGV"
    assert text_of(violation) == "crash:import/checks:-:SIGSEGV"
    exited = Violation.from_json({**old, "detail": "exit code 3 without a result in x"})
    assert exited.signal is None and text_of(exited) == "crash:import/checks:-"
    assert Violation.from_json(violation.to_json()) == violation


def test_a_signal_is_a_field_and_absent_fields_keep_the_json_as_it_was():
    error = Violation("error", "s", "(exception)", "SIGSEGV-looking text", "P", 1)
    assert set(error.to_json()) == {"kind", "stage", "access_path", "detail", "pass",
                                    "pass_index", "phase", "copier"}
    assert text_of(error).startswith("error:s:P:SIGSEGV")   # a message, not a signal
    assert death.signal_of(-11) == "SIGSEGV" and death.signal_of(3) is None
    assert death.signal_of(-99) is None   # no name: the detail says "signal 99"
    assert death.describe_death(-99, "", "in stage x").startswith("signal 99 in stage x")


def test_which_module_a_copy_was_of_is_a_field():
    old = {"kind": "lossy-roundtrip", "stage": "pass:Normalize", "access_path": "(json)",
           "phase": "copy", "copier": "json", "detail": "json copy of the output failed: X"}
    assert Violation.from_json(old).copied == "output"
    assert Violation.from_json({**old, "detail": "json copy of the input: x"}).copied == "input"
    assert Violation.from_json({**old, "detail": "output", "copied": "input"}).copied == "input"


def test_stale_entries_in_the_report_are_a_field_not_a_prefix():
    row = {"case": "conv", "layout": "nchw", "path": "extract", "target": "llvm",
           "verdict": "pass", "status": "stale", "outcome_count": 1, "wall_seconds": 1.0,
           "stages": {}, "violations": [], "tvm_version": None, "tvm_ffi_version": None,
           "known": ["stale-looking known line", "stale registry entry [x] gone"],
           "stale": ["stale registry entry [x] gone"]}
    text = report.markdown([row])
    assert "- **conv**: stale registry entry [x] gone" in text
    assert "stale-looking" not in text


def test_the_new_failure_is_the_most_severe_by_the_table():
    def step(*signatures):
        return bisect.Step("1", 1 if signatures else 0, 1.0, False, "", list(signatures))
    picked = bisect.the_new_failure(step("error:x:-:old"), step(
        "error:x:-:old", "timeout:y:-", "crash:z:-:SIGSEGV", "error:w:P:new"))
    assert str(picked) == "crash:z:-:SIGSEGV"
    assert bisect.the_new_failure(step("mutated:a:P"), step("mutated:a:P")) is None


def test_every_run_verdict_has_a_colour():
    assert set(matrix_page.COLOURS) == set(VERDICTS)


def test_guard_suite_reads_the_counts_the_plugin_wrote(tmp_path):
    log = str(tmp_path / "pytest.log")
    assert file_run.counts(str(tmp_path), None, log) == {}    # killed at its time cap
    assert file_run.counts(str(tmp_path), -9, log) == {}      # killed by a signal
    with pytest.raises(file_run.CountsMissing, match="without writing"):
        file_run.counts(str(tmp_path), 0, log)
    (tmp_path / file_run.COUNTS).write_text('{"passed": 5, "deselected": 1}')
    assert file_run.counts(str(tmp_path), 0, log) == {"passed": 5, "deselected": 1}


def test_a_results_verdict_is_a_member_read_back_from_json():
    result = Result("conv")
    result.add(Violation("mutated", "s", "(p)", "d", "P", 1))
    back = Result.from_json(json.loads(json.dumps(result.to_json())))
    assert back.verdict is Outcome.MUTATED and back.violations[0].kind is Outcome.MUTATED


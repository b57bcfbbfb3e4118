"""The guard over any pytest session (`--harness-guard`) and `guard-suite`, on a throwaway
suite: a seeded pass that mutates its input, a test that expects a pass to raise, a test
that edits its own module between passes (its right), a clean pipeline, TVM's own
copy-on-write test (it counts references: a guard holding the input would fail it), and a
failing test.

It must record the seeded mutation against the right test and pass, change no test's
outcome, exit 1 on news and 0 once the finding is registered, merge xdist workers, and
its copy oracle must catch a seeded lossy copier that nothing else sees.
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from tests.helpers import ROOT

SUITE = '''
import pytest
import tvm
import tvm.testing
from tvm import relax
from tvm.script import ir as I, relax as R


def make():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                y = R.add(x, x)
                R.output(y)
            return y
    return Module


@tvm.transform.module_pass(opt_level=0, name="SeededMutatingPass")
def mutating(mod, ctx):
    gv = mod.get_global_var("main")
    mod[gv] = mod[gv].with_attr("seeded", "yes")   # in place: the fault
    return mod


@tvm.transform.module_pass(opt_level=0, name="SeededRaisingPass")
def raising(mod, ctx):
    raise ValueError("this pass refuses")


def test_mutating_pass_in_own_context():
    with tvm.transform.PassContext(opt_level=3, instruments=[]):
        out = mutating(make())
    assert "seeded" in out["main"].attrs


def test_expects_exception():
    with pytest.raises(Exception, match="refuses"):
        raising(make())


def test_clean_pipeline():
    out = tvm.transform.Sequential([relax.transform.Normalize(),
                                    relax.transform.FoldConstant()])(make())
    tvm.ir.assert_structural_equal(out, make())


def test_edits_its_module_between_passes():
    mod = relax.transform.Normalize()(make())
    gv = mod.get_global_var("main")
    mod[gv] = mod[gv].with_attr("by_test", "yes")   # the test's right, not a pass's fault
    relax.transform.Normalize()(mod)


def test_copy_on_write_of_a_moved_module():
    """TVM's own test_cow_pass: a pass given the only reference updates in place. A guard
    holding a reference to the input would make it copy."""
    def unique(func):
        assert tvm.testing.object_use_count(func) == 1
        return func
    x = tvm.tirx.Var("x", "int32")
    func = tvm.tirx.PrimFunc([x], tvm.tirx.Evaluate(x)).with_attr("target_bits", 32)
    mod = tvm.IRModule({"main": func})
    del func
    handle = mod.__hash__()
    mod = tvm.transform.Sequential([tvm.tirx.transform.Apply(unique),
                                    tvm.tirx.transform.NarrowDataType(32)])(mod._move())
    assert handle == mod.__hash__()


def test_that_fails():
    assert relax.transform.Normalize()(make()) is None
'''
REGISTERED = '''
[[issue]]
id = "seeded-mutating-pass"
case = "*test_seeded.py::test_mutating_pass_in_own_context"
verdict = "mutated"
path = "suite"
pass = "SeededMutatingPass"
reference = "the throwaway suite's seeded fault"
'''
@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "test_seeded.py").write_text(SUITE)
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


def _pytest(folder, *args, cases=None):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("HARNESS_CASES", None)
    if cases:
        env["HARNESS_CASES"] = str(cases)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--junitxml", str(folder / "junit.xml"), *args], cwd=folder,
                          capture_output=True, text=True, timeout=300, env=env)
    outcomes = {}
    for case in ElementTree.parse(folder / "junit.xml").iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        outcomes[case.get("name")] = "failed" if failed else "passed"
    return proc, outcomes


def _summary(out):
    with open(out / "summary.json") as handle:
        return json.load(handle)


def test_guard_records_the_seeded_mutation_merges_workers_and_changes_no_outcome(suite, tmp_path):
    plain, plain_outcomes = _pytest(suite, "-p", "no:xdist")
    out = tmp_path / "guard"
    guarded, guarded_outcomes = _pytest(suite, "-n", "2", "--harness-guard",
                                        "--harness-guard-out", str(out))
    assert guarded_outcomes == plain_outcomes, (plain.stdout, guarded.stdout)
    assert plain_outcomes["test_expects_exception"] == "passed"
    assert plain_outcomes["test_copy_on_write_of_a_moved_module"] == "passed"
    assert plain_outcomes["test_that_fails"] == "failed"
    assert plain.returncode == guarded.returncode == 1   # a failing test: pytest's status
    summary = _summary(out)
    assert summary["tests"] == 6 and summary["status"] == "new"
    assert sorted(os.listdir(out)) == ["records-gw0.jsonl", "records-gw1.jsonl",
                                       "summary.html", "summary.json", "summary.md"]
    [finding] = [f for f in summary["findings"] if f["status"] != "unsupported"]
    assert finding["signature"] == "mutated:suite:SeededMutatingPass"
    assert finding["example_test"].endswith("test_seeded.py::test_mutating_pass_in_own_context")
    records = [json.loads(line) for name in ("records-gw0.jsonl", "records-gw1.jsonl")
               for line in open(out / name)]
    by_test = {record["test"].split("::")[1]: record for record in records}
    assert not by_test["test_edits_its_module_between_passes"]["violations"]
    assert by_test["test_edits_its_module_between_passes"]["passes"] == 2
    assert by_test["test_expects_exception"]["outcome"] == "passed"
    assert "harness guard" in guarded.stdout and "new: mutated:suite:SeededMutatingPass" \
        in guarded.stdout


@pytest.mark.nightly   # 19 s of pytest runs; the guard itself is tested above in the default run
def test_guard_suite_runs_file_by_file_and_exits_by_the_registry(suite, tmp_path, monkeypatch):
    from tests.helpers import cli
    out = tmp_path / "gs"
    code, _, err = cli("guard-suite", str(suite), "--out", str(out), "--", "-k", "not fails")
    assert code == 1, err                                  # news
    assert "[1/1]" in err and "5 passed" in err
    summary = _summary(out)
    assert summary["findings"][0]["signature"] == "mutated:suite:SeededMutatingPass"
    assert summary["files"][0]["counts"] == {"passed": 5, "deselected": 1}
    assert "| " in open(out / "summary.md").read().split("## Files")[1]
    # registered now: the resumed run runs nothing again, and its summary reads the same
    # records against the registry that explains them
    known = tmp_path / "known"
    known.mkdir()
    (known / "known_issues.toml").write_text(REGISTERED)
    monkeypatch.setenv("HARNESS_CASES", str(known))
    code, _, err = cli("guard-suite", str(suite), "--out", str(out), "--resume", "--",
                       "-k", "not fails")
    assert code == 0 and "1 already done, 0 to run" in err, err
    summary = _summary(out)
    assert summary["status"] == "known"
    assert summary["findings"][0]["entry"] == "seeded-mutating-pass"
    monkeypatch.delenv("HARNESS_CASES")
    plain = tmp_path / "plain"
    code, _, err = cli("guard-suite", str(suite), "--out", str(plain), "--no-guard", "--",
                       "-k", "not fails")
    assert code == 0 and _summary(plain)["files"][0]["counts"] == {"passed": 5, "deselected": 1}


@pytest.mark.in_process_tvm
def test_copy_oracle_catches_a_seeded_lossy_copier_and_the_guard_never_raises():
    """A copier that drops function attributes: only the copy oracle sees it. And a guard
    whose own code fails records harness-error while the pass still runs."""
    from harness.oracles import roundtrip
    from harness.suite.session_guard import SessionGuard
    from harness.tvmapi.loading import tvm
    mod = tvm().script.from_source(
        "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
        "@I.ir_module\nclass M:\n    @R.function\n"
        "    def main(x: R.Tensor((2,), 'float32')):\n"
        "        R.func_attr({'keep': 1})\n        return x\n")

    def dropping(module):
        copy = roundtrip.json_roundtrip(module)
        copy["main"] = copy["main"].without_attr("keep")
        return copy

    context_init = tvm().transform.PassContext.__init__
    for table, expected in (({"dropping": dropping}, ["lossy-roundtrip"]),
                            (roundtrip.COPIERS, [])):
        guard = SessionGuard(copier_table=table)
        guard.install()
        try:
            guard.begin_test("seeded::copier")
            tvm().relax.transform.Normalize()(mod)
            record = guard.end_test()
        finally:
            guard.uninstall()
        kinds = [v.kind for v in record.violations if v.kind != "unsupported"]
        assert kinds == expected, record.violations
        if expected:
            assert record.violations[0].copier == "dropping"
            assert record.violations[0].pass_name == "Normalize"
    assert tvm().transform.PassContext.__init__ is context_init   # uninstalled

    guard = SessionGuard()
    guard.install()
    try:
        guard.begin_test("seeded::broken-guard")
        guard.guard.run_before_pass = None   # the guard's own code now fails
        out = tvm().relax.transform.Normalize()(mod)
        record = guard.end_test()
    finally:
        guard.uninstall()
    assert out is not None
    assert [v.kind for v in record.violations] == ["harness-error"]

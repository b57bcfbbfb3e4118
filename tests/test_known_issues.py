"""The known-issue registry: which entry explains a violation, and when an entry is stale.

Registry logic only (results built by hand, no TVM); the real registry is
exercised by the catalog items and by tests/test_reproducers.py.
"""
import pytest

from harness.catalog import known_issues
from harness.verdict import BadInput, Result, StageRecord, Violation, exit_code_of_rows

REGISTRY = """
[[issue]]
case = "*"
path = "extract"
stage = "zero-pipeline"
pass = "tirx.AnnotateEntryFunc"
verdict = "mutated"
strict = false
reference = "lenient, every case"

[[issue]]
case = "yolo*"
tvm = ">=0.27"
path = "extract"
stage = "zero-pipeline"
pass = "tirx.AnnotateEntryFunc"
verdict = "mutated"
reference = "strict, yolo"

[[issue]]
case = "conv-sum-nhwc"
layout = "nhwc"
stage = "convert-layout"
verdict = "error"
reference = "ConvertLayout on Sum"

[[issue]]
case = "*"
path = "pass"
stage = "pass:s_tir.InstrumentProfileIntrinsics"
verdict = "error"
phase = "determinism"
strict = false
reference = "hidden counter"

[[issue]]
case = "*"
tvm_ffi = ">=0.1.15"
verdict = "crash"
reference = "every save_json crashes"

[[issue]]
case = "*"
path = "cross-release"
tvm = ">=0.27"
saved_by = "==0.26.0"
stage = "cross-release"
access_path = "(load_json)"
verdict = "lossy-roundtrip"
reference = "0.27 cannot load what 0.26 saved"
"""
STACK = {"tvm_version": "0.27.0.post1", "tvm_ffi_version": "0.1.14.post1"}


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "known_issues.toml"
    path.write_text(REGISTRY)
    entries = known_issues.read(str(path))
    monkeypatch.setattr(known_issues, "registry", lambda: entries)
    return entries


def result(case, *violations, layout="nchw", path="extract", stages=(), **options):
    out = Result(case=case, options={"layout": layout, "path": path, **options}, **STACK,
                 stages=[StageRecord(name, 0.1) for name in stages])
    for violation in violations:
        out.add(violation)
    return out


def annotate(pass_name="tirx.AnnotateEntryFunc", stage="zero-pipeline"):
    return Violation("mutated", stage, "(pass input)", "rebound in place", pass_name, 7)


def test_most_specific_entry_explains(registry):
    judgement = known_issues.judge(result("yolov3-tiny", annotate()))
    assert judgement.status == "known" and judgement.exit_code == 0
    assert judgement.known[0][1].reference == "strict, yolo"   # not the first in the file


def test_same_kind_at_another_pass_is_news(registry):
    # The seeded fault this oracle alone catches: a mutation by another pass must not
    # hide behind the registered one.
    judgement = known_issues.judge(result("yolov3-tiny", annotate(),
                                          annotate(pass_name="relax.FoldConstant")))
    assert judgement.status == "new" and judgement.exit_code == 1
    assert [v.pass_name for v in judgement.unknown] == ["relax.FoldConstant"]


def test_an_entry_for_the_run_twice_check_does_not_explain_other_errors_there(registry):
    stage = "pass:s_tir.InstrumentProfileIntrinsics"
    hidden = Violation("error", stage, "(outcome)", "not deterministic", phase="determinism")
    refused = Violation("error", stage, "(exception)", "InternalError: check failed")
    assert known_issues.judge(result("conv", hidden, path="pass")).status == "known"
    judgement = known_issues.judge(result("conv", hidden, refused, path="pass"))
    assert judgement.status == "new" and judgement.unknown == [refused]


def test_strict_entry_that_no_longer_happens_is_stale(registry):
    judgement = known_issues.judge(result("yolov3-tiny", stages=["zero-pipeline"]))
    assert judgement.status == "stale" and judgement.exit_code == 1
    assert "strict, yolo" in judgement.lines()[0]


def test_entry_whose_stage_never_ran_is_not_stale(registry):
    stopped = result("yolov3-tiny", Violation("error", "convert-layout", "(exception)", "x"),
                     stages=["convert-layout"])
    judgement = known_issues.judge(stopped)
    assert judgement.stale == [] and judgement.status == "new"


def test_lenient_entry_is_never_stale(registry):
    assert known_issues.judge(result("Conv2d")).status == "pass"
    assert known_issues.judge(result("Conv2d", annotate())).status == "known"


def test_scope_is_case_stack_layout_and_path(registry):
    error = Violation("error", "convert-layout", "(exception)", "Invalid SLayout")
    assert known_issues.judge(result("conv-sum-nhwc", error, layout="nhwc")).status == "known"
    assert known_issues.judge(result("conv-sum-nhwc", error, layout="nchw")).status == "new"
    assert known_issues.judge(result("yolov3-tiny", annotate(), path="compile")).status == "new"
    older = result("yolov3-tiny", annotate())
    older.tvm_version = "0.26.0"
    assert known_issues.judge(older).known[0][1].reference == "lenient, every case"
    source_build = result("yolov3-tiny", annotate())
    source_build.tvm_version = "git:5d4dc8721307"     # in no release range
    assert known_issues.judge(source_build).known[0][1].reference == "lenient, every case"
    # a commit bisect asks whether the failure is a registered one: within every range
    assert known_issues.judge(source_build, source_builds=True).known[0][1].reference == \
        "strict, yolo"


def test_incomplete_or_injected_runs_do_not_make_entries_stale(registry):
    crash = result("yolov3-tiny", Violation("crash", "zero-pipeline", "(process)", "SIGSEGV"))
    assert known_issues.judge(crash).stale == [] and known_issues.judge(crash).status == "new"
    injected = result("yolov3-tiny", inject_pass="tests/seeded.py:mutate_in_place")
    assert known_issues.judge(injected).status == "pass"


def cross_release(*violations, saved_by="0.26.0", stages=("import", "cross-release")):
    """A `matrix --cross-release` result: loaded on STACK what `saved_by` saved."""
    return result("conv", *violations, path="cross-release", stages=stages,
                  saved_by={"tvm_version": saved_by, "tvm_ffi_version": "0.1.14.post1"})


def unloadable():
    return Violation("lossy-roundtrip", "cross-release", "(load_json)", "cannot load",
                     phase="copy", copier="json@0.26.0")


def test_a_cross_release_entry_is_scoped_by_the_saving_release_too(registry):
    assert known_issues.judge(cross_release(unloadable())).status == "known"
    assert known_issues.judge(cross_release(unloadable(), saved_by="0.25.0")).status == "new"
    assert known_issues.judge(cross_release(saved_by="0.25.0")).status == "pass"
    assert known_issues.judge(cross_release()).status == "stale"   # the pair loads now
    # B's own import failed: the load never ran, nothing is known about the entry
    assert known_issues.judge(cross_release(stages=("import",))).status == "pass"


def test_only_entries_naming_the_cross_release_path_go_stale_on_its_results(registry):
    """A cross-release result runs none of the paths other entries were measured on."""
    on_0_1_15 = cross_release()
    on_0_1_15.tvm_ffi_version = "0.1.15.post2"
    stale = known_issues.judge(on_0_1_15).stale   # the crash entry is not among them
    assert [entry.reference for entry in stale] == ["0.27 cannot load what 0.26 saved"]
    on_0_1_15.add(Violation("crash", "cross-release", "(process)", "SIGSEGV", phase="copy"))
    assert known_issues.judge(on_0_1_15).status == "known"   # it may still explain
    checked = result("conv", stages=["zero-pipeline"])
    checked.tvm_ffi_version = "0.1.15.post2"
    assert known_issues.judge(checked).status == "stale"     # where it was measured


def test_kinds_restrict_what_an_item_judges(registry):
    judgement = known_issues.judge(result("yolov3-tiny"), kinds=("lossy-roundtrip",))
    assert judgement.status == "pass"   # the mutation entry belongs to the other invariant


def test_harness_error_is_exit_4_even_when_the_rest_is_known(registry):
    broken = result("yolov3-tiny", annotate(),
                    Violation("harness-error", "setup", "(harness)", "KeyError"))
    assert known_issues.judge(broken).exit_code == 4

    def rows(*statuses):
        from harness.verdict import status
        return [{"failing": status(name).failing, "exit": status(name).exit}
                for name in statuses]
    assert exit_code_of_rows(rows("known", "harness-error", "new")) == 4
    assert exit_code_of_rows(rows("known", "pass", "unsupported")) == 0
    assert exit_code_of_rows(rows("pass", "stale")) == 1


def test_a_malformed_entry_is_refused_with_its_place(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[issue]]\ncase = "x"\nverdict = "mutated"\nreference = "r"\nstgae = "y"\n')
    with pytest.raises(BadInput, match="issue #1"):
        known_issues.read(str(path))


def test_every_registered_reproducer_exists():
    import os
    missing = [issue.reproducer for issue in known_issues.registry()
               if issue.reproducer and not os.path.exists(os.path.join(issue.base,
                                                                       issue.reproducer))]
    assert not missing
    # Every bug this harness found (not a documented frontend limitation) has a reproducer.
    findings = [issue for issue in known_issues.registry()
                if issue.reference.startswith("not yet reported upstream")]
    assert findings and all(issue.reproducer for issue in findings), \
        [issue.reference for issue in findings if not issue.reproducer]


SUITE_REGISTRY = """
[[issue]]
id = "suite-strict"
case = "*test_a.py::test_one"
path = "suite"
pass = "SomePass"
verdict = "mutated"
reference = "strict, one test"

[[issue]]
id = "suite-dtype"
case = "*"
path = "suite"
verdict = "lossy-roundtrip"
copier = "tvmscript"
access_path = "*index_map.initial_indices*"
strict = false
reference = "an access path class"

[[issue]]
id = "catalog-everything"
case = "*"
verdict = "mutated"
strict = false
reference = "a catalog entry: never judges suite findings"
"""


def _suite_registry(tmp_path, monkeypatch):
    path = tmp_path / "suite.toml"
    path.write_text(SUITE_REGISTRY)
    entries = known_issues.read(str(path))
    monkeypatch.setattr(known_issues, "registry", lambda: entries)


def test_suite_findings_are_judged_by_suite_entries_only(tmp_path, monkeypatch):
    _suite_registry(tmp_path, monkeypatch)
    mutated = Violation("mutated", "suite", "(its input)", "x", pass_name="OtherPass")
    lossy = Violation("lossy-roundtrip", "suite",
                      '<root>.functions[I.GlobalVar("main")].body.value.attrs.index_map'
                      '.initial_indices[0].ty.dtype', "x", phase="copy", copier="tvmscript")
    judged = known_issues.judge_suite([("t/test_b.py::test_two", mutated),
                                       ("t/test_b.py::test_two", lossy)],
                                      ["t/test_b.py::test_two"], {})
    assert [v for _, v in judged.unknown] == [mutated]   # the catalog's "*" does not apply
    assert [entry.id for _, _, entry in judged.known] == ["suite-dtype"]
    assert judged.stale == [] and judged.status == "new"   # test_one did not run: not stale


def test_a_strict_suite_entry_is_stale_only_when_its_test_ran(tmp_path, monkeypatch):
    _suite_registry(tmp_path, monkeypatch)
    judged = known_issues.judge_suite([], ["t/test_a.py::test_one"], {})
    assert [entry.id for entry in judged.stale] == ["suite-strict"]
    assert judged.exit_code == 1
    error = Violation("harness-error", "suite", "(guard)", "ours")
    assert known_issues.judge_suite([("t/test_a.py::test_one", error)],
                                    ["t/test_a.py::test_one"], {}).exit_code == 4


def test_access_paths_match_exactly_or_with_star_only():
    assert known_issues._path_matches('a.functions[I.GlobalVar("main")]',
                                      'a.functions[I.GlobalVar("main")]')
    assert not known_issues._path_matches("a.f[0]", "a.f0")   # brackets are not classes
    assert known_issues._path_matches("*.dtype", "x.params[0].ty.dtype")
    assert not known_issues._path_matches("*.dtype", "x.params[0].ty")

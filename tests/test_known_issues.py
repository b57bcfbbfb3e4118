"""The known-issue registry: which entry explains a violation, and when an entry is stale.

Registry logic on results built by hand, and one real check of a user's own model that
hits a registered bug; the real registry is exercised by the catalog items and by
tests/test_reproducers.py.
"""
import pytest

from harness.catalog import issue_entry, known_issues
from harness.result import Result, StageRecord
from harness.verdict import BadInput, Violation, exit_code_of_rows

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
    source_build.tvm_version = "git:5d4dc8721307"     # in no release range, when asked so
    assert known_issues.judge(source_build, source_builds=False).known[0][1].reference == \
        "lenient, every case"
    # a source build's result is within every range (report over main, a commit bisect)
    assert known_issues.judge(source_build).known[0][1].reference == "strict, yolo"


def test_incomplete_or_injected_runs_do_not_make_entries_stale(registry):
    crash = result("yolov3-tiny", Violation("crash", "zero-pipeline", "(process)", "SIGSEGV",
                                            signal="SIGSEGV"))
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
    on_0_1_15.add(Violation("crash", "cross-release", "(process)", "SIGSEGV", phase="copy",
                            signal="SIGSEGV"))
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
        from harness.verdict import Outcome
        return [{"failing": Outcome.of(name).failing, "exit": Outcome.of(name).exit}
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
id = "suite-hand-built"
case = "*test_n.py::*"
path = "suite"
pass = "Normalize"
verdict = "mutated"
strict = false
case_only = "only on the hand-built input these tests make"
reference = "a model-specific suite entry"

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


def test_suite_entries_are_matched_by_signature_as_results_are(tmp_path, monkeypatch):
    """A strict entry's pass explains that pass's mutation in any test (it is stale only
    where expected); a case_only entry explains nothing outside its tests."""
    _suite_registry(tmp_path, monkeypatch)
    some_pass = Violation("mutated", "suite", "(its input)", "x", pass_name="SomePass")
    normalize = Violation("mutated", "suite", "(its input)", "x", pass_name="Normalize")
    elsewhere = "t/test_c.py::test_three"
    judged = known_issues.judge_suite([(elsewhere, some_pass), (elsewhere, normalize)],
                                      [elsewhere], {})
    assert [(test, entry.id) for test, _, entry in judged.known] == [(elsewhere, "suite-strict")]
    assert judged.unknown == [(elsewhere, normalize)] and judged.stale == []
    inside = known_issues.judge_suite([("t/test_n.py::test_x", normalize)],
                                      ["t/test_n.py::test_x"], {})
    assert inside.status == "known"


def test_access_paths_match_exactly_or_with_star_only():
    assert issue_entry.star_matches('a.functions[I.GlobalVar("main")]',
                                     'a.functions[I.GlobalVar("main")]')
    assert not issue_entry.star_matches("a.f[0]", "a.f0")   # brackets are not classes
    assert issue_entry.star_matches("*.dtype", "x.params[0].ty.dtype")
    assert not issue_entry.star_matches("*.dtype", "x.params[0].ty")


# ---- matched by signature first: known wherever the bug shows -------------

SIGNATURE_REGISTRY = """
[[issue]]
id = "dropout"
case = "conv-dropout-nhwc"
layout = "nhwc"
stage = "convert-layout"
pass = "ConvertLayout"
verdict = "error"
message = "*(msgs[i].IsNested()) is false: Expected nested to match tuple"
reference = "named by its message: recognized anywhere"

[[issue]]
id = "bad-alloc"
case = "node-squeeze_negative_axes-nhwc"
stage = "convert-layout"
verdict = "error"
message = "*std::bad_alloc"
case_only = "std::bad_alloc names no cause"
reference = "case_only: its case only"

[[issue]]
id = "vague"
case = "conv-sum-nhwc"
stage = "convert-layout"
verdict = "error"
reference = "no message: its case only"

[[issue]]
id = "mutation"
case = "yolov3-tiny"
pass = "tirx.AnnotateEntryFunc"
verdict = "mutated"
reference = "a mutation is named by its pass"

[[issue]]
id = "segfault"
case = "conv"
verdict = "crash"
message = "SIGSEGV"
reference = "a signal names no cause: its case only"

[[issue]]
id = "mine"
case = "mine-*"
layout = "nhwc"
stage = "convert-layout"
verdict = "error"
reference = "a user's own entry for their cases"
"""
USERS_MODEL = "/home/someone/models/detector.onnx"
CONVERT_LAYOUT = ("import", "convert-layout")


@pytest.fixture
def signatures(tmp_path, monkeypatch):
    path = tmp_path / "known_issues.toml"
    path.write_text(SIGNATURE_REGISTRY)
    entries = known_issues.read(str(path))
    monkeypatch.setattr(known_issues, "registry", lambda: entries)


def convert_layout_error(message):
    return Violation("error", "convert-layout", "(exception)", message, "ConvertLayout", 1)


NESTED = ("InternalError: Check failed: (msgs[i].IsNested()) is false: Expected nested to match "
          "tuple")


def test_a_registered_bug_is_known_on_a_users_model_by_its_signature(signatures):
    judgement = known_issues.judge(result(USERS_MODEL, convert_layout_error(NESTED),
                                          layout="nhwc", stages=CONVERT_LAYOUT))
    assert judgement.status == "known" and judgement.exit_code == 0
    assert [entry.id for _, entry in judgement.known] == ["dropout"]
    # only where the bug is expected can its absence make an entry stale
    assert known_issues.judge(result(USERS_MODEL, layout="nhwc",
                                     stages=CONVERT_LAYOUT)).status == "pass"
    # the entry's stack still holds: not on another layout
    assert known_issues.judge(result(USERS_MODEL, convert_layout_error(NESTED),
                                     stages=CONVERT_LAYOUT)).status == "new"


def test_another_error_at_the_same_stage_and_pass_stays_new(signatures):
    """A false "known" hides a new bug: the message must match, on the user's model and on
    the entry's own case alike."""
    other = convert_layout_error("InternalError: Check failed: (layout.defined()) is false")
    for case in (USERS_MODEL, "conv-dropout-nhwc"):
        judgement = known_issues.judge(result(case, other, layout="nhwc",
                                              stages=CONVERT_LAYOUT))
        assert judgement.status == "new" and judgement.unknown == [other], case


def test_case_only_vague_and_crash_entries_stay_in_their_cases(signatures):
    bad_alloc = convert_layout_error("InternalError: std::bad_alloc")
    assert known_issues.judge(result("node-squeeze_negative_axes-nhwc", bad_alloc,
                                     layout="nhwc")).status == "known"
    anything = convert_layout_error("InternalError: Invalid SLayout")
    assert known_issues.judge(result("conv-sum-nhwc", anything, layout="nhwc")).status == \
        "known"
    segfault = Violation("crash", "zero-pipeline", "(process)", "SIGSEGV in stage x",
                         signal="SIGSEGV")
    assert known_issues.judge(result("conv", segfault)).status == "known"
    for violation in (bad_alloc, anything, segfault):
        judgement = known_issues.judge(result(USERS_MODEL, violation, layout="nhwc"))
        assert judgement.status == "new", violation


def test_a_mutation_is_recognized_by_its_pass(signatures):
    judgement = known_issues.judge(result(USERS_MODEL, annotate(), stages=["zero-pipeline"]))
    assert [entry.id for _, entry in judgement.known] == ["mutation"]
    assert judgement.stale == [] and judgement.status == "known"


def test_an_entry_expected_at_the_case_outranks_one_recognized_by_signature(signatures):
    """A user's own entry for their case is the one they read, though the built-in one
    (an exact case and a message) is more specific."""
    judgement = known_issues.judge(result("mine-dropout-nhwc", convert_layout_error(NESTED),
                                          layout="nhwc", stages=CONVERT_LAYOUT))
    assert [entry.id for _, entry in judgement.known] == ["mine"]


def test_entry_fields_that_could_never_match_are_refused(tmp_path):
    entry = '[[issue]]\ncase = "x"\nreference = "r"\n'
    for fields, complaint in (('verdict = "mutated"\nmessage = "x"\n', "no message"),
                              ('verdict = "error"\ncase_only = " "\n', "why the bug"),
                              ('verdict = "error"\nmessage = [""]\n', "non-empty"),
                              # matched against normalized text, where numbers read N
                              ('verdict = "error"\nmessage = "*but 1 was provided"\n',
                               "'but 1 was provided' reads 'but N was provided'")):
        path = tmp_path / "bad.toml"
        path.write_text(entry + fields)
        with pytest.raises(BadInput, match=complaint):
            known_issues.read(str(path))


def test_every_built_in_entry_says_how_it_is_told_apart_outside_its_cases():
    """An error or lossy-roundtrip entry scoped to some cases carries the message that
    names its bug, or says why it applies to its cases only."""
    from harness.catalog.cases import CASES_DIR
    entries = [entry for path in issue_entry.files(CASES_DIR) for entry in issue_entry.read(path)]
    assert len(entries) > 100
    silent = [entry.id for entry in entries if entry.verdict in ("error", "lossy-roundtrip")
              and entry.case != ("*",) and not (entry.message or entry.case_only)]
    assert not silent
    assert all(entry.case != ("*",) for entry in entries if entry.case_only)


def test_a_users_own_model_hitting_a_registered_bug_is_known(tmp_path):
    """The real thing: an ONNX file of one's own, conv2d -> Dropout, checked with
    --layout nhwc, is known by the built-in entry (it was `new`, exit 1, when entries
    were scoped by case id)."""
    import numpy as np
    import onnx
    from helpers import cli_json
    from onnx import TensorProto, helper, numpy_helper

    from harness.tvmapi import loading
    entry = next(entry for entry in known_issues.registry()
                 if entry.id == "convert-layout-dropout")
    if not entry.on_stack(loading.versions()):
        pytest.skip(f"convert-layout-dropout is registered for apache-tvm {entry.tvm}")
    weight = numpy_helper.from_array(np.full((6, 3, 3, 3), 0.1, np.float32), "weight")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["image", "weight"], ["features"], pads=[1, 1, 1, 1]),
         helper.make_node("Dropout", ["features"], ["kept"])], "my_model",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("kept", TensorProto.FLOAT, [1, 6, 8, 8])],
        initializer=[weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = tmp_path / "my_model.onnx"
    onnx.save(model, str(path))
    code, data, err = cli_json("check", str(path), "--layout", "nhwc", timeout=300)
    assert [v["signature"].split(":")[:3] for v in data["violations"]] == \
        [["error", "convert-layout", "ConvertLayout"]], data["violations"]
    assert code == 0 and data["status"] == "known", err
    assert [known["entry"] for known in data["known"]] == ["convert-layout-dropout"]


@pytest.mark.in_process_tvm
def test_an_error_announcing_its_next_line_keeps_it_and_the_registry_tells_them_apart():
    """LLVM's verifier says what failed on the line after "...the following errors:"; the
    detail once kept only the first line, so `equal` of bools (an fcmp on i1) could be
    registered only as any verification failure. The real compile's detail names FCmp, and
    the same failure of another instruction is not explained by that entry."""
    from harness.tvmapi import loading
    from harness.verdict import first_line
    relax = loading.tvm().relax
    annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType
    flags = relax.Var("flags", annotation((2,), "bool"))
    builder = relax.BlockBuilder()
    with builder.function("main", [flags]):
        builder.emit_func_output(builder.emit(relax.op.equal(flags, flags)))
    with pytest.raises(Exception) as raised:
        loading.tvm().compile(builder.get(), target="llvm")
    detail = first_line(raised.value)
    assert detail.endswith("errors: Invalid operand types for FCmp instruction"), detail
    entries = {entry.id: entry for entry in known_issues.registry()}
    if not any(entries[name].on_stack(loading.versions()) for name in (
            "llvm-bool-arithmetic-unlowered", "llvm-bool-arithmetic-unlowered-0.25")):
        pytest.skip("the bool entries are not registered for this TVM")

    def judged(text):
        return known_issues.judge(result("ops-relax", Violation(
            "error", "compile", "(exception)", text), path="compile", stages=["compile"]))
    known = judged(detail)
    assert known.status == "known", known.unknown
    assert known.known[0][1].id.startswith("llvm-bool-arithmetic-unlowered")
    assert judged(detail.replace("FCmp", "ICmp")).status == "new"


def test_a_field_written_into_an_entry_changes_that_entry_alone(tmp_path):
    """What `watch --record` writes: a field after the entry's id, a list replaced whole
    (even across lines), the newest measurement first; the rest of the file as it was."""
    import tomllib

    from harness.catalog import registry_edit
    text = ('# a comment\n[[issue]]\nid = "one"\ncase = "*"\nverdict = "mutated"\n'
            'measured_on = ["0.27: reproduces",\n    "0.26: reproduces"]\n\n'
            '[[issue]]\nid = "two"  # the second\ncase = "*"\nverdict = "error"\n')
    (tmp_path / "known_issues.toml").write_text(text)
    registry_edit.set_field(str(tmp_path), "two", "introduced_by", "abc123 [Relax] A title")
    registry_edit.prepend(str(tmp_path), "one", "measured_on", "main @ 5d4dc87213: reproduces")
    registry_edit.prepend(str(tmp_path), "one", "measured_on", "0.26: reproduces")
    written = (tmp_path / "known_issues.toml").read_text()
    entries = {entry["id"]: entry for entry in tomllib.loads(written)["issue"]}
    assert entries["two"]["introduced_by"] == "abc123 [Relax] A title"
    assert entries["one"]["measured_on"] == ["0.26: reproduces", "main @ 5d4dc87213: reproduces",
                                             "0.27: reproduces"]
    assert written.startswith("# a comment\n") and 'id = "two"  # the second' in written
    with pytest.raises(BadInput, match="no entry with id 'three'"):
        registry_edit.set_field(str(tmp_path), "three", "fixed_by", "x")


def test_a_registry_folder_is_one_registry_and_an_edit_goes_to_the_file_holding_the_entry(
        tmp_path, monkeypatch):
    """The built-in registry's shape (known_issues/*.toml, a file per component) in a user's
    folder: every file read in name order beside a known_issues.toml, reproducers relative
    to the folder, and `watch --record`'s edit written into the one file that holds the id."""
    from harness.catalog import registry_edit
    from harness.catalog.cases import USER_CASES
    parts = tmp_path / "known_issues"
    parts.mkdir()
    entry = '[[issue]]\nid = "{}"\ncase = "mine-*"\nverdict = "mutated"\nreference = "r"\n'
    (parts / "b-later.toml").write_text(entry.format("second") + 'reproducer = "repro.py"\n')
    (parts / "a-first.toml").write_text(entry.format("first"))
    (tmp_path / "known_issues.toml").write_text(entry.format("single"))
    monkeypatch.setenv(USER_CASES, str(tmp_path))
    mine = [entry for entry in known_issues.registry() if entry.base == str(tmp_path)]
    assert [entry.id for entry in mine] == ["single", "first", "second"]
    assert mine[2].file == str(parts / "b-later.toml")
    assert mine[2].reproducer_path == str(tmp_path / "repro.py")
    registry_edit.set_field(str(tmp_path), "second", "fixed_by", "abc123 [Relax] A fix")
    assert 'fixed_by = "abc123 [Relax] A fix"' in (parts / "b-later.toml").read_text()
    assert "fixed_by" not in (parts / "a-first.toml").read_text()


def test_a_source_builds_result_reads_registered_bugs_as_known_not_new():
    """A commit's build has no release number ("git:<sha>"): read against no range, every
    registered bug on `report` over main read `new`. Its result is judged as a source build's
    by default, as bisect-step always asked."""
    from harness.verdict import Outcome
    violation = Violation(Outcome.MUTATED, "zero-pipeline", "(pass input)", "seeded",
                          "tirx.AnnotateEntryFunc", 3)
    for version in ("0.27.0.post1", "git:5d4dc8721300"):
        result = Result("yolov3-tiny", tvm_version=version, tvm_ffi_version="0.1.14.post1",
                        options={"layout": "nchw", "path": "extract"})
        result.add(violation)
        assert known_issues.judge(result).status == Outcome.KNOWN, version


def test_a_fuzz_campaign_goes_on_past_a_case_only_entry_but_stops_at_news():
    """A `case_only` entry is not `known` off its cases (its message names no operator),
    but a generated program meeting its signature is no news for a campaign to stop at
    (conv2d_transpose after ConvertLayout ended compile campaigns early)."""
    from harness.cli import fuzz
    from harness.result import Result
    from harness.verdict import Outcome, Violation
    result = Result("fuzz-example-3", tvm_version="0.27.0.post1",
                    tvm_ffi_version="0.1.14.post1", options={"path": "extract"})
    result.add(Violation(Outcome.ERROR, "import", "(frontend)", "KeyError: 'num_heads'"))
    assert known_issues.judge(result).unknown and fuzz.news(result) == []
    result.add(Violation(Outcome.ERROR, "import", "(frontend)", "ValueError: a new bug 7"))
    assert [violation.detail for violation in fuzz.news(result)] == ["ValueError: a new bug 7"]


@pytest.mark.parametrize("where, entry", [
    ("(answer vs onnxruntime; first wrong node: Resize mode=linear)",
     "onnx-resize-downsample-scales-coordinates"),
    ("(answer vs onnxruntime; first wrong node: Resize antialias=1, mode=cubic)",
     "onnx-resize-antialias-ignored"),
    ("(answer vs onnxruntime; first wrong node: Resize mode=nearest)", None),
    ("(answer vs onnxruntime; first wrong node: Relu)", None),
    ("(answer vs onnxruntime; first wrong node: SpaceToDepth blocksize=2, mode=DCR)", None),
    ("(answer vs onnxruntime)", None),   # not localized: no operator, no cause
])
def test_a_wrong_answer_is_known_by_its_first_wrong_node_on_any_model_and_only_there(
        where, entry):
    """No false `known`: an entry matching by operator explains a user's model only where
    the node the answer goes wrong at is its operator with its attributes."""
    from harness.result import Result
    from harness.verdict import Outcome, Phase, Violation
    result = Result("/home/me/models/mine.onnx", tvm_version="0.27.0.post1",
                    tvm_ffi_version="0.1.14.post1", options={"path": "compile"})
    result.add(Violation(Outcome.WRONG_RESULT, "compile", where, "TVM's answer is not ...",
                         phase=Phase.ANSWER))
    judged = known_issues.judge(result)
    assert [issue.id for _, issue in judged.known] == ([entry] if entry else [])

"""Failure signatures: what `check` prints, what `--match` takes, what a bisect decides by.

Pure logic (violations built by hand, no TVM) except the last test, which reads the
signature `check --json` prints for a real violation.
"""
import pytest
from helpers import SMALL_CASE, cli_json, seeded

from harness.result import Result
from harness.signature import Pattern, Signature, normalize, text_of
from harness.verdict import BadInput, Violation

ANNOTATE = Violation("mutated", "zero-pipeline", "(pass input)", "rebound in place",
                     "tirx.AnnotateEntryFunc", 48)
SEGFAULT = Violation("crash", "import", "(process)", "SIGSEGV in stage import (checks); "
                     "native stack: tvm::ffi::ToJSONGraph", phase="checks", signal="SIGSEGV")
DROPOUT = Violation("error", "convert-layout", "(exception)", "InternalError: Check failed: "
                    "(msgs[3].IsNested()) is false: Expected nested to match tuple",
                    "ConvertLayout", 1)


def test_the_text_form_names_kind_stage_phase_pass_and_message():
    assert text_of(ANNOTATE) == "mutated:zero-pipeline:tirx.AnnotateEntryFunc"
    assert text_of(SEGFAULT) == "crash:import/checks:-:SIGSEGV"
    assert text_of(DROPOUT).startswith("error:convert-layout:ConvertLayout:InternalError: "
                                       "Check failed: (msgs[N].IsNested())")


def test_a_pattern_matches_its_own_text_and_globs():
    for violation in (ANNOTATE, SEGFAULT, DROPOUT):
        assert Pattern.parse(text_of(violation)).matches(text_of(violation))
    assert Pattern.parse("crash:*").matches(text_of(SEGFAULT))
    assert Pattern.parse("crash").matches(text_of(SEGFAULT))     # trailing parts: any
    assert not Pattern.parse("crash:*").matches(text_of(ANNOTATE))
    assert Pattern.parse("mutated:*:tirx.*").matches(text_of(ANNOTATE))
    assert not Pattern.parse("mutated:*:relax.*").matches(text_of(ANNOTATE))
    assert Pattern.parse("error:convert-layout").matches(text_of(DROPOUT))


def test_the_sweeps_stage_names_keep_their_colon():
    hidden = Violation("error", "pass:s_tir.InstrumentProfileIntrinsics", "(outcome)",
                       "not deterministic", phase="determinism")
    text = text_of(hidden)
    assert text.startswith("error:pass:s_tir.InstrumentProfileIntrinsics/determinism:-:")
    assert Pattern.parse("error:pass:s_tir.InstrumentProfileIntrinsics/determinism").matches(
        text)
    assert Pattern.parse("error:pass:*").matches(text)
    assert not Pattern.parse("error:pass:FoldConstant").matches(text)
    assert Pattern.parse("mutated:zero-pipeline/stage").matches(text_of(ANNOTATE))


@pytest.mark.parametrize("text", ["bogus", "", "mutated:stage/nosuchphase", "pass"])
def test_a_pattern_that_cannot_be_a_signature_is_bad_input(text):
    with pytest.raises(BadInput, match="--match"):
        Pattern.parse(text)


def test_the_message_masks_names_and_numbers_but_not_the_bug():
    one = normalize("Check failed: (msgs[3].IsNested()) is false: lv12 at 0x7f00ab")
    two = normalize("Check failed: (msgs[0].IsNested()) is false: conv_7 at 0x5600ff")
    assert one == two
    assert normalize("Invalid SLayout: can't find S in source layoutABCDE") != one


def test_found_in_picks_the_violation_with_the_signature_among_several():
    result = Result("x")
    for violation in (ANNOTATE, DROPOUT):
        result.add(violation)
    wanted = Signature.of(Violation("error", "convert-layout", "(exception)",
                                    DROPOUT.detail.replace("[3]", "[9]"), "ConvertLayout", 2))
    assert wanted.first_in(result) is DROPOUT
    assert Signature("error", "zero-pipeline", "ConvertLayout", wanted.message).first_in(
        result) is None
    # the phase is part of it: the same crash in a copy is another failure
    assert Signature.of(SEGFAULT) != Signature.of(
        Violation("crash", "import", "(process)", SEGFAULT.detail, phase="copy",
                  signal="SIGSEGV"))


def test_check_prints_each_violations_signature_and_the_entry_that_explains_it():
    code, data, err = cli_json("check", SMALL_CASE, "--inject-pass",
                               seeded("mutate_in_place"), "--inject-before", "zero-pipeline")
    assert code == 1, err
    (mutation,) = [v for v in data["violations"] if v["kind"] == "mutated"]
    assert mutation["signature"] == f"mutated:injected:{mutation['pass']}", mutation
    assert data["status"] == "new" and data["failing"] is True
    assert {"known", "stale"} <= set(data)

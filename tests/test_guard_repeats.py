"""The per-pass guard's repeats: a pass application that repeats one already checked in
the stage (the same pass, enclosing passes and input hash) has its nested passes watched
by identity only while they run the names the first one ran.

What it is for: FoldConstant builds each constant subgraph through a whole nested
pipeline, the same one many times over. What must hold: the same findings as without it
(a repeat's passes are still named and their own inputs' identity maps still checked),
and a name that differs ends the repeat, so a different pipeline behind the same name is
hashed as usual.
"""
import numpy as np
import pytest
import seeded
import tvm
from helpers import run_in_process
from helpers import seeded as seeded_spec

from harness.tvmapi import calls, ir
from harness.tvmapi.pass_guard import PassGuard

pytestmark = pytest.mark.in_process_tvm


def _two_equal_constant_sums():
    """main adds x to two sums of constants of one shape: after LegalizeOps both sums call
    one PrimFunc, and FoldConstant builds it once per call, the second build a repeat."""
    builder = ir.block_builder()
    x = tvm.relax.Var("x", ir.tensor_annotation((4, 4), "float32"))
    main = ir.DataflowMain(builder, [x])
    add = ir.relax_op().add
    sums = [builder.emit(add(tvm.relax.const(np.full((4, 4), value, "float32")),
                             tvm.relax.const(np.full((4, 4), value + 1, "float32"))))
            for value in (1.0, 3.0)]
    first = builder.emit(add(x, sums[0]))
    return main.finish([builder.emit(add(first, sums[1]))])


def _guarded(pipeline, mod, eager=False):
    guard = PassGuard(lambda event: None, eager=eager)
    guard.begin_stage("test", [])
    with calls.pass_context([guard.instrument()]):
        out = pipeline(mod)
    records = guard.end_stage().passes
    assert guard.bug is None and guard.tvm_error is None
    return guard, out, records


def test_a_repeated_nested_build_is_followed_and_folds_the_same():
    pipeline = tvm.transform.Sequential([tvm.relax.transform.LegalizeOps(),
                                         tvm.relax.transform.FoldConstant()])
    with calls.pass_context([]):
        plain = pipeline(_two_equal_constant_sums())
    guard, out, records = _guarded(pipeline, _two_equal_constant_sums())
    tvm.ir.assert_structural_equal(out, plain)
    assert ir.count_calls(out, ("relax.call_tir",)) == 2   # both sums folded
    assert guard.followed > 10, guard.followed   # the second build's passes, by identity
    assert len(records) == guard.counter   # every application still recorded by name
    # The same findings as the eager check (each pass's whole input hashed before and after):
    # tirx.AnnotateEntryFunc's registered rebinding, in both builds, the repeat's included.
    eager, _, _ = _guarded(pipeline, _two_equal_constant_sums(), eager=True)
    found = [(finding.record.name, finding.record.index, finding.how)
             for finding in guard.findings]
    assert found == [(finding.record.name, finding.record.index, finding.how)
                     for finding in eager.findings]
    assert [name for name, _, _ in found].count("tirx.AnnotateEntryFunc") == 2, found
    assert not guard.edited_in_place


def test_a_pipeline_named_like_an_earlier_one_is_hashed_from_its_first_other_pass():
    """The second SeededTwin starts as a repeat of the first (its Normalize is followed);
    its next pass has another name, so from there on its passes are hashed, and the weight
    written inside it is seen at the stage's end."""
    mod = _two_equal_constant_sums()
    guard, _out, _records = _guarded(seeded.twin_pipelines, mod)
    assert guard.followed == 1, guard.followed
    assert guard.edited_in_place, "the weight write inside the second twin went unseen"


def test_the_twin_fault_is_named_by_the_check():
    result = run_in_process(inject_pass=seeded_spec("twin_pipelines"))
    (violation,) = [v for v in result.violations if v.kind == "mutated"]
    assert (violation.stage, violation.pass_name) == ("injected", "SeededWeightWritePass")


def test_a_guard_per_stage_makes_no_new_instrument_class():
    """TVM's pass_instrument decorator makes a new subclass of an ABC at each call, and
    every later issubclass walks them all: a stage's guard cost grew with the process's age
    (0.45 ms a stage at first, 2.8 ms after 1,200 stages of a fuzz campaign). One class per
    instrument name for the process."""
    pipeline = tvm.relax.transform.Normalize()
    _guarded(pipeline, _two_equal_constant_sums())
    calls.pass_applications(lambda: pipeline(_two_equal_constant_sums()))
    made = len(tvm.ir.instrument.PassInstrument.__subclasses__())
    for _ in range(3):
        guard, _, records = _guarded(pipeline, _two_equal_constant_sums())
        assert [record.name for record in records] == ["Normalize"], records
        [(name, _, _)] = calls.pass_applications(
            lambda: pipeline(_two_equal_constant_sums()))
    assert name == "Normalize"
    assert len(tvm.ir.instrument.PassInstrument.__subclasses__()) == made

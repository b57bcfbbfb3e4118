"""A guarded run is the run users make: the same tasks and the same executable as the
path under a plain PassContext.

The guard once ran every stage under TVM's `testing.immutable_module`, which raises
inside FoldConstant's nested build (on the registered AnnotateEntryFunc mutation);
FoldConstant swallowed that and folded nothing, so the guarded extract path extracted
other tasks than a plain run (measured 2026-12-04 on the default catalog: 22 of 64
case x path rows differed, light_squeezenet 56 tasks guarded vs 30 plain).
"""
import pytest

from harness.catalog import cases as catalog
from harness.options import Options
from harness.process.isolate import run_isolated

# Cases with constant subgraphs FoldConstant evaluates (the old guard changed each).
FOLDING = ("conv-reshape-concat-nhwc", "Conv2d", "conv-int8-qdq", "split-add-pool-nhwc")
COMPILED = ("conv-float16", "conv-reshape-concat")


def _guarded_and_plain(case_id: str, path: str):
    case = catalog.resolve(case_id)
    guarded = run_isolated(case.id, Options(layout=case.layout, path=path))
    plain = run_isolated(case.id, Options(layout=case.layout, path=path, checks=False,
                                          pass_guard=False))
    return guarded, plain


def _assert_same_outcome(case_id: str, path: str) -> None:
    guarded, plain = _guarded_and_plain(case_id, path)
    assert plain.verdict == "pass", plain.violations
    assert plain.outcome, f"{case_id}: the plain run produced nothing to compare"
    assert guarded.outcome == plain.outcome, (
        f"{case_id} ({path}): the guarded run gave {guarded.outcome_count} signatures, the plain "
        f"run {plain.outcome_count}: the guard changed what it guards")


@pytest.mark.parametrize("case_id", FOLDING)
def test_guarded_extraction_extracts_what_a_plain_run_extracts(case_id):
    _assert_same_outcome(case_id, "extract")


@pytest.mark.parametrize("case_id", COMPILED)
def test_guarded_compile_builds_what_a_plain_run_builds(case_id):
    _assert_same_outcome(case_id, "compile")


@pytest.mark.nightly
@pytest.mark.parametrize("path", ["extract", "compile"])
def test_every_default_case_is_guarded_faithfully(path):
    differ, compared = [], 0
    for case in catalog.select_for_run(None):
        guarded, plain = _guarded_and_plain(case.id, path)
        if plain.verdict == "pass":
            compared += 1
            if guarded.outcome != plain.outcome:
                differ.append(f"{case.id}: guarded {guarded.outcome_count}, "
                              f"plain {plain.outcome_count}")
    assert compared >= 20, f"only {compared} cases ran plainly: nothing much was compared"
    assert not differ, "\n".join(differ)


@pytest.mark.in_process_tvm
def test_the_comparison_catches_a_guard_that_changes_the_run():
    """The seeded fault: TVM's own immutability check as the guard (what the harness once
    did). Under it FoldConstant folds nothing, and the task multiset differs; the
    comparison above is what would see it."""
    import tvm

    from harness.oracles import outcomes
    from harness.tvmapi import calls
    from harness.tvmapi.pipelines import build

    options = Options(layout="nhwc")
    path = build(options)
    model = catalog.resolve("conv-reshape-concat-nhwc").model()

    def extract(config):
        mod = calls.from_onnx(model)
        with tvm.transform.PassContext(opt_level=3, config=config):
            for stage in path.stages:
                mod = stage.run(mod)
        return calls.task_signatures(mod)

    plain = extract({})
    with_tvm_check = extract({"testing.immutable_module": True})
    assert plain and with_tvm_check != plain
    assert outcomes.difference(plain, with_tvm_check, "check", "extract-tasks", "none")

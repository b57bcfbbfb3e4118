"""Invariant 3, the numbers: the compile path runs what it compiles and compares answers.

Each comparison is proved able to fail by a seeded fault only it sees (tests/
seeded_answers.py: rewrites that keep every shape and type), and the fault is named by
its stage or pass; with the comparison off the same fault goes unseen.
"""
from __future__ import annotations

import json
import os

import numpy
import pytest
import seeded_answers
from helpers import TORCH_MODEL, run_in_process

from harness.catalog import cases as catalog
from harness.options import Options
from harness.oracles import numbers
from harness.result import Result
from harness.runner import reproducer
from harness.runner.path_runner import PathRunner
from harness.tvmapi import execute
from harness.verdict import Outcome, Phase

RELU_CASE = "nhwc-input"                 # conv + ReLU: the TIR miscompile has a max to turn
LAYOUT_CASE = "conv-reshape-concat-nhwc"  # ConvertLayout's permute_dims before the compile


def compiled(case: str, copiers=None, **options) -> Result:
    layout = catalog.resolve(case).layout
    return run_in_process(case, copiers=copiers, path="compile", layout=layout, **options)


def wrong(result: Result):
    return [v for v in result.violations if v.kind == Outcome.WRONG_RESULT]


def test_a_clean_model_agrees_on_every_comparison_and_each_depends_on_its_input():
    result = compiled(LAYOUT_CASE)
    assert result.verdict == Outcome.PASS, [v.one_line() for v in result.violations]
    by_name = {record.comparison: record for record in result.answers}
    # the framework's line says which module it was compared with: the one before the
    # layout stage, not what was compiled (that one is compared with it, the line above)
    assert set(by_name) == {"deepcopy copy", "the module before convert-layout",
                            "onnxruntime (the module before convert-layout)"}
    # a lossless copy compiled to the source's code is not run again: its answer is known
    assert by_name.pop("deepcopy copy").status == "not run"
    assert all(record.status == "agree" and record.sensitive for record in by_name.values())
    assert 0 < by_name["onnxruntime (the module before convert-layout)"].max_abs_error < 1e-4


@pytest.mark.parametrize("fault, case", [("shift_padding", RELU_CASE),
                                          ("swap_height_width", LAYOUT_CASE)])
def test_a_pass_changing_only_the_numbers_is_a_wrong_result_named_by_its_stage(fault, case):
    hook = f"{seeded_answers.__file__}:{fault}"
    result = compiled(case, inject_pass=hook)
    [violation] = wrong(result)
    assert (violation.stage, violation.pass_name, violation.phase) == \
        ("injected", "injected", Phase.ANSWER)
    assert "elements differ" in violation.detail and "tolerance" in violation.detail
    # the structure, the signatures and the mutation guard see nothing: only the numbers
    unseen = compiled(case, inject_pass=hook, answers=False)
    assert unseen.verdict == Outcome.PASS and not unseen.answers


def test_a_copier_that_moves_a_numeric_attrs_field_computes_other_numbers():
    result = compiled(RELU_CASE, copiers={"deepcopy": seeded_answers.shifting_copier})
    [violation] = wrong(result)
    assert (violation.phase, violation.copier) == (Phase.COPY, "deepcopy")
    assert "copy computes other numbers" in violation.detail
    # the structural comparison sees this copy too (it is a lossy round trip); only the
    # numbers say how wrong the copy's answer is
    assert Outcome.LOSSY_ROUNDTRIP in {v.kind for v in result.violations}
    assert not wrong(compiled(RELU_CASE, answers=False,
                              copiers={"deepcopy": seeded_answers.shifting_copier}))


def _relu_model():
    """One ONNX Relu: the smallest graph whose compile has a max to turn into a min."""
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_miscompile_inside_tvm_compile_is_named_by_bisecting_its_passes(monkeypatch):
    name = seeded_answers.seed_tir_miscompile(monkeypatch)
    model = _relu_model()
    result = PathRunner(Options(path="compile")).run_model(model, Result("relu"))
    [violation] = wrong(result)
    assert (violation.stage, violation.pass_name) == ("compile", name)
    assert "(answer vs onnxruntime)" == violation.access_path
    assert "onnx.reference agrees with onnxruntime" in violation.detail   # a second opinion
    assert "right without it" in violation.detail
    unseen = PathRunner(Options(path="compile", answers=False)).run_model(model, Result("relu"))
    # (AnnotateEntryFunc's registered mutation shows on any model: not this fault's)
    assert {v.kind for v in unseen.violations} <= {Outcome.MUTATED}




@pytest.mark.nightly   # torch's import and an export: ~12 s of the default run
def test_a_pytorch_model_is_compared_with_pytorch_and_a_miscompile_named(tmp_path,
                                                                         monkeypatch):
    pytest.importorskip("torch", reason="the PyTorch door: pip install -e '.[torch]'")
    from harness import doors
    path = tmp_path / "net.py"
    path.write_text(TORCH_MODEL)
    model = doors.named("torch").load(str(path))
    # (a clean PyTorch model agrees: tv-squeezenet1_0 in `report --path compile`)
    name = seeded_answers.seed_tir_miscompile(monkeypatch)
    result = PathRunner(Options(path="compile")).run_model(model, Result("net"))
    [violation] = wrong(result)
    assert (violation.pass_name, violation.access_path) == (name, "(answer vs PyTorch)")


def test_the_bisect_names_nothing_when_every_optional_pass_skipped_is_wrong_too():
    from harness.oracles import answer_bisect
    from harness.tvmapi import targets
    from harness.tvmapi.calls import from_onnx
    model = catalog.resolve(RELU_CASE).model()
    mod = from_onnx(model)
    arrays = numbers.draw(execute.input_specs(mod), 0, False)
    wrong_answer = [numpy.zeros((1, 32, 32, 8), "float32")]
    culprit = answer_bisect.first_wrong_pass(mod, targets.make_target("llvm", 2), arrays,
                                             wrong_answer)
    assert culprit.pass_name is None and "every optional pass skipped" in culprit.why


def test_a_wrong_result_reproducer_runs_standalone_and_reproduces(tmp_path, reproducer_runner):
    hook = f"{seeded_answers.__file__}:shift_padding"
    options = Options(path="compile", inject_pass=hook)
    model = catalog.resolve(RELU_CASE).model()
    result = PathRunner(options).run_model(model, Result(RELU_CASE))
    [violation] = wrong(result)
    path = reproducer.write(str(tmp_path), violation=violation, options=options,
                            versions={}, command="test", model=model,
                            module=__import__("harness").doors.to_relax(model))
    code, printed, errors = reproducer_runner.run(path)   # as `python repro.py`, forked
    assert code == 1, printed + errors
    assert "reproduces: after injected the module computes other numbers" in printed


def test_a_framework_reproducer_compares_with_the_embedded_answer(tmp_path, capsys):
    """A framework comparison's repro.py embeds the framework's numbers: with them as they
    were it does not reproduce on a clean module; with them changed it does."""
    import base64
    import io

    from harness import doors
    from harness.verdict import Violation
    options = Options(path="compile")
    model = catalog.resolve(RELU_CASE).model()
    violation = Violation(Outcome.WRONG_RESULT, "compile", "(answer vs onnxruntime)",
                          "seeded", phase=Phase.ANSWER)
    path = reproducer.write(str(tmp_path), violation=violation, options=options,
                            versions={}, command="test", model=model,
                            module=doors.to_relax(model))
    # in this process (the stage reproducer above runs standalone): its exit code and line
    assert _run_script(path, capsys) == (0, "does not reproduce")
    spec = json.loads((tmp_path / "reproducer.json").read_text())
    archive = numpy.load(io.BytesIO(base64.b64decode(spec["answer"]["expected"])))
    buffer = io.BytesIO()
    numpy.savez_compressed(buffer, archive["arr_0"] + 0.5)
    spec["answer"]["expected"] = base64.b64encode(buffer.getvalue()).decode()
    (tmp_path / "repro.py").write_text(reproducer.render(spec))
    code, line = _run_script(path, capsys)
    assert code == 1 and line.startswith("reproduces: TVM's answer is not onnxruntime's")


def _run_script(path, capsys) -> tuple[int, str]:
    """(exit code, last line printed) of a reproducer run as __main__ in this process."""
    import runpy
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(path), run_name="__main__")
    return exited.value.code, capsys.readouterr().out.strip().splitlines()[-1]


SYMBOLIC = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n", 4), "float32"):
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y
"""


def test_a_module_with_symbolic_inputs_is_not_compared_and_says_why():
    import tvm
    result = PathRunner(Options(path="compile")).run(tvm.script.from_source(SYMBOLIC),
                                                     Result("symbolic"))
    assert result.verdict == Outcome.PASS, [v.one_line() for v in result.violations]
    [record] = result.answers
    assert record.status == "not compared" and "symbolic" in record.detail


def _raises_at_run():
    """`main` calls a packed function no runtime registers: it compiles, and raises when
    run. Built, not parsed: the call's type argument is `ty_args` from 0.27 on."""
    import inspect

    from tvm import relax

    from harness.tvmapi import ir
    keyword = "ty_args" if "ty_args" in inspect.signature(
        relax.op.call_pure_packed).parameters else "sinfo_args"
    builder = ir.block_builder()
    x = relax.Var("x", ir.tensor_annotation((2,), "float32"))
    with builder.function("main", [x]):
        y = builder.emit(relax.op.call_pure_packed(
            "harness.seeded.no_such_function", x,
            **{keyword: ir.tensor_annotation((2,), "float32")}))
        builder.emit_func_output(y)
    return builder.get()


COLLECTIVE = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        y = R.ccl.allreduce(x, "sum")
        return y
"""


def test_a_compiled_module_that_cannot_run_its_float_inputs_is_an_error_with_a_reproducer(
        tmp_path, reproducer_runner):
    options = Options(path="compile")
    mod = _raises_at_run()
    result = PathRunner(options).run(mod, Result("raises"))
    [violation] = result.violations
    assert (violation.kind, violation.phase, violation.access_path) == \
        (Outcome.ERROR, Phase.ANSWER, "(run)")
    path = reproducer.write(str(tmp_path), violation=violation, options=options,
                            versions={}, command="test", module=mod)
    code, printed, errors = reproducer_runner.run(path)
    assert code == 1 and "reproduces: compile (answer) raised" in printed, printed + errors


def test_a_collective_needs_disco_so_its_module_is_not_run_and_says_why():
    import tvm
    result = PathRunner(Options(path="compile")).run(tvm.script.from_source(COLLECTIVE),
                                                     Result("collective"))
    assert not [v for v in result.violations if v.phase == Phase.ANSWER]
    [record] = result.answers
    assert record.status == "not compared" and "relax.ccl.allreduce" in record.detail


# ---- the tolerance policy ---------------------------------------------------------------

def test_same_code_must_agree_bit_for_bit_and_other_code_within_the_float_tolerance():
    want = [numpy.array([1.0, 2.0, 3.0], "float32")]
    nudged = [want[0] + numpy.float32(1e-6)]
    assert not numbers.compare(want, nudged, numbers.SAME_CODE).agree
    assert numbers.compare(want, nudged, numbers.DIFFERENT_CODE).agree
    far = [want[0] + numpy.float32(1e-2)]
    difference = numbers.compare(want, far, numbers.DIFFERENT_CODE)
    assert not difference.agree and "3 of 3 elements differ" in difference.mismatch


def test_integers_and_booleans_compare_exactly_whatever_the_code():
    assert not numbers.compare([numpy.array([1, 2])], [numpy.array([1, 3])],
                               numbers.DIFFERENT_CODE).agree
    assert not numbers.compare([numpy.array([True])], [numpy.array([False])],
                               numbers.DIFFERENT_CODE).agree


def test_nan_matches_nan_and_an_infinity_only_its_own_sign():
    want = [numpy.array([numpy.nan, numpy.inf], "float32")]
    assert numbers.compare(want, [want[0].copy()], numbers.SAME_CODE).agree
    flipped = [numpy.array([numpy.nan, -numpy.inf], "float32")]
    assert not numbers.compare(want, flipped, numbers.DIFFERENT_CODE).agree


def test_a_shape_or_output_count_difference_is_a_mismatch():
    want = [numpy.zeros((2, 3), "float32")]
    assert "shape" in numbers.compare(want, [numpy.zeros((3, 2), "float32")],
                                      numbers.DIFFERENT_CODE).mismatch
    assert "outputs" in numbers.compare(want, want * 2, numbers.DIFFERENT_CODE).mismatch


def test_an_answer_that_does_not_move_with_its_input_is_insensitive():
    uniform = [numpy.full((1, 1000), 0.001, "float32")]
    assert not numbers.sensitive(uniform, [uniform[0].copy()])
    assert numbers.sensitive(uniform, [uniform[0] + 0.01])


def test_inputs_are_seeded_and_drawn_in_the_domain_their_ops_accept():
    specs = [execute.InputSpec("x", (4, 4), "float32"), execute.InputSpec("i", (3,), "int64"),
             execute.InputSpec("b", (2,), "bool")]
    first, again = numbers.draw(specs, 0, False), numbers.draw(specs, 0, False)
    assert all(numpy.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert first[0].min() >= -1 and first[0].max() < 1 and first[0].min() < 0
    assert set(first[1].tolist()) <= {0, 1} and first[2].dtype == bool
    positive = numbers.draw(specs, 0, True)[0]
    assert positive.min() >= 0.5 and positive.max() < 1.5


def test_the_reproducer_draws_the_same_inputs_as_the_harness():
    """repro.py's draw() is written in its template, apart from numbers.draw: the two
    must give the same arrays, or a reproducer compares other inputs than the check."""
    specs = [execute.InputSpec("x", (2, 3), "float32"), execute.InputSpec("i", (4,), "int32")]
    spec = {"answer": {"inputs": [[list(s.shape), s.dtype] for s in specs],
                       "positive": False, "compare": "stage", "expected": None,
                       "reference": None}, "stages": [], "stage": "x"}
    values = reproducer._answer_values(spec)
    namespace = {}
    template = reproducer._template("answer").substitute(values)
    exec(compile("import tvm\nfrom tvm import relax\n" + template, "answer", "exec"),
         namespace)
    drawn = namespace["draw"]()
    harness_drawn = numbers.draw(specs, 0, False)
    assert all(numpy.array_equal(a, b) for a, b in zip(drawn, harness_drawn, strict=True))
    assert os.path.basename(reproducer.TEMPLATES) == "templates"


def test_a_sequence_output_compares_element_by_element_ragged_ones_too():
    """ONNX Runtime answers a sequence output as a list of arrays (SplitToSequence's are of
    several shapes); the compiled module's tuple is flattened in order. Compared as one
    array, a ragged sequence raised in our own code: a harness-error on a TVM that was
    right (node-split_to_sequence_2, 2026-12-07)."""
    parts = [numpy.ones((2, 3), "float32"), numpy.ones((1, 3), "float32")]
    assert numbers.compare([parts], list(parts), numbers.DIFFERENT_CODE).agree
    wrong = [parts[0], numpy.zeros((1, 3), "float32")]
    assert not numbers.compare([parts], wrong, numbers.DIFFERENT_CODE).agree


@pytest.mark.in_process_tvm
def test_a_shape_answer_is_one_int64_output_as_onnx_shape_answers():
    """TVM's ONNX Shape converter returns `R.Shape` for a static input; its values are the
    answer (int64[rank]), not one output per dimension: flattened so, every Shape node test
    read as a wrong answer ("3 outputs where the reference has 1")."""
    import tvm_ffi
    [shape] = execute.flatten(tvm_ffi.Shape((3, 4, 5)))
    assert shape.dtype == numpy.int64 and shape.tolist() == [3, 4, 5]
    assert [array.tolist() for array in execute.flatten(tvm_ffi.Shape(()))] == [[]]


def test_a_random_dropout_is_compared_with_no_reference():
    """A Dropout in training mode draws its mask: neither ONNX Runtime nor onnx.reference
    can be the answer (onnx.reference alone was asked, and 60 of 60 elements 'differed')."""
    from onnx import TensorProto, helper

    from harness.doors import ReferenceUnavailable, onnx_door
    node = helper.make_node("Dropout", ["x", "ratio", "training"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("training", TensorProto.BOOL, [], [True])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    for answer in (onnx_door.onnxruntime_answer, onnx_door.reference_answer):
        with pytest.raises(ReferenceUnavailable, match="drawn at random"):
            answer(model, [numpy.ones(2, "float32")])


def test_the_summary_line_of_a_differing_answer_says_what_differs():
    """A wrong shape read "max abs error 2.38e-07, 0.00055 x the tolerance": the line that
    says `differ` must name the shape (or which elements), not a small number."""
    from harness.cli.main import _answer_lines
    from harness.result import AnswerRecord
    result = Result("case")
    result.answers = [AnswerRecord("onnxruntime", "differ", "output 1: shape () where the "
                                   "reference has (1, 1, 1, 1)", 2.38e-07, 0.0, 0.00055),
                      AnswerRecord("onnx.reference", "differ", "output 0 (float32[4]): 2 of "
                                   "4 elements differ; first at [1]: 1 where the reference "
                                   "has 0; max abs error 1", 1.0, 1.0, 50.0)]
    shape, values = _answer_lines(result)
    assert "shape () where the reference has (1, 1, 1, 1)" in shape and "2.38e-07" not in shape
    assert "2 of 4 elements differ" in values and "50 x the tolerance" in values


def test_a_seeded_wrong_conversion_is_traced_to_its_node_and_read_by_its_cause(monkeypatch):
    """Seeded: the ONNX frontend converts Relu as 2 x relu (every pass of tvm.compile is
    innocent). The answer oracle alone sees it (the copies and the structure agree: the
    module is what the frontend made); the localization names the Relu node, not the Conv
    before it nor the Sigmoid after, with its attributes, and the signature carries it."""
    from onnx import TensorProto, helper, numpy_helper
    from tvm import relax
    from tvm.relax.frontend.onnx import onnx_frontend

    def doubled_relu(cls, bb, inputs, attr, params):
        return relax.op.multiply(relax.op.nn.relu(inputs[0]), relax.const(2.0, "float32"))
    monkeypatch.setattr(onnx_frontend.Relu, "_impl_v13", classmethod(doubled_relu))
    weight = numpy_helper.from_array(
        numpy.random.default_rng(0).standard_normal((2, 3, 3, 3)).astype("float32"), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv0"),
             helper.make_node("Relu", ["c"], ["r"], name="relu0"),
             helper.make_node("Sigmoid", ["r"], ["y"], name="sigmoid0")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6, 6])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result = PathRunner(Options(path="compile")).run_model(model, Result("seeded"))
    [found] = wrong(result)
    assert found.access_path == "(answer vs onnxruntime; first wrong node: Relu)", found
    assert "the first node whose output differs: Relu 'relu0'" in found.detail, found.detail
    assert not [v for v in result.violations if v.kind != Outcome.WRONG_RESULT
                and "AnnotateEntryFunc" not in (v.pass_name or "")], result.violations

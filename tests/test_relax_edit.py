"""The Relax-level reducer's edits of `main` (harness.tvmapi.relax_edit), in-process:
before/expected modules in TVMScript, as TVM's own tests write them; a module written by
an edit reads back as itself through the one loader (the Relax door); a bug of our own
rewriter is ours, never an edit that does not apply."""
import pytest

pytestmark = pytest.mark.in_process_tvm


def _chain():
    """Six bindings, two parameters; `a` is read twice, `x` three times."""
    from tvm.script import ir as I
    from tvm.script import relax as R

    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                a = R.add(x, y)
                b = R.nn.relu(a)
                c = R.multiply(b, x)
                d = R.sum(c, axis=[1])  # noqa: F841 - dead: edits drop it
                e = R.add(c, a)
                gv = R.nn.relu(e)
                R.output(gv)
            return gv
    return Before


def _assert_equal(actual, expected):
    import tvm
    assert actual is not None
    tvm.ir.assert_structural_equal(actual, expected)


def test_cut_ends_main_at_a_binding_and_drops_what_the_output_does_not_need():
    from tvm.script import ir as I
    from tvm.script import relax as R

    from harness.tvmapi import relax_edit

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                a = R.add(x, y)
                b = R.nn.relu(a)
                R.output(b)   # a dataflow var made the output: now visible outside
            return b

    before = _chain()
    assert relax_edit.size(before) == (6, 0)
    _assert_equal(relax_edit.cut(before, 1), Expected)
    assert relax_edit.cut(before, 5) is None   # the last binding: nothing would change
    assert relax_edit.cut(before, 6) is None


def test_start_after_makes_parameters_of_what_the_rest_reads():
    from tvm.script import ir as I
    from tvm.script import relax as R

    from harness.tvmapi import relax_edit

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), a: R.Tensor((2, 3), "float32"),
                 b: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            with R.dataflow():   # `y` went: nothing reads it any more
                c = R.multiply(b, x)
                e = R.add(c, a)
                gv = R.nn.relu(e)
                R.output(gv)
            return gv

    # `a` and `b` (bound up to binding 1) are read later: both become parameters; `d` is
    # dead and goes with dead code elimination.
    _assert_equal(relax_edit.start_after(_chain(), 1), Expected)


def test_drop_reads_an_argument_of_its_type_or_a_new_parameter():
    from tvm.script import ir as I
    from tvm.script import relax as R

    from harness.tvmapi import relax_edit

    @I.ir_module
    class WithoutRelu:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                a = R.add(x, y)
                c = R.multiply(a, x)
                e = R.add(c, a)
                gv = R.nn.relu(e)
                R.output(gv)
            return gv

    @I.ir_module
    class MultiplyAsParameter:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"),
                 c: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                a = R.add(x, y)
                e = R.add(c, a)
                gv = R.nn.relu(e)
                R.output(gv)
            return gv

    @I.ir_module
    class WithoutTheOutput:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                a = R.add(x, y)
                b = R.nn.relu(a)
                c = R.multiply(b, x)
                e = R.add(c, a)
                R.output(e)   # the plain output var's stand-in becomes visible
            return e

    before = _chain()
    _assert_equal(relax_edit.drop(before, 1, "arg"), WithoutRelu)
    _assert_equal(relax_edit.drop(before, 2, "param"), MultiplyAsParameter)
    _assert_equal(relax_edit.drop(before, 5, "arg"), WithoutTheOutput)
    assert relax_edit.drop(before, 3, "arg") is None   # R.sum changes the shape


def test_constants_become_parameters_one_or_all_or_zeros():
    import numpy as np
    from tvm import relax
    from tvm.script import ir as I
    from tvm.script import relax as R

    from harness.tvmapi import relax_edit
    from harness.tvmapi.ir import tensor_annotation

    x = relax.Var("x", tensor_annotation((1, 4), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x], attrs={"num_input": 1}):
        with builder.dataflow():
            w = relax.const(np.arange(8, dtype="float32").reshape(4, 2))
            b = relax.const(np.ones(2, dtype="float32"))
            y = builder.emit(relax.op.matmul(x, w))
            z = builder.emit(relax.op.add(y, b))
            out = builder.emit_output(relax.op.multiply(z, relax.const(2.0, "float32")))
        builder.emit_func_output(out)
    before = builder.get()

    @I.ir_module
    class AllParameters:
        @R.function
        def main(x: R.Tensor((1, 4), "float32"), c0: R.Tensor((4, 2), "float32"),
                 c1: R.Tensor((2,), "float32")) -> R.Tensor((1, 2), "float32"):
            R.func_attr({"num_input": 3})   # the new parameters are inputs too
            with R.dataflow():
                y = R.matmul(x, c0)
                z = R.add(y, c1)
                gv = R.multiply(z, R.const(2.0, "float32"))   # a scalar prints inline: kept
                R.output(gv)
            return gv

    assert relax_edit.size(before) == (3, 10)
    params = relax_edit.constants_to_params(before)
    _assert_equal(params, AllParameters)
    assert relax_edit.size(params) == (3, 0)
    one = relax_edit.constants_to_params(before, [1])   # the bias only
    assert relax_edit.size(one) == (3, 8) and len(one["main"].params) == 2
    rest = relax_edit.constants_to_params(one)   # a name of its own for the next one
    assert [relax_edit.var_name(param) for param in rest["main"].params] == ["x", "c0", "c1"]
    assert int(rest["main"].attrs["num_input"]) == 3
    zeros = relax_edit.constants_to_zeros(before)
    assert relax_edit.size(zeros) == (3, 10)
    assert not any(relax_edit.values(c).any() for c in relax_edit.constants(zeros))
    assert relax_edit.constants_to_zeros(zeros) is None   # nothing left to zero


def test_an_edited_module_prints_and_parses_back_as_itself(tmp_path):
    """Candidates travel as TVMScript files: what a child wrote is what the check reads."""
    from harness.doors import relax_door
    from harness.tvmapi import relax_edit, structure
    edited = relax_edit.start_after(_chain(), 0)
    for form in ("tvmscript", "json"):
        path = relax_edit.save(edited, str(tmp_path / form), form)
        read = relax_door.DOOR.load(path).module   # the one loader: the Relax door's
        assert structure.structural_equal(read, edited), form


def test_a_bug_in_the_rewriter_is_ours_never_an_edit_that_does_not_apply(monkeypatch):
    """TVM refusing an edit means it does not apply (None); an exception of our own code
    in the edit is a HarnessBug (the child's harness-error: the reducer stops)."""
    from harness.classify import HarnessBug
    from harness.tvmapi import relax_edit, relax_rewrite
    mod = _chain()
    assert relax_edit.drop(mod, 0) is not None

    # seeded: the well-formedness helper raises from our frame (a C callable: no frame of
    # the test's own, which classify would count as user code under test)
    monkeypatch.setattr(relax_rewrite, "well_formed", {}.__getitem__)
    with pytest.raises(HarnessBug, match="KeyError"):
        relax_edit.drop(mod, 0)


def test_a_module_without_main_has_its_largest_public_function_edited():
    """relax.frontend.nn exports name their entry `forward` (beside small helpers): the
    reducer cut nothing there (`0 -> 0 Relax bindings`). It edits `forward` now."""
    from tvm.script import ir as I
    from tvm.script import relax as R

    from harness.tvmapi import relax_edit

    @I.ir_module
    class Exported:
        @R.function
        def _initialize_effect() -> R.Tuple(R.Object):
            with R.dataflow():
                state: R.Object = R.null_value()
                gv = (state,)
                R.output(gv)
            return gv

        @R.function
        def forward(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")) \
                -> R.Tensor((2, 3), "float32"):
            with R.dataflow():
                a = R.add(x, y)
                b = R.nn.relu(a)
                gv = R.multiply(b, x)
                R.output(gv)
            return gv

    assert relax_edit.size(Exported) == (3, 0)
    cut = relax_edit.cut(Exported, 0)
    assert cut is not None and relax_edit.size(cut)[0] == 1
    assert "_initialize_effect" in [gv.name_hint for gv in cut.functions]

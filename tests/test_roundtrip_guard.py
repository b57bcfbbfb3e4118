"""Invariant 2 bites: a copy that drops or changes an attrs field is caught, field named."""
import pytest

import seeded
from harness.tvmapi import compat
from harness.oracles import fieldwise
from helpers import run_in_process

pytestmark = pytest.mark.in_process_tvm


def _conv_attrs(**overrides):
    relax = compat.tvm().relax
    x = relax.Var("x", compat.tensor_annotation((1, 4, 8, 8), "float32"))
    w = relax.Var("w", compat.tensor_annotation((8, 4, 3, 3), "float32"))
    return relax.op.nn.conv2d(x, w, **overrides).attrs


def test_attrs_differing_in_one_field_are_named():
    found = fieldwise.compare_attrs(_conv_attrs(), _conv_attrs(data_layout="NHWC"))
    assert found is not None
    assert found[0] == "data_layout"


def test_equal_attrs_compare_equal():
    assert fieldwise.compare_attrs(_conv_attrs(strides=(2, 2)), _conv_attrs(strides=(2, 2))) is None


def test_every_field_is_enumerated_by_reflection():
    names = compat.field_names(_conv_attrs())
    assert {"strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
            "out_layout", "out_dtype"} <= set(names)


def test_copy_that_drops_a_field_is_lossy():
    """The seed bug: LoadJSON cannot find a field the copy lost."""
    result = run_in_process(copiers={"json": seeded.drop_field("relax.attrs.Conv2DAttrs",
                                                               "out_layout")})
    assert result.verdict == "lossy-roundtrip"
    violation = result.violations[0]
    assert violation.stage == "import"
    assert "out_layout" in violation.detail


def test_copy_that_changes_a_field_is_lossy_with_the_path():
    result = run_in_process(copiers={"json": seeded.change_string_field(
        "relax.attrs.Conv2DAttrs", "data_layout", "NHWC")})
    assert result.verdict == "lossy-roundtrip"
    assert any("data_layout" in v.path for v in result.violations), result.violations


def test_real_copiers_are_lossless_and_extract_the_same_tasks():
    result = run_in_process(full_copies=True)
    assert result.verdict == "pass", result.violations

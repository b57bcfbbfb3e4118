"""Hypothesis properties over random conv/layout graphs and every registered attrs type.

Example counts come from the hypothesis profile (dev by default; ci, nightly via
--hypothesis-profile or HARNESS_HYPOTHESIS_PROFILE).
"""
import subprocess
import sys

import onnx
import pytest
from helpers import SEEDED, seeded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.catalog import graphs, known_issues
from harness.cli import fuzz
from harness.fuzz.fuzz_graphs import graph_specs, to_relax
from harness.options import Options
from harness.oracles import attrs_sweep as attrs_check
from harness.tvmapi import calls, ir, loading, reflection

pytestmark = pytest.mark.in_process_tvm

DOORS = st.sampled_from(["onnx", "relax"])


@given(graph_specs())
def test_strategy_graphs_are_valid_through_both_doors(spec):
    model = graphs.to_onnx(spec)
    onnx.checker.check_model(model, full_check=True)
    assert ir.well_formed(calls.from_onnx(model))
    assert ir.well_formed(to_relax(spec))


def test_every_op_of_the_table_is_built_by_both_builders():
    """One entry per op in the catalog's table (data, no TVM); its Relax builder lives in
    tvmapi, keyed by the same name: a new op without one is refused here, not mid-fuzz."""
    from harness.tvmapi import graph_relax
    assert set(graphs.OPS) == set(graph_relax.BUILDERS)
    assert all(op.name == name for name, op in graphs.OPS.items())


@given(graph_specs(), DOORS)
def test_path_keeps_both_invariants_and_is_deterministic(spec, door):
    result, conversions = fuzz.check_graph(spec, door, Options())
    fuzz.steer_toward_conversions(conversions)
    # Registered known issues (tirx.AnnotateEntryFunc on graphs FoldConstant evaluates)
    # are allowed; anything else is news.
    assert not fuzz.news(result), [v.one_line() for v in fuzz.news(result)]
    assert result.outcome_count > 0


def test_the_steering_signal_counts_the_layout_conversions_convert_layout_inserted():
    conv = graphs.Layer("conv", (0,), (("bias", False), ("dilation", 1), ("groups", 1),
                                       ("k", 3), ("out_c", 4), ("pads", (1, 1, 1, 1)),
                                       ("stride", 1)))
    nhwc = (("relax.nn.conv2d", ("NHWC", "OHWI")),)
    counts = {}
    for name, desired in (("nhwc", nhwc), ("none", ())):
        spec = graphs.GraphSpec((3, 8, 8), "NCHW", (conv,), desired)
        inserted: list[int] = []
        fuzz.check_spec(spec, "relax", Options(),
                        observe=fuzz.layout_conversions_inserted(inserted))
        counts[name] = inserted
    # NCHW in and out around an NHWC conv: data and weight in, the result out.
    assert counts["nhwc"] == [3], counts
    assert counts["none"] == [], counts     # no desired layout: no convert-layout stage


def test_seeded_mutating_pass_is_found_shrunk_and_reproduced(tmp_path, reproducer_runner):
    # Injected first, so each shrink step stops at the first stage (fail-fast).
    options = Options(inject_pass=seeded("mutate_in_place"),
                      inject_before="decompose-ops-for-inference")
    outcome = fuzz.run(40, seed=0, options=options, out_dir=str(tmp_path))
    assert outcome.failure is not None and outcome.violation.kind == "mutated"
    assert len(outcome.spec.layers) == 1, outcome.spec   # shrunk to the smallest graph
    code, out, _ = reproducer_runner.run(outcome.reproducer)
    assert code == 1, out
    assert "reproduces: pass injected mutated the module it was given, in place" in out


def test_seeded_lossy_field_is_found_shrunk_and_reproduced(tmp_path, reproducer_runner):
    copier = f"{SEEDED}:change_string_field('relax.attrs.Conv2DAttrs', 'data_layout', 'NHWC')"
    outcome = fuzz.run(60, seed=0, copier=copier, out_dir=str(tmp_path))
    assert outcome.failure is not None and outcome.violation.kind == "lossy-roundtrip"
    assert [layer.op for layer in outcome.spec.layers] == ["conv"], outcome.spec
    code, out, _ = reproducer_runner.run(outcome.reproducer)
    assert code == 1, out
    assert "copy differs" in out


ATTRS_TYPES = reflection.registered_attrs_types()


@pytest.mark.parametrize("type_key", ATTRS_TYPES)
def test_attrs_type_round_trips_field_by_field(type_key):
    row = attrs_check.check_type(type_key, examples=10)
    if row.verdict == "unhandled":
        assert '"field"' in row.detail and '"type"' in row.detail   # named, never silent
        pytest.skip(f"strategy builder cannot generate {row.detail}")
    assert row.verdict == "pass", row.detail
    assert row.examples > 0


def test_every_registered_attrs_type_is_generated():
    rows = [attrs_check.check_type(k, examples=1) for k in ATTRS_TYPES]
    assert len(ATTRS_TYPES) >= 79
    # The four object-valued schemas (DeviceMesh, IndexMap, ffi.Object, VDevice) included.
    assert [r.type_key for r in rows if r.verdict == "unhandled"] == []


def test_a_constructor_refusing_every_value_is_unhandled_not_a_pass(monkeypatch):
    def refuse(type_key, **values):
        raise ValueError("seeded refusal")
    monkeypatch.setattr(reflection, "make_object", refuse)
    row = attrs_check.check_type("relax.attrs.Conv2DAttrs", examples=5)
    assert row.verdict == "unhandled" and row.examples == 0 and row.refused > 0
    assert "seeded refusal" in row.detail


def test_seeded_lossy_attrs_copier_is_caught_with_the_field():
    def lossy(attrs):   # a copy that loses the strides the original had
        fields = {n: reflection.get_field(attrs, n) for n in reflection.field_names(attrs)}
        return reflection.make_object(reflection.type_key(attrs), **{**fields, "strides": [7, 7]})
    row = attrs_check.check_type("relax.attrs.Conv2DAttrs", examples=10,
                                 copiers=(("lossy", lossy),))
    assert row.verdict == "lossy-roundtrip"
    assert "strides" in row.detail


_SUBNORMAL = known_issues.lookup("attrs:subnormal-float", loading.versions())


@pytest.mark.xfail(_SUBNORMAL is not None, strict=True, raises=AssertionError,
                   reason=_SUBNORMAL.reference if _SUBNORMAL else "")
def test_subnormal_float_attrs_survive_deepcopy():
    obj = reflection.make_object("relax.attrs.BatchNormAttrs", axis=1, epsilon=1e-5, center=True,
                             scale=True, momentum=2.2250738585072034e-309, training=False)
    assert attrs_check.round_trip_difference(obj) is None


@pytest.mark.nightly   # 8 s of CLI; the attrs sweep itself is tested in-process above
def test_attrs_cli_prints_a_row_per_type():
    proc = subprocess.run([sys.executable, "-m", "harness", "attrs", "--type",
                           "relax.attrs.Conv2D*", "--examples", "5"],
                          capture_output=True, text=True, cwd=SEEDED.rsplit("/tests/", 1)[0])
    assert proc.returncode == 0, proc.stderr
    assert "relax.attrs.Conv2DAttrs" in proc.stdout and "pass" in proc.stdout


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(graph_specs())
def test_every_generated_graph_has_positive_shapes_and_imports(spec):
    """Valid by construction: no strategy may produce a zero-size tensor (conv_transpose with
    pad k-1 on a 2-pixel input once did)."""
    assert all(min(shape) >= 1 for shape in graphs.shapes_of(spec)), spec
    assert ir.well_formed(calls.from_onnx(graphs.to_onnx(spec)))

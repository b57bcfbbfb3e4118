"""The op-program generator (`fuzz --generator ops`): Relax programs over the whole operator
registry, real TVM.

The registry is read by reflection and drives well over the conv/layout table's ops; every
drawn program builds and is well formed; a seeded fault only a scan or reduction exposes is
found and shrunk by this generator, while the conv/layout generator never makes those ops.
The probe over every op and the rarer seeded fault (one op among 190) are nightly.
"""

import pytest
import seeded_ops
from helpers import ROOT
from hypothesis import HealthCheck, given, settings

from harness.catalog import op_programs
from harness.cli import fuzz
from harness.fuzz.fuzz_graphs import graph_specs
from harness.fuzz.fuzz_graphs import to_relax as graph_to_relax
from harness.fuzz.fuzz_ops import driven, op_programs_strategy, to_relax, undriven
from harness.options import Options
from harness.tvmapi import calls, ir, op_registry
from harness.tvmapi.loading import tvm

pytestmark = pytest.mark.in_process_tvm

SEEDED_OPS = f"{ROOT}/tests/seeded_ops.py"
# The conv/layout generator's ops, as its Relax builders emit them.
CONV_LAYOUT_OPS = {"relax.nn.conv2d", "relax.nn.conv2d_transpose", "relax.nn.max_pool2d",
                   "relax.nn.avg_pool2d", "relax.nn.batch_norm", "relax.nn.relu",
                   "relax.nn.leakyrelu", "relax.add", "relax.reshape", "relax.permute_dims",
                   "relax.concat", "relax.split", "relax.image.resize2d"}


def test_the_registry_drives_well_over_the_conv_layout_ops():
    signatures, skipped = op_registry.signatures(), op_registry.skipped()
    names = {signature.op for signature in signatures}
    assert len(names) >= 150, len(names)
    assert CONV_LAYOUT_OPS <= names
    # every relax op is either driven or skipped with its reason: none dropped silently
    assert names | set(skipped) == set(op_registry.relax_op_names())
    assert not names & set(skipped)
    assert skipped and all(reason.strip() for reason in skipped.values())
    assert "impure" in skipped["relax.print"]
    assert "no Python builder" in skipped["relax.vm.alloc_tensor"]
    # the kinds came from reflection: conv2d reads two tensors, cumsum one and an axis
    by_name = {signature.op: signature for signature in signatures}
    assert by_name["relax.nn.conv2d"].tensor_params == 2
    assert {p.name: p.kinds for p in by_name["relax.cumsum"].params}["axis"] == ("int", "none")


def test_a_program_whose_first_draws_are_all_refused_still_applies_an_op():
    """Hypothesis met inputs, a (1, 1) and a (1,) float32, where twelve random ops in a row
    were refused: the program was empty. Its first application then falls back to the first
    op TVM accepts with its simplest arguments."""
    from harness.tvmapi import op_registry
    from harness.tvmapi.op_program_relax import CheckingGraph
    signatures = op_registry.signatures()
    refused = next(signature for signature in signatures if signature.op == "relax.nn.conv1d")

    class AlwaysRefused:   # (1, 1) and (1,) inputs, then conv1d of a 2-D tensor, every draw
        def integer(self, low, high):
            return 1 if low == 1 and high in (2, 5) else low
        def choice(self, options):
            return refused if refused in options else options[0]
        def boolean(self):
            return False
    program = op_programs.draw_program(AlwaysRefused(), signatures, CheckingGraph())
    assert [fresh.shape for fresh in program.inputs] == [(1,)], program
    assert program.ops() == ["relax.abs"], program
    assert ir.well_formed(to_relax(program))


@given(op_programs_strategy())
def test_every_drawn_program_builds_and_is_well_formed(program):
    mod = to_relax(program)
    assert ir.well_formed(mod), program
    # each one TVM accepted (a refused draw is drawn again; a first application whose draws
    # were all refused falls back to the first op TVM accepts with its simplest arguments)
    assert program.applications
    # the spec is plain data: the reproducer's printed form reads back as the same spec
    names = vars(op_programs)
    assert eval(repr(program), names) == program   # our own repr
    params = mod["main"].params
    fresh = sum(1 for a in program.applications for _, v in a.args
                for x in (v if isinstance(v, tuple) else (v,)) if isinstance(x, op_programs.Fresh))
    assert len(params) == len(program.inputs) + fresh


def test_a_tuple_output_is_numbered_field_by_field():
    program = op_programs.OpProgram(
        (op_programs.Fresh((4, 2)),),
        (op_programs.Application("relax.split", (("x", op_programs.Ref(0)),
                                                 ("indices_or_sections", 2)), 2),
         op_programs.Application("relax.add", (("x1", op_programs.Ref(1)),
                                               ("x2", op_programs.Ref(2))))))
    assert op_programs.outputs(program) == [3]
    mod = to_relax(program)
    assert ir.well_formed(mod)
    assert ir.count_calls(mod, ("relax.split", "relax.add")) == 2


def test_the_steering_signal_names_the_passes_that_rewrote():
    program = op_programs.OpProgram(
        (op_programs.Fresh((2, 3)),),
        (op_programs.Application("relax.add", (("x1", op_programs.Ref(0)),
                                               ("x2", op_programs.Ref(0)))),))
    rewrote: set[str] = set()
    result = fuzz.check_spec(program, "relax", Options(), rewrote=rewrote)
    assert not fuzz.news(result), [v.one_line() for v in fuzz.news(result)]
    assert {"LegalizeOps", "AnnotateTIROpPattern"} <= rewrote, rewrote
    assert "DecomposeOps" not in rewrote   # nothing to decompose in an add


def test_the_steering_scores_only_what_the_campaign_has_not_met():
    """Scored on the rewrite count, a campaign climbed onto a few ops (seed 0: 70 of 183
    ops in 400 programs, the nightly's seeded cumsum never drawn): the score is what is
    new, so a program met again scores nothing and a new op scores even with no rewrite."""
    seen: set = set()
    assert fuzz.pairs_not_met(["relax.add"], {"LegalizeOps", "FuseOps"}, seen) == 3
    assert fuzz.pairs_not_met(["relax.add"], {"LegalizeOps", "FuseOps"}, seen) == 0
    assert fuzz.pairs_not_met(["relax.add"], {"LegalizeOps", "FoldConstant"}, seen) == 1
    assert fuzz.pairs_not_met(["relax.cumsum"], set(), seen) == 1
    assert fuzz.pairs_not_met(["relax.cumsum", "relax.add"], set(), seen) == 0


def _called_ops(mod) -> set[str]:
    found = set()

    def visit(expr):
        if isinstance(expr, tvm().relax.Call) and isinstance(expr.op, tvm().ir.Op):
            found.add(str(expr.op.name))
    tvm().relax.analysis.post_order_visit(mod["main"], visit)
    return found


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(graph_specs())
def test_the_conv_layout_generator_never_makes_a_scan_or_reduction(spec):
    """Why only the op generator can find the seeded faults below: the old generator's
    modules, through either door, call none of those ops."""
    for mod in (graph_to_relax(spec), calls.from_onnx(__import__(
            "harness.catalog.graphs", fromlist=["to_onnx"]).to_onnx(spec))):
        assert not _called_ops(mod) & set(seeded_ops.REDUCTIONS), spec


def _seeded_options(name: str) -> Options:
    # Injected first, so an example that trips it stops at the first stage.
    return Options(inject_pass=f"{SEEDED_OPS}:{name}",
                   inject_before="decompose-ops-for-inference")


@pytest.fixture
def only_the_seeded_fault_is_news(monkeypatch):
    """On random programs the path has findings of its own (LegalizeOps refusing what
    inference accepted, attention's tasks following object identity): what `fuzz
    --generator ops` is for, reported by it; here only the seeded pass's violation counts,
    so the test measures the search for it."""
    news = fuzz.news
    monkeypatch.setattr(fuzz, "news", lambda result: [
        violation for violation in news(result) if violation.pass_name == "injected"])


def _found_and_shrunk(outcome, most: int):
    assert outcome.failure is not None, "the seeded fault was not found"
    assert outcome.violation.pass_name == "injected", outcome.violation.one_line()
    assert "seeded failure" in outcome.violation.detail
    assert 1 <= len(outcome.spec.applications) <= most, outcome.spec
    assert set(outcome.spec.ops()) & set(seeded_ops.REDUCTIONS), outcome.spec


def test_the_op_generator_draws_a_reduction_and_shrinks_it_to_one_application():
    """The search the seeded tests below make, without the path: quick."""
    from hypothesis import find
    found = find(op_programs_strategy(), lambda p: set(p.ops()) & set(seeded_ops.REDUCTIONS),
                 settings=settings(max_examples=100, database=None, deadline=None,
                                   derandomize=True,   # a fixed search: never flaky
                                   suppress_health_check=list(HealthCheck)))
    assert len(found.applications) == 1 and found.ops()[0] in seeded_ops.REDUCTIONS, found


@pytest.mark.nightly   # 13 s, 40 programs; the default run's seeded op fault is the cumsum one
def test_a_seeded_reduction_fault_is_found_and_shrunk_by_the_op_generator(
        tmp_path, only_the_seeded_fault_is_news, monkeypatch):
    """Also: the shrinker draws one program many times, and each is checked once."""
    checked, check_spec = [], fuzz.check_spec

    def counted(spec, *args, **kwargs):
        checked.append(repr(spec))
        return check_spec(spec, *args, **kwargs)
    monkeypatch.setattr(fuzz, "check_spec", counted)
    outcome = fuzz.run(40, seed=0, options=_seeded_options("fail_on_reduction"),
                       out_dir=str(tmp_path), generator="ops")
    _found_and_shrunk(outcome, most=2)
    assert outcome.reproducer and outcome.reproducer.endswith("repro.py")
    assert len(set(checked)) == len(checked) < outcome.examples, (
        len(checked), outcome.examples)


@pytest.mark.nightly   # ~100 s: one op of 183 found, shrunk, its reproducer run; 40 old graphs
def test_a_seeded_cumsum_fault_is_found_by_the_op_generator_only(
        tmp_path, only_the_seeded_fault_is_news, reproducer_runner):
    options = _seeded_options("fail_on_cumsum")
    outcome = fuzz.run(400, seed=0, options=options, out_dir=str(tmp_path), generator="ops")
    _found_and_shrunk(outcome, most=3)
    assert outcome.spec.ops().count("relax.cumsum") == 1, outcome.spec
    code, printed, errors = reproducer_runner.run(outcome.reproducer)
    assert code == 1, printed + errors
    old = fuzz.run(40, seed=0, options=options, out_dir=str(tmp_path))
    assert old.failure is None and old.examples == 40


@pytest.mark.nightly   # ~12 s: every op drawn alone until TVM accepts one
def test_every_op_left_out_says_why():
    left_out, signatures = undriven(), driven()
    assert len(signatures) >= 150, len(signatures)
    assert set(left_out) | {s.op for s in signatures} == set(op_registry.relax_op_names())
    assert all(reason.strip() for reason in left_out.values())
    assert "not tensors of static shape" in left_out["relax.nonzero"]   # data-dependent


def test_the_new_modules_keep_the_layer_rules():
    """tests/test_layers.py's checks, over this generator's modules by name: placed in one
    layer each, imports downward only, no circles, and the catalog's spec free of TVM."""
    import test_layers
    files, imports = test_layers.read_tree(test_layers.HARNESS)
    ours = ("op_registry", "op_program_relax", "pass_rewrites", "op_programs", "fuzz_ops")
    assert {m.rpartition(".")[2] for m in files} >= set(ours)
    offenders = (test_layers.unplaced(files) + test_layers.upward(files, imports)
                 + test_layers.cycles(files, imports)
                 + test_layers.catalog_reaching_tvm(imports))
    assert not [o for o in offenders if any(name in o for name in ours)], offenders


def test_a_campaign_that_can_apply_no_op_is_a_harness_error_not_a_clean_run(monkeypatch):
    """On 0.25.0 the generator took every inferred type for something other than a tensor
    (it tested for `relax.TensorType`, there an older class than the struct info) and drew
    programs of inputs alone: 300 programs, exit 0, nothing tested. Seeded here by the
    same misreading: the campaign refuses to pass."""
    from harness.tvmapi import op_program_relax
    monkeypatch.setattr(op_program_relax, "_static_tensor", lambda ty: None)
    with pytest.raises(fuzz.NothingDrawn, match="applied no op in"):
        fuzz.run(fuzz.NOTHING_DRAWN_AFTER, seed=0, generator="ops", out_dir="unused")

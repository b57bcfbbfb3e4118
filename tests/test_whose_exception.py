"""One call decides whose exception it was (classify.Call): a bug seeded in each of our
copiers, comparers and the suite guard is harness-error (exit 4), never lossy-roundtrip,
mutated or error; TVM raising at the very same place is still the violation it was.

A fault of ours is seeded as a release change would make it: a function our code calls is
gone (None), so a frame of ours raises. The control makes TVM raise there instead, from
its own frames. Small Relax modules built with the BlockBuilder: under a second a run.
"""
import importlib.util
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from helpers import ROOT, SMALL_CASE, run_in_process
from helpers import seeded as seeded_spec

from harness import classify
from harness.options import Options
from harness.oracles import outcomes, roundtrip
from harness.result import Result
from harness.runner.path_runner import PathRunner
from harness.suite import summary
from harness.suite.session_guard import SessionGuard
from harness.tvmapi import copiers, ir, loading, pass_guard, reflection, structure
from harness.verdict import Violation

pytestmark = pytest.mark.in_process_tvm

OURS = None   # the function our code calls is gone: our own frame raises TypeError


def tvm_raises(*_args, **_kwargs):
    """TVM refusing, from its own frames, wherever our code called it (a call no seed
    replaces)."""
    return loading.tvm().target.Target("seeded-no-such-kind")


def _small_module():
    """x + a weight, then softmax: a tensor constant (the TVMScript copier lifts it) and an
    attrs object (the fieldwise comparison reads it)."""
    relax = loading.tvm().relax
    builder = ir.block_builder()
    x = relax.Var("x", ir.tensor_annotation((2, 3), "float32"))
    with builder.function("main", [x]):
        with builder.dataflow():
            total = builder.emit(relax.op.add(x, relax.const(np.ones((2, 3), "float32"))))
            out = builder.emit_output(relax.op.nn.softmax(total, axis=1))
        builder.emit_func_output(out)
    return builder.get()


# ---- where a fault is seeded: (monkeypatch, the replacement) -> None ----------------

def _deepcopy(monkeypatch, failing):
    """Both ways the deepcopy copier copies: copy.deepcopy, and its state loaded from the
    module's text when the guard has it (copiers.deepcopy_from_text)."""
    monkeypatch.setattr(copiers, "copy", types.SimpleNamespace(deepcopy=failing))
    monkeypatch.setattr(copiers, "_rebuild_as_deepcopy", failing)


def _json_load(monkeypatch, failing):
    monkeypatch.setattr(loading.tvm().ir, "load_json", failing)


def _tvmscript_parse(monkeypatch, failing):
    monkeypatch.setattr(loading.tvm().script, "from_source", failing)


def _constant_lifting(monkeypatch, failing):
    monkeypatch.setattr(ir, "constant_tensor", failing)


def _constant_binding(monkeypatch, failing):
    monkeypatch.setattr(ir, "var_name", failing)


def _structural_comparison(monkeypatch, failing):
    monkeypatch.setattr(loading.ffi(), "get_first_structural_mismatch", failing)


def _fieldwise_comparison(monkeypatch, failing):
    monkeypatch.setattr(reflection, "field_names", failing)


def _outcome_comparison(monkeypatch, failing):
    monkeypatch.setattr(outcomes, "Counter", failing)


def _structural_hash(monkeypatch, failing):
    monkeypatch.setattr(loading.ffi(), "structural_hash", failing)


def _guard_reference_count(monkeypatch, failing):
    monkeypatch.setattr(structure, "_use_count", lambda: failing)


def _fast_tvmscript(mod):   # the TVMScript copier without its confirming form
    return copiers.tvmscript_copy(mod)


JSON = {"json": roundtrip.json_roundtrip}
# (seed, copier table, our file the harness-error names, TVM's verdict at that place)
IN_CHECK = {
    "deepcopy": (_deepcopy, {"deepcopy": copiers.deepcopy}, "copiers.py", "lossy-roundtrip"),
    "json": (_json_load, JSON, "copiers.py", "lossy-roundtrip"),
    # TVMScript's parser refusing its printer's text: the two disagree, a lossy round trip
    "tvmscript-parse": (_tvmscript_parse, {"tvmscript": copiers.tvmscript_copy},
                        "copiers.py", "lossy-roundtrip"),
    "constant-lifting": (_constant_lifting, {"tvmscript": _fast_tvmscript}, "copiers.py",
                         "lossy-roundtrip"),
    "constant-binding": (_constant_binding, {"tvmscript": _fast_tvmscript}, "copiers.py",
                         "lossy-roundtrip"),
    # TVM failing inside a comparison: an `error` in phase checks
    "structural-comparison": (_structural_comparison, JSON, "structure.py", "error"),
    "fieldwise-comparison": (_fieldwise_comparison, JSON, "fieldwise.py", "error"),
    "outcome-comparison": (_outcome_comparison, {"deepcopy": copiers.deepcopy},
                           "outcomes.py", "error"),
}


def _check(copier_table) -> Result:
    runner = PathRunner(Options(), copier_table=copier_table)
    return runner.run(_small_module(), Result("small"))


@pytest.mark.parametrize("site", IN_CHECK)
def test_a_bug_of_ours_in_a_copier_or_comparer_is_harness_error(monkeypatch, site):
    seed, table, our_file, _ = IN_CHECK[site]
    _small_module()   # built before the seed: the BlockBuilder may call what it replaces
    seed(monkeypatch, OURS)
    result = _check(table)
    assert result.verdict == "harness-error" and result.exit_code == 4, result.violations
    assert [v.kind for v in result.violations] == ["harness-error"], result.violations
    assert our_file in result.violations[0].detail, result.violations[0].detail


@pytest.mark.parametrize("site", IN_CHECK)
def test_tvm_raising_in_a_copier_or_comparer_is_still_the_violation(monkeypatch, site):
    seed, table, _, verdict = IN_CHECK[site]
    module = _small_module()
    seed(monkeypatch, tvm_raises)
    result = PathRunner(Options(), copier_table=table).run(module, Result("small"))
    assert result.verdict == verdict, result.violations
    assert "harness-error" not in [v.kind for v in result.violations]
    assert 'ValueError: Target kind "seeded-no-such-kind"' in result.violations[0].detail


IN_SUITE_GUARD = {
    "deepcopy": (_deepcopy, {"deepcopy": copiers.deepcopy}, "lossy-roundtrip"),
    "structural-comparison": (_structural_comparison, JSON, "error"),
    "fieldwise-comparison": (_fieldwise_comparison, JSON, "error"),
    "structural-hash": (_structural_hash, JSON, "error"),
    "reference-count": (_guard_reference_count, JSON, "error"),
}


def _guarded(copier_table, module):
    """The suite guard's record of one test that runs a pass over `module`."""
    guard = SessionGuard(copier_table=copier_table)
    guard.install()
    try:
        guard.begin_test("seeded::run")
        out = loading.tvm().relax.transform.Normalize()(module)
        return guard.end_test(), out
    finally:
        guard.uninstall()


def _judged(record) -> dict:
    return summary.summarize([{"test": record.test,
                               "violations": [v.to_json() for v in record.violations]}])


@pytest.mark.parametrize("fault", ["ours", "tvm"])
@pytest.mark.parametrize("site", IN_SUITE_GUARD)
def test_the_suite_guard_records_our_bug_as_harness_error_and_tvms_as_its_violation(
        monkeypatch, site, fault):
    """Never into the test (the pass still runs); recorded through the one classifier."""
    seed, table, tvm_kind = IN_SUITE_GUARD[site]
    module = _small_module()
    seed(monkeypatch, OURS if fault == "ours" else tvm_raises)
    record, out = _guarded(table, module)
    assert out is not None
    kinds = {v.kind for v in record.violations}
    judged = _judged(record)
    if fault == "ours":
        assert kinds == {"harness-error"}, record.violations
        assert judged["status"] == "harness-error" and judged["exit"] == 4, judged
    else:
        assert tvm_kind in kinds and "harness-error" not in kinds, record.violations
        assert judged["exit"] == 1, judged


@pytest.mark.parametrize("fault, expected", [(OURS, classify.HarnessBug), (tvm_raises, None)])
def test_the_pass_guards_hash_is_none_only_when_tvm_cannot_hash(monkeypatch, fault,
                                                                expected):
    """It once swallowed any exception: a bug of ours read as "no hash"."""
    module = _small_module()
    _structural_hash(monkeypatch, fault)
    if expected is None:
        assert pass_guard._hash(module) is None
    else:
        with pytest.raises(expected):
            pass_guard._hash(module)


@pytest.mark.parametrize("fault", ["ours", "tvm"])
def test_the_mutation_replay_is_a_courtesy_for_tvm_only(monkeypatch, fault):
    """Naming where a stage mutated its input replays the path: TVM failing the replay
    leaves the `mutated` verdict standing; our own bug there is harness-error."""
    _structural_comparison(monkeypatch, OURS if fault == "ours" else tvm_raises)
    result = run_in_process(copiers={}, inject_pass=seeded_spec("mutating_pass"))
    kinds = [v.kind for v in result.violations]
    if fault == "ours":
        assert kinds == ["harness-error"], result.violations
        assert "structure.py" in result.violations[0].detail
    else:
        assert "mutated" in kinds and "harness-error" not in kinds, result.violations


def _foldable_module():
    """main adds x to the sum of two constants: FoldConstant builds that sum in a nested
    build (its own PassContext, whose passes the guard sees too)."""
    relax = loading.tvm().relax
    builder = ir.block_builder()
    x = relax.Var("x", ir.tensor_annotation((2, 3), "float32"))
    ones = np.ones((2, 3), "float32")
    with builder.function("main", [x]):
        with builder.dataflow():
            folded = builder.emit(relax.op.add(relax.const(ones), relax.const(ones)))
            out = builder.emit_output(relax.op.add(x, folded))
        builder.emit_func_output(out)
    return builder.get()


def test_our_bug_in_the_pass_guard_inside_a_nested_build_is_not_swallowed(monkeypatch):
    """FoldConstant swallows whatever its nested build raises, the instrument's exceptions
    included: a bug of the guard's there once vanished, the guarded stage folded nothing,
    and the sweep blamed FoldConstant ("not deterministic": the unguarded second run
    folded). The guard keeps it instead, and the runner raises it once the stage ends."""
    real = structure.module_identity

    def identity(mod):   # our identity map, broken for the nested build's TIR modules only
        relax_functions = [f for _, f in mod.functions_items()
                           if isinstance(f, loading.tvm().relax.Function)]
        return real(mod) if relax_functions else None
    monkeypatch.setattr(pass_guard, "structure", types.SimpleNamespace(
        **{**vars(structure), "module_identity": identity}))
    options = Options(path="pass", sweep_pass="FoldConstant", sweep_point="legalized")
    result = PathRunner(options, copier_table={}).run(_foldable_module(), Result("fold"))
    assert [v.kind for v in result.violations] == ["harness-error"], result.violations
    # Where our broken map is first used: the pieces the pass was handed.
    assert "seen_pieces.py" in result.violations[0].detail, result.violations[0].detail


def test_tvm_failing_in_the_pass_guards_own_call_inside_a_nested_build_changes_nothing(
        monkeypatch):
    """TVM raising in the guard's own call (an identity map of a nested build's module) is
    never raised into TVM, where FoldConstant would swallow it and fold nothing: the stage
    runs as unguarded (the same folded module) and the failure is an `error` in the checks."""
    real = structure.module_identity

    def identity(mod):   # TVM refusing, for the nested build's TIR modules only
        relax_functions = [f for _, f in mod.functions_items()
                           if isinstance(f, loading.tvm().relax.Function)]
        return real(mod) if relax_functions else tvm_raises()
    plain = {}
    PathRunner(Options(path="pass", sweep_pass="FoldConstant", sweep_point="legalized",
                       checks=False, pass_guard=False), copier_table={},
               observe=lambda name, before, after: plain.setdefault(name, after)).run(
        _foldable_module(), Result("fold"))
    monkeypatch.setattr(pass_guard, "structure", types.SimpleNamespace(
        **{**vars(structure), "module_identity": identity}))
    seen = {}
    options = Options(path="pass", sweep_pass="FoldConstant", sweep_point="legalized")
    runner = PathRunner(options, copier_table={},
                        observe=lambda name, before, after: seen.setdefault(name, after))
    result = runner.run(_foldable_module(), Result("fold"))
    errors = [v for v in result.violations if v.detail.startswith("ValueError")]
    assert errors and errors[0].kind == "error" and errors[0].phase == "checks", \
        result.violations
    assert "harness-error" not in [v.kind for v in result.violations], result.violations
    assert structure.structural_equal(seen["pass:FoldConstant"], plain["pass:FoldConstant"])


@pytest.mark.parametrize("fault", ["ours", "tvm"])
def test_the_cross_release_comparison_raises_our_bug_and_reports_tvms(monkeypatch, tmp_path,
                                                                      fault):
    """B comparing the module A saved with its own import: TVM raising there is the
    load's finding, our own bug leaves as a HarnessBug (the child's harness-error)."""
    from harness.oracles.recorder import Recorder
    from harness.runner import cross_release
    module = _small_module()
    (tmp_path / cross_release.MODULE).write_text(copiers.save_json(module))
    _structural_comparison(monkeypatch, OURS if fault == "ours" else tvm_raises)
    result = Result("small")

    def compare():
        cross_release._compare(module, Options(), str(tmp_path), loading.versions(), result,
                               Recorder(result))
    if fault == "ours":
        with pytest.raises(classify.HarnessBug):
            compare()
        return
    compare()
    details = [v.detail for v in result.violations]
    assert any("comparing it raises ValueError: Target kind" in d for d in details), details
    assert "harness-error" not in [v.kind for v in result.violations]


ATTRS_SWEEP = {"deepcopy": (_deepcopy, "lossy-roundtrip"),
               "fieldwise-comparison": (_fieldwise_comparison, "error")}


@pytest.mark.parametrize("fault", ["ours", "tvm"])
@pytest.mark.parametrize("site", ATTRS_SWEEP)
def test_the_attrs_sweep_stops_on_our_bug_and_reports_tvms(monkeypatch, site, fault):
    """hypothesis re-raises what the property raised: our HarnessBug leaves the sweep
    (the CLI's exit 4), TVM's exception is the row's verdict."""
    from harness.oracles import attrs_sweep
    seed, verdict = ATTRS_SWEEP[site]
    seed(monkeypatch, OURS if fault == "ours" else tvm_raises)

    def sweep():
        return attrs_sweep.check_type("relax.attrs.SoftmaxAttrs", examples=3,
                                      copiers=(("deepcopy", copiers.deepcopy),))
    if fault == "ours":
        with pytest.raises(classify.HarnessBug):
            sweep()
    else:
        assert sweep().verdict == verdict


@pytest.mark.parametrize("fault", ["ours", "tvm"])
def test_writing_a_reproducer_keeps_the_verdict_and_never_hides_our_bug(monkeypatch, fault):
    """TVM failing it is said beside the check's verdict; our own bug says so too and is a
    harness-error beside the check's findings (it was once only a note)."""
    from harness.process import child
    from harness.runner import reproducer
    monkeypatch.setattr(reproducer, "write", OURS if fault == "ours" else tvm_raises)
    result = Result("seeded")
    result.add(Violation("error", "import", "(frontend)", "seeded"))   # no module to embed
    request = {"out_dir": "", "command": "", "sizes": "", "deadline": 1.0}
    child._reproduce(request, None, Options(), result, result.violations[0])
    assert result.reproducer is None and result.reproducer_error
    kinds = [v.kind for v in result.violations]
    assert kinds == (["error", "harness-error"] if fault == "ours" else ["error"]), kinds


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is None, reason="no torch here")
def test_a_bug_of_ours_building_a_torch_model_is_no_cached_refusal(monkeypatch, tmp_path):
    """Only torch.export refusing a model makes it `unsupported` (cached as such): a bug of
    ours building it once read as that refusal, a "does not apply", forever after."""
    from harness.doors import torch_models
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    monkeypatch.setattr(torch_models, "_builder_arguments", OURS)
    model = torch_models.TorchModel("classification", "resnet18")
    with pytest.raises(classify.HarnessBug, match="torch_models.py"):
        model.export()
    assert model.refusal() is None


SEEDED_COPIER = """\
# Loaded at interpreter start: our deepcopy copier calls a function that is gone.
import types
import harness.tvmapi.copiers as copiers
copiers.copy = types.SimpleNamespace()
"""


def test_cli_exits_4_for_a_bug_in_our_copier(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SEEDED_COPIER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    proc = subprocess.run([sys.executable, "-m", "harness", "check", SMALL_CASE, "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "harness-error" in proc.stdout and "lossy-roundtrip" not in proc.stdout


def test_a_module_structural_hashing_does_not_cover_is_unsupported_on_a_path():
    """A module carrying a compiled runtime module in its attrs (`external_mods`, as
    nn.ExternModule leaves it): tvm_ffi has no structural hash for it, so the guards cannot
    fingerprint the source. `unsupported` with TVM's reason, not an `error` against TVM."""
    relax_module = _foldable_module()
    compiled = loading.tvm().compile(relax_module, target="llvm")
    carrying = relax_module.with_attr("external_mods", [getattr(compiled, "mod", compiled)])
    result = PathRunner(Options(), copier_table={}).run(carrying, Result("extern"))
    assert [(v.kind, v.access_path) for v in result.violations] == [
        ("unsupported", "(structural hash)")], result.violations
    assert "StructuralHash is not supported" in result.violations[0].detail

"""Every failure classified by what really happened: TVM's exception is a violation,
the harness's own exception is harness-error (exit 4), only a signal is a crash."""
import os
import subprocess
import sys
import traceback

import pytest
import seeded
from helpers import ROOT, SMALL_CASE, run_in_process

from harness import classify
from harness.oracles import outcomes
from harness.verdict import UnknownVerdict, Violation, worst

SITECUSTOMIZE = """\
# Loaded at interpreter start: breaks a harness function from the inside.
import harness.oracles.outcomes as outcomes
outcomes.Counter = None   # difference() now raises TypeError in harness code
"""


@pytest.mark.in_process_tvm
def test_exception_while_extracting_from_the_copy_is_lossy_naming_the_copier():
    result = run_in_process(copiers={"deepcopy": seeded.drop_a_primfunc})
    assert result.verdict == "lossy-roundtrip", result.violations
    on_copy = [v for v in result.violations if v.access_path == "(deepcopy copy)"]
    assert on_copy, [v.one_line() for v in result.violations]
    assert on_copy[0].stage == "extract-tasks"
    assert "deepcopy copy of its input" in on_copy[0].detail


@pytest.mark.in_process_tvm
def test_harness_bug_in_a_check_is_harness_error_not_a_violation(monkeypatch):
    monkeypatch.setattr(outcomes, "Counter", None)
    result = run_in_process()
    assert result.verdict == "harness-error", result.violations
    assert result.exit_code == 4
    assert "outcomes.py" in result.violations[-1].detail


def test_origin_tells_harness_code_from_tvm_and_user_code():
    def user_code():
        raise ValueError("from a user's pass")
    with pytest.raises(ValueError) as raised:
        user_code()
    assert classify.origin(raised.value) == classify.TVM
    with pytest.raises(TypeError) as raised:
        outcomes.difference([("a",)], None, "x", "stage", "copier")   # raises inside
    assert classify.origin(raised.value) == classify.HARNESS


@pytest.mark.in_process_tvm
def test_origin_is_the_innermost_frame_through_a_callback_from_tvm(monkeypatch):
    """TVM's expression visitor calls back into the TVMScript copier (its read-only scan
    for constants, before its mutator): a fault there has TVM's frames (post_order_visit,
    tvm-ffi's C++ callback frames) outside ours, and is ours. TVM refusing a call of ours
    is TVM's, though our frames are outside."""
    from harness.tvmapi import copiers, ir
    monkeypatch.setattr(ir, "constant_tensor", ir.return_type)   # raises on any constant
    module = _module_with_a_tensor_constant()
    with pytest.raises(AttributeError) as raised:
        copiers.lift_constants(module)
    files = [frame.filename for frame in traceback.extract_tb(raised.value.__traceback__)]
    assert any(name.endswith("analysis.py") for name in files), files   # through TVM's visitor
    assert classify.origin(raised.value) == classify.HARNESS
    with pytest.raises(Exception) as raised:
        copiers.load_json('{"root": 1, "nodes": []}')
    assert classify.origin(raised.value) == classify.TVM


def _module_with_a_tensor_constant():
    import numpy as np

    from harness.tvmapi import ir
    from harness.tvmapi.loading import tvm
    relax = tvm().relax
    builder = ir.block_builder()
    x = relax.Var("x", ir.tensor_annotation((2, 2), "float32"))
    with builder.function("main", [x]):
        out = builder.emit(relax.op.add(x, relax.const(np.ones((2, 2), "float32"))))
        builder.emit_func_output(out)
    return builder.get()


@pytest.mark.in_process_tvm
@pytest.mark.parametrize("path", ["check", "pass-sweep"])
def test_a_bug_in_a_copier_is_harness_error_not_a_lossy_copy(monkeypatch, path):
    """Seeded in our TVMScript copier (reached from TVM's mutator callback): `check` and
    the pass sweep say harness-error (exit 4) with our frames, never lossy-roundtrip."""
    from harness.cli.sweep_rows import row_of
    from harness.tvmapi import copiers, ir
    monkeypatch.setattr(ir, "constant_tensor", ir.return_type)   # raises on any constant
    table = {"tvmscript": lambda mod: copiers.tvmscript_copy(mod)}   # not memoized
    sweep = {"path": "pass", "sweep_pass": "FoldConstant"} if path == "pass-sweep" else {}
    result = run_in_process(copiers=table, **sweep)
    assert result.verdict == "harness-error" and result.exit_code == 4, result.violations
    assert [v.kind for v in result.violations] == ["harness-error"], result.violations
    assert "ir.py" in result.violations[0].detail and "AttributeError" in \
        result.violations[0].detail
    if path == "pass-sweep":
        row = row_of("FoldConstant", SMALL_CASE, "imported", result)
        assert row["verdict"] == "harness-error" and row["exit"] == 4, row


def test_unknown_verdict_kinds_are_refused():
    with pytest.raises(UnknownVerdict):
        Violation("mutated-ish", "stage", "path", "detail")
    with pytest.raises(UnknownVerdict):
        worst(["pass", "fine"])


def _broken_harness_env(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))


def test_cli_exits_4_when_the_harness_itself_fails_in_the_child(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "harness", "check", SMALL_CASE, "--quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=_broken_harness_env(tmp_path))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "harness-error" in proc.stdout


def test_git_bisect_stops_on_a_harness_error_instead_of_blaming_a_commit(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = lambda *args: subprocess.run(["git", "-C", str(repo), *args], check=True,  # noqa: E731
                                       capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    for index in range(3):
        (repo / "file").write_text(str(index))
        git("add", "-A")
        git("-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", f"c{index}")
    first, last = git("rev-list", "--max-parents=0", "HEAD"), git("rev-parse", "HEAD")
    git("bisect", "start", last, first)
    (tmp_path / "site").mkdir()
    env = _broken_harness_env(tmp_path / "site")
    check = f"{sys.executable} -m harness check {SMALL_CASE} --quiet"
    proc = subprocess.run(["git", "-C", str(repo), "bisect", "run", sys.executable, "-m",
                           "harness", "bisect-step", "--source", str(repo),
                           "--build-command", "true", "--check-command", check],
                          capture_output=True, text=True, env=env, timeout=900)
    output = proc.stdout + proc.stderr
    assert "is the first bad commit" not in output, output
    assert "aborting the bisect" in output, output

"""The reducer keeps the failure's signature, survives crashes, resumes, and writes a
short standalone reproducer that exits 1 where the failure reproduces."""
import json
import os

import onnx
import pytest
from helpers import cli, cli_here, seeded

from harness.catalog import cases as catalog
from harness.options import Options
from harness.reduce import phases
from harness.reduce.driver import Reducer
from harness.result import Result
from harness.signature import Signature
from harness.verdict import Violation

TVMSCRIPT_LINE_GOAL = 40
DROPS = phases.named("node drops")


def _tvmscript_lines(repro: str) -> int:
    text = open(repro).read()
    start = text.index("SCRIPT = ")
    end = text.index("def load", start)
    return len([line for line in text[start:end].splitlines()[1:-1] if line.strip()])


def _printed(ran) -> tuple[int, str]:
    """(exit code, stdout and stderr) of a reproducer_runner run."""
    code, stdout, stderr = ran
    return code, stdout + stderr


def test_reduce_a_catalog_finding_to_a_short_reproducer(tmp_path, reproducer_runner):
    code, out, err = cli("reduce", "conv-sum-nhwc", "--out", str(tmp_path), "--budget", "300")
    assert code == 1, out + err
    repro = tmp_path / "repro.py"
    assert _tvmscript_lines(str(repro)) <= TVMSCRIPT_LINE_GOAL
    assert reproducer_runner.run(repro)[:2] == (
        1, "reproduces: convert-layout raised InternalError: Check failed: (res != "
           "std::string::npos) is false: Invalid SLayout:can't find S in source layoutABCDE\n")
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert state["nodes"] < state["original_nodes"]
    assert state["signature"]["stage"] == "convert-layout"


# Nightly: ~12 s of crashing children; the default run keeps the crash verdict
# (test_isolation) and a reduction to a short reproducer (above).
@pytest.mark.nightly
def test_a_crash_while_reducing_is_a_data_point_and_the_crash_is_reduced(
        tmp_path, reproducer_runner):
    code, out, err = cli("reduce", "conv-reshape-concat", "--out", str(tmp_path), "--budget", "300")
    assert code == 0 and "nothing to reduce" in out   # a passing case is not reduced
    code, out, err = cli("check", "conv-reshape-concat", "--inject-pass", seeded("abort"),
                         "--reduce", "--out", str(tmp_path / "crash"), "--budget", "300")
    assert code == 1, out + err
    state = json.loads((tmp_path / "crash" / "reduce-state.json").read_text())
    assert state["signature"]["kind"] == "crash"
    assert state["nodes"] == 1, state
    # the final check died too: a second child only wrote the reproducer
    code, out = _printed(reproducer_runner.run(tmp_path / "crash" / "repro.py"))
    assert code == 1 and "killed the process (signal 6)" in out, out


@pytest.mark.nightly   # 12 s; the nightly also resumes a Relax reduction (test_relax_reduce.py)
def test_an_interrupted_reduction_resumes_where_it_stopped(tmp_path):
    code, out, err = cli("reduce", "conv-dropout-nhwc", "--out", str(tmp_path),
                         "--budget", "0.001")
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert state["phases_done"] == [] and state["nodes"] == state["original_nodes"]
    assert "budget of 0.001 s spent" in err
    code, out, err = cli("reduce", "conv-dropout-nhwc", "--out", str(tmp_path),
                         "--budget", "600", "--resume")
    assert code == 1, out + err
    assert "resuming" in err
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert state["nodes"] <= 2 and os.path.exists(tmp_path / "repro.py")


def test_resume_refuses_another_cases_reduction(tmp_path):
    """Once wrote a repro.py labelled conv-sum that reproduced the dropout bug."""
    dropout = Options(layout="nhwc").to_json()
    (tmp_path / "reduce-state.json").write_text(json.dumps({
        "signature": Signature("error", "convert-layout", "ConvertLayout", "x").to_json(),
        "original_nodes": 2, "nodes": 1, "case": "conv-dropout-nhwc", "options": dropout}))
    code, out, err = cli_here("reduce", "conv-sum-nhwc", "--out", tmp_path, "--resume")
    assert code == 2 and "holds the reduction of conv-dropout-nhwc" in err, err
    code, out, err = cli_here("reduce", "conv-dropout-nhwc", "--out", tmp_path, "--resume",
                              "--path", "compile")
    assert code == 2 and "path='extract'" in err, err   # same case, other options


def _fake_reducer(tmp_path, failing_op):
    """A reducer whose check is "the model still has a `failing_op` node" (no TVM)."""
    reducer = Reducer("conv-reshape-concat", Options(), str(tmp_path), budget=60, timeout=60,
                      log=lambda text: None)

    def check(model):
        result = Result("candidate")
        if any(node.op_type == failing_op for node in model.graph.node):
            result.add(Violation("error", "zero-pipeline", "(exception)", "E: x", "FuseOps"))
        return result
    reducer.check = check
    return reducer


def test_node_drops_stay_in_place_after_a_drop_and_never_recheck_a_candidate(tmp_path):
    model = catalog.resolve("conv-reshape-concat").model()
    reducer = _fake_reducer(tmp_path, "Conv")
    reducer.start(model, Signature("error", "zero-pipeline", "FuseOps", "E: x"))
    checked = []
    original = reducer.check
    reducer.check = lambda candidate: checked.append(candidate.SerializeToString()) or \
        original(candidate)
    reduced = reducer.reduce(DROPS, model)
    assert [node.op_type for node in reduced.graph.node].count("Conv") >= 1
    assert len(reduced.graph.node) < len(model.graph.node)
    assert len(checked) == len(set(checked)) == reducer.state.candidates   # each once
    # the same walk again asks nothing new: every candidate is remembered by its bytes
    before = reducer.state.candidates
    assert reducer.reduce(DROPS, model).SerializeToString() == reduced.SerializeToString()
    assert reducer.state.candidates == before


@pytest.mark.nightly   # 11 s: a reduction of an import failure and two repro.py runs
def test_an_import_failures_reproducer_reproduces_and_goes_green_when_fixed(
        tmp_path, reproducer_runner):
    """Once printed a raw traceback (KeyError: 'import') and said "reproduces" for a model
    that imports fine."""
    from harness.runner import reproducer
    refused = Violation("error", "import", "(frontend)", "AttributeError: 'Var' object has no "
                        "attribute 'value'")
    path = reproducer.write(str(tmp_path), violation=refused, options=Options(),
                            versions={}, command="test",
                            model=catalog.resolve("node-constant_pad").model())
    code, out = _printed(reproducer_runner.run(path))
    assert code == 1 and "reproduces: the ONNX frontend raised" in out, out
    # "fixed upstream": a model the frontend imports in its place
    onnx.save(catalog.resolve("Conv2d").model(), str(tmp_path / "model.onnx"))
    code, out = _printed(reproducer_runner.run(path))
    assert code == 0 and "does not reproduce: the model imports" in out, out


@pytest.mark.in_process_tvm
@pytest.mark.nightly   # waits out a deadline (7 s)
def test_a_hang_reproducer_waits_for_its_deadline_and_says_so(tmp_path, reproducer_runner):
    """Once reused the crash template's blocking waitpid: it waited forever."""
    from harness.runner import reproducer
    from harness.tvmapi import calls, loading
    options = Options(inject_pass=seeded("hang"))
    hang = Violation("timeout", "injected", "(process)", "no result after 1 s", "injected", 1)
    module = calls.from_onnx(catalog.resolve("conv-reshape-concat").model())
    path = reproducer.write(str(tmp_path), violation=hang, options=options,
                            versions=loading.versions(), command="test", module=module,
                            deadline=1)
    code, out = _printed(reproducer_runner.run(path))
    assert code == 1 and "did not finish within 1 s" in out, out


@pytest.mark.in_process_tvm
def test_a_module_func_hook_is_embedded_in_its_reproducer(tmp_path, reproducer_runner):
    """`--inject-pass seeded:mutate_in_place` (a module name, not a file) once crashed the
    reproducer writer with FileNotFoundError."""
    from harness.runner import reproducer
    from harness.tvmapi import calls, loading
    options = Options(inject_pass="seeded:mutate_in_place", inject_before="zero-pipeline")
    mutation = Violation("mutated", "injected", "(pass input)", "rebound", "injected", 1)
    module = calls.from_onnx(catalog.resolve("conv-reshape-concat").model())
    path = reproducer.write(str(tmp_path), violation=mutation, options=options,
                            versions=loading.versions(), command="test", module=module)
    assert "def mutate_in_place" in open(path).read()   # the hook module's source, embedded
    code, out = _printed(reproducer_runner.run(path))
    assert code == 1 and "reproduces" in out, out

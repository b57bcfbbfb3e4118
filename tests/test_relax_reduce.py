"""The Relax-level reducer: its phases' walk (no TVM: a fake module and check), and a
seeded fault in a module file that only this reducer can shrink, reduced to its two
bindings and a repro.py that reproduces, through an interruption and --resume. Its edits
of `main` are tested in test_relax_edit.py."""
import json
import os

import pytest
from helpers import cli_here, seeded

from harness.options import Options
from harness.reduce import phases
from harness.reduce.driver import Reducer
from harness.reduce.kinds import RelaxModule
from harness.result import Result
from harness.signature import Signature
from harness.verdict import Violation

# ---- the phases' walk, without TVM ------------------------------------------------


def _fake(tmp_path, monkeypatch, ops: list[str]):
    """A reducer whose children are faked (no TVM): a module file holds a JSON list of op
    names, an edit task edits the list, and a check fails where a softmax reads a matmul
    (the seeded fault below, in miniature)."""
    asked, checked = [], []

    def run_isolated(case, options, timeout, work=None):
        result = Result("candidate")
        with open(case) as handle:   # a task's module is its case: the file it reads
            names = json.load(handle)
        if work is None:
            checked.append(tuple(names))
            pairs = zip(names, names[1:], strict=False)
            if any(a == "matmul" and b == "softmax" for a, b in pairs):
                result.add(Violation("error", "injected", "(exception)", "E: x", "injected"))
            return result
        task = work.request
        asked.append((task["edit"], task["args"]))
        index, by = (task["args"] + [0, "arg"])[:2]
        made = {"cut": names[:index + 1], "start": names[index + 1:],
                "drop": names[:index] + names[index + 1:] if by == "arg" else None,
                }.get(task["edit"])
        if not made or made == names:
            result.task_output = {"path": None}
            return result
        path = task["out"] + ".py"
        with open(path, "w") as handle:
            json.dump(made, handle)
        result.task_output = {"path": path, "bindings": len(made), "elements": 0,
                              "constants": 0, "label": f"{task['edit']} {index}"}
        return result
    reducer = Reducer("fake", Options(), str(tmp_path), budget=60, timeout=60,
                      log=lambda text: None, run_child=run_isolated)
    reducer.start(None, Signature("error", "injected", "injected", "E: x"), door="relax")
    module = RelaxModule(json.dumps(ops).encode(), ".py", len(ops))
    reducer.save(module)
    return reducer, module, asked, checked


def test_the_relax_phases_shrink_to_the_failing_pair_and_never_ask_twice(tmp_path,
                                                                         monkeypatch):
    ops = ["relu", "add", "matmul", "add", "exp", "matmul", "softmax", "add", "softmax",
           "tanh", "matmul", "relu"]
    reducer, module, asked, checked = _fake(tmp_path, monkeypatch, ops)
    module = reducer.reduce(phases.named("relax: shortest failing prefix"), module)
    assert json.loads(module.text) == ops[:7]          # ends at the first failing softmax
    module = reducer.reduce(phases.named("relax: latest failing start"), module)
    assert json.loads(module.text) == ["matmul", "softmax"]
    edits = len(asked)
    drops = phases.named("relax: binding drops")
    assert reducer.reduce(drops, module) is module   # nothing more to drop
    assert len(asked) == edits + 4   # each binding by an argument, then by a parameter
    # each distinct candidate checked once ([softmax] alone was a start already) ...
    assert len(checked) == len(set(checked)) == reducer.state.candidates
    # ... and the same walk again asks no child anything: every edit is remembered
    assert reducer.reduce(drops, module) is module and len(asked) == edits + 4
    assert json.loads((tmp_path / "best.py").read_text()) == ["matmul", "softmax"]
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert (state["bindings"], state["best"], state["accepted"]) == (2, "best.py", 2)


# ---- a seeded fault only this reducer can shrink -------------------------------------

# No ONNX graph behind it: a Relax module file, 21 bindings; the seeded pass raises on
# the softmax of a matmul (a8), not on the other softmax (a18).
MODULE = '''# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w1: R.Tensor((8, 8), "float32"),
             w2: R.Tensor((8, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a0 = R.nn.relu(x)
            a1 = R.add(a0, x)
            a2 = R.multiply(a1, a0)
            a3 = R.exp(a2)
            a4 = R.matmul(a3, w1)
            a5 = R.add(a4, a1)
            a6 = R.nn.relu(a5)
            a7 = R.matmul(a6, w2)
            a8 = R.nn.softmax(a7, axis=-1)
            a9 = R.add(a8, a6)
            a10 = R.sigmoid(a9)
            a11 = R.multiply(a10, a9)
            a12 = R.tanh(a11)
            a13 = R.add(a12, a5)
            a14 = R.matmul(a13, w1)
            a15 = R.nn.relu(a14)
            a16 = R.subtract(a15, a13)
            a17 = R.exp(a16)
            a18 = R.nn.softmax(a17, axis=-1)
            a19 = R.add(a18, a15)
            gv = R.multiply(a19, a19)
            R.output(gv)
        return gv
'''


@pytest.mark.nightly   # 9 s: the default run reduces an ONNX finding (test_reduce.py) and
#                        the Relax phases in process (above)
def test_a_relax_module_reduces_to_the_failing_bindings_and_resumes(tmp_path, reproducer_runner):
    module = tmp_path / "attention.py"
    module.write_text(MODULE)
    out = tmp_path / "out"
    check = ["check", module, "--inject-pass", seeded("fail_on_softmax_of_matmul"),
             "--inject-before", "decompose-ops-for-inference", "--quiet", "--reduce",
             "--out", out]
    # Interrupted before its module was written (the budget spent at once) ...
    code, stdout, err = cli_here(*check, "--budget", "0.001")
    state = json.loads((out / "reduce-state.json").read_text())
    assert state["door"] == "relax" and state["phases_done"] == [] and state["best"] == ""
    assert "budget of 0.001 s spent" in err, err
    # ... and continued: the whole reduction, down to the matmul and its softmax.
    code, stdout, err = cli_here(*check, "--budget", "300", "--resume")
    assert code == 1, stdout + err
    assert "resuming" in err
    state = json.loads((out / "reduce-state.json").read_text())
    assert (state["original_bindings"], state["bindings"]) == (21, 2), state
    assert state["signature"]["message"].startswith("ValueError: seeded failure")
    assert "21 Relax bindings -> 2 Relax bindings" in stdout, stdout
    best = (out / "best.py").read_text()
    assert "R.matmul" in best and "R.nn.softmax" in best and "R.tanh" not in best
    code, printed, errors = reproducer_runner.run(out / "repro.py")
    assert code == 1, printed + errors
    assert printed.startswith("reproduces: injected raised ValueError: seeded failure: "
                              "softmax of a matmul"), printed
    assert os.path.exists(out / "reproducer.json")


DROPOUT_MODULE = '''\
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), dtype="float32"),
             w: R.Tensor((4, 3, 3, 3), dtype="float32")) -> R.Tensor((1, 4, 6, 6), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            z = R.nn.relu(y)
            t = R.nn.dropout(z, rate=0.5)
            u = t[0]
            v = R.add(u, u)
            R.output(v)
        return v
'''


def test_a_harness_error_while_checking_a_candidate_stops_the_reduction(tmp_path, monkeypatch):
    """A bug of ours in a candidate's check is exit 4 with the best input kept, never read
    as "this candidate does not fail" (which would reduce worse, silently). The first
    check is real (ConvertLayout on dropout, a Relax file of a user's); the candidates'
    checks are seeded to fail in the harness."""
    from harness.reduce import driver
    path = tmp_path / "dropout.py"
    path.write_text(DROPOUT_MODULE)
    real = driver.run_isolated

    def seeded_harness_error(case, options, **kwargs):
        if kwargs.get("work"):   # the module export: real
            return real(case, options, **kwargs)
        result = Result(case, options=options.to_json())
        result.add(Violation("harness-error", "checks", "(harness)",
                             "AttributeError: seeded (at copiers.py:1 seeded)", phase="checks"))
        return result

    monkeypatch.setattr(driver, "run_isolated", seeded_harness_error)
    out_dir = tmp_path / "reduced"
    code, out, err = cli_here("reduce", path, "--layout", "nhwc", "--out", out_dir)
    assert code == 4, (out, err)
    assert "stopped: the check of candidate 1 ended in a harness error" in err, err
    assert "seeded" in err and (out_dir / "reduce-state.json").exists()
    assert not (out_dir / "repro.py").exists()   # no reproducer of a failure we caused

"""A bug in the reducer's own rewriter stops the reduction (harness-error), never reads as
"this edit does not apply"; TVM refusing an edit still does.

The fault is seeded into harness.tvmapi.relax_rewrite's rebuild, which every edit goes
through: its helper `main_of` swapped for a C callable that raises AttributeError, so the
innermost Python frame is ours (a function of this file would count as user code under
test). The control swaps it for one that makes TVM itself refuse (TVM's TypeError).
"""
import json
import operator

import pytest

from harness.options import Options
from harness.reduce.driver import HarnessStopped, Reducer
from harness.result import Result
from harness.signature import Signature
from harness.verdict import Violation

pytestmark = pytest.mark.in_process_tvm

# Four bindings, no constants: the Relax phases go straight to edits (cut first).
MODULE = '''# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 8), "float32")) \\
            -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            a = R.nn.relu(x)
            b = R.matmul(a, w)
            c = R.nn.softmax(b, axis=-1)
            gv = R.add(c, a)
            R.output(gv)
        return gv
'''
SIGNATURE = Signature("error", "injected", "injected", "E: x")


def _seed_main_of(monkeypatch, seeded) -> None:
    """relax_rewrite.main_of replaced: every edit meets it through rebuild, while the
    export's size (relax_edit's own main_of, bound when relax_edit was first imported)
    does not. So relax_edit is imported first, unseeded: imported while seeded, it would
    keep the seed for the rest of the process (the next test's export would meet it)."""
    import harness.tvmapi.relax_edit  # noqa: F401
    from harness.tvmapi import relax_rewrite
    monkeypatch.setattr(relax_rewrite, "main_of", seeded)


def _our_bug(monkeypatch):
    _seed_main_of(monkeypatch, operator.attrgetter("seeded_missing"))


def _tvm_refuses(monkeypatch):
    import tvm
    _seed_main_of(monkeypatch, lambda mod: tvm.relax.Var("x", 42))


def _module_file(folder) -> str:
    path = folder / "module.py"
    path.write_text(MODULE)
    return str(path)


@pytest.mark.parametrize("seed, expected", [(_our_bug, "harness-bug"), (_tvm_refuses, None)])
def test_an_edit_is_ours_to_fix_or_tvms_to_refuse(tmp_path, monkeypatch, seed, expected):
    from harness.classify import HarnessBug
    from harness.doors import relax_door
    from harness.tvmapi import relax_edit
    module = relax_door.DOOR.load(_module_file(tmp_path)).module
    assert relax_edit.cut(module, 1) is not None   # unseeded, the edit applies
    seed(monkeypatch)
    if expected == "harness-bug":
        with pytest.raises(HarnessBug, match="AttributeError.*seeded_missing"):
            relax_edit.cut(module, 1)
    else:
        assert relax_edit.cut(module, 1) is None   # TVM refused: the edit does not apply


def _reducer(tmp_path, monkeypatch) -> Reducer:
    """A reducer of MODULE whose children run here, through the child's own code (so a
    fault seeded in this process reaches the edits), its checks faked: a candidate fails
    while it has a softmax."""
    from harness.process import child

    def run_isolated(case, options, timeout, work=None):
        if work is None:
            result = Result(case)
            with open(case) as handle:
                if "nn.softmax" in handle.read():   # TVMScript's R.nn, JSON's relax.nn
                    result.add(Violation("error", "injected", "(exception)", "E: x", "injected"))
            return result
        spec, events = tmp_path / "spec.json", tmp_path / "events.jsonl"
        spec.write_text(json.dumps({"case": case, "options": options.to_json(),
                                    "work": work.to_json()}))
        events.unlink(missing_ok=True)
        child.run(str(spec), str(events))
        final = json.loads(events.read_text().splitlines()[-1])
        return Result.from_json(final["result"])

    out = tmp_path / "out"
    out.mkdir()
    reducer = Reducer(_module_file(tmp_path), Options(), str(out), budget=120, timeout=60,
                      log=lambda text: None, run_child=run_isolated)
    reducer.start(None, SIGNATURE, door="relax")
    return reducer


def test_a_bug_in_the_rewriter_stops_the_reduction_as_a_harness_error(tmp_path, monkeypatch):
    reducer = _reducer(tmp_path, monkeypatch)
    _our_bug(monkeypatch)
    with pytest.raises(HarnessStopped, match=r"edit cut \[\d\] ended in a harness error: "
                                             r"AttributeError.*seeded_missing"):
        reducer.run(None)
    assert reducer.state.best == "best.py" and reducer.state.bindings == 4   # kept
    assert reducer.state.edits == 1 and reducer.state.accepted == 0


def test_tvm_refusing_every_edit_leaves_the_module_as_it_is(tmp_path, monkeypatch):
    reducer = _reducer(tmp_path, monkeypatch)
    _tvm_refuses(monkeypatch)
    best = reducer.run(None)
    assert best.bindings == 4 and reducer.state.accepted == 0
    assert reducer.state.edits > 4   # every edit was asked, each refused: none applied
    assert "relax: binding drops" in reducer.state.phases_done


def _tvm_cannot_print(monkeypatch):
    """TVMScript refuses to print the module: TVM's TypeError, raised in TVM's frames."""
    import tvm

    from harness.tvmapi import copiers
    monkeypatch.setattr(copiers, "tvmscript", lambda mod: tvm.relax.Var("x", 42))


def _our_printer_bug(monkeypatch):
    """Our printing helper raises AttributeError (a C callable: the frame is ours)."""
    from harness.tvmapi import copiers
    monkeypatch.setattr(copiers, "tvmscript", operator.attrgetter("seeded_missing"))


def test_tvm_refusing_to_print_tvmscript_reduces_the_module_as_json(tmp_path, monkeypatch):
    """docs/how-to/reduce.md step 5: the module written as TVMScript, else as JSON. TVM refusing
    the TVMScript form is "not this form" (the child answers TVM's reason), never a
    harness error: the reduction goes on as JSON, best.json."""
    from harness.catalog import cases as catalog
    from harness.runner import relax_task
    reducer = _reducer(tmp_path, monkeypatch)
    _tvm_cannot_print(monkeypatch)
    task = {"task": "export", "out": str(tmp_path / "written"), "form": "tvmscript"}
    answer = relax_task.run(task, catalog.resolve(_module_file(tmp_path)))
    assert answer["path"] is None, answer   # the child's answer: not this form, and why
    assert answer["reason"].startswith("TVM could not write it as tvmscript: TypeError")
    best = reducer.run(None)
    assert reducer.state.best == "best.json" and best.form == "json"
    assert not reducer.state.relax_skipped
    assert best.bindings < 4 and reducer.state.accepted > 0   # reduced, as JSON


def test_a_bug_in_writing_tvmscript_stops_the_reduction_as_a_harness_error(tmp_path,
                                                                           monkeypatch):
    reducer = _reducer(tmp_path, monkeypatch)
    _our_printer_bug(monkeypatch)
    with pytest.raises(HarnessStopped, match=r"writing the imported module as tvmscript ended "
                                             r"in a harness error: AttributeError.*seeded_missing"):
        reducer.run(None)
    assert reducer.state.best == ""   # nothing written: no JSON fallback for our own bug


SITECUSTOMIZE = """\
# Loaded at every interpreter's start (the CLI's, the warm server the children fork from):
# the rewriter's helper raises AttributeError from our own frame (relax_edit imported
# first, so only the rebuild sees it, not the export's reading of main).
import operator
import harness.tvmapi.relax_edit
import harness.tvmapi.relax_rewrite as rewrite
rewrite.main_of = operator.attrgetter("seeded_missing")
"""

# A real failure of TVM's (ConvertLayout on dropout, --layout nhwc), so `reduce` has
# something to reduce without an injected pass.
DROPOUT = '''from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), dtype="float32"),
             w: R.Tensor((4, 3, 3, 3), dtype="float32")) -> R.Tensor((1, 4, 6, 6), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            t = R.nn.dropout(y, rate=0.5)
            u = t[0]
            v = R.add(u, u)
            R.output(v)
        return v
'''


# 4 s here: a CLI run and a warm server of its own (one TVM import)
def test_the_cli_exits_4_when_the_rewriter_fails_in_a_real_child(tmp_path):
    import os
    import subprocess
    import sys

    from helpers import ROOT
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    module = tmp_path / "dropout.py"
    module.write_text(DROPOUT)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "reduce", str(module), "--layout", "nhwc",
         "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), ROOT])))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "stopped: edit cut" in proc.stderr and "seeded_missing" in proc.stderr, proc.stderr
    assert not (out / "repro.py").exists()   # no reproducer of a failure we caused

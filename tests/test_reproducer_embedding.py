"""A reproducer embeds its module in a form this TVM reads back (harness.runner.embedding).

TVMScript where it round-trips (the form upstream issues use); a module TVM cannot
parse back from its own TVMScript goes in as JSON, and repro.py says why, loads and
runs (once it held the unparseable text and exited 2 before making any call: nn-llama-
tiny's paged-KV kernels, nn-gpt2-kv-cache's `R.call_inplace_packed(..., ty_args=R.Any)`).
The decision goes through the one classifier: TVM refusing is the fallback, a fault
seeded in our own code there is a HarnessBug (harness-error), never a silent fallback.
Small BlockBuilder modules: a second or two, most of it the one repro.py run.
"""
import json
import os
import subprocess
import sys

import pytest
from helpers import without_torch

from harness import classify
from harness.options import Options
from harness.runner import embedding, reproducer
from harness.tvmapi import ir, loading, structure
from harness.verdict import Outcome, Phase, Violation

pytestmark = pytest.mark.in_process_tvm


def _unparseable_module():
    """The smallest module whose TVMScript does not parse back (registered:
    cases/reproducers/tvmscript_call_inplace_packed_any_type_arg.py): the printer writes
    `ty_args=(R.Any,)` and the parser hands the callable on uncalled."""
    relax = loading.tvm().relax
    if hasattr(relax, "AnyType"):   # 0.26 and later
        any_type, keyword = relax.AnyType(), "ty_args"
    else:                           # 0.25: struct info
        any_type, keyword = relax.ObjectStructInfo(), "sinfo_args"
    builder = ir.block_builder()
    cache = relax.Var("cache", any_type)
    x = relax.Var("x", ir.tensor_annotation((4,), "float32"))
    with builder.function("main", [cache, x]):
        out = builder.emit(relax.op.call_inplace_packed(
            "vm.builtin.attention_kv_cache_append", cache, x, inplace_indices=[0],
            **{keyword: any_type}))
        builder.emit_func_output(out)
    return builder.get()


def _parseable_module():
    relax = loading.tvm().relax
    builder = ir.block_builder()
    x = relax.Var("x", ir.tensor_annotation((2, 3), "float32"))
    with builder.function("main", [x]):
        out = builder.emit(relax.op.nn.softmax(x, axis=1))
        builder.emit_func_output(out)
    return builder.get()


# The copy that fails on the module: the TVMScript round trip, as the harness's copier.
TVMSCRIPT_COPY = Violation(Outcome.LOSSY_ROUNDTRIP, "(whole path)", "(copy)",
                           "TVMScript cannot parse its own text", phase=Phase.COPY,
                           copier="tvmscript", copied="input")


def _write(folder, module) -> str:
    return reproducer.write(str(folder), violation=TVMSCRIPT_COPY, options=Options(),
                            versions=loading.versions(), command="test", module=module)


def test_a_module_that_round_trips_is_embedded_as_tvmscript():
    embedded = embedding.embed(_parseable_module())
    assert (embedded.loader, embedded.why) == ("tvmscript", "")
    assert "R.nn.softmax" in embedded.text


def test_a_module_whose_tvmscript_does_not_parse_back_is_embedded_as_json_and_runs(tmp_path):
    module = _unparseable_module()
    path = _write(tmp_path, module)
    text = open(path).read()
    assert "# Embedded as JSON: this module's TVMScript does not parse back on this TVM " \
           "(DiagnosticError: " in text
    assert "MODULE_JSON = " in text and "SCRIPT = " not in text
    spec = json.loads((tmp_path / "reproducer.json").read_text())
    assert spec["loader"] == "json" and spec["loader_note"].startswith("this module's")
    assert reproducer.render(spec) == text   # `reproducers` re-renders the same repro.py
    embedded = loading.tvm().ir.load_json("\n".join(spec["script"]))
    assert structure.structural_equal(embedded, module, map_free_vars=True)
    env = {**os.environ, "PYTHONPATH": without_torch(tmp_path / "no-torch")}   # as users run it
    proc = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(path), env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]   # loads, then reproduces
    assert proc.stdout.startswith("reproduces: the copy failed: DiagnosticError"), proc.stdout


# ---- a fault of ours in the decision, and TVM refusing at the very same place -------

def _tvm_raises(*_args, **_kwargs):
    """TVM refusing from its own frames, wherever the decision called it."""
    return loading.tvm().target.Target("seeded-no-such-kind")


def _parse(monkeypatch, failing):
    monkeypatch.setattr(loading.tvm().script, "from_source", failing)


def _compare(monkeypatch, failing):
    monkeypatch.setattr(loading.ffi(), "get_first_structural_mismatch", failing)


@pytest.mark.parametrize("site", [_parse, _compare], ids=["parse", "compare"])
@pytest.mark.parametrize("fault", ["ours", "tvm"])
def test_our_fault_in_the_decision_is_harness_error_and_tvms_is_the_fallback(
        tmp_path, monkeypatch, site, fault):
    """Seeded as a release change would make it: the function our code calls is gone
    (None: our own frame raises TypeError). The control makes TVM raise there instead.
    Written as the check's child writes it (`child._reproduce`), beside a finding."""
    from harness.doors.relax_door import RelaxModel
    from harness.process import child
    from harness.result import Result
    module = _parseable_module()
    site(monkeypatch, None if fault == "ours" else _tvm_raises)
    if fault == "ours":
        with pytest.raises(classify.HarnessBug) as raised:   # what write itself raises
            _write(tmp_path, module)
        assert raised.value.stage == embedding.STAGE
    result = Result("seeded")
    result.add(TVMSCRIPT_COPY)
    request = {"out_dir": str(tmp_path), "command": "test", "sizes": "", "deadline": 1.0}
    child._reproduce(request, RelaxModel("seeded.py", module), Options(), result,
                     TVMSCRIPT_COPY)
    kinds = [violation.kind for violation in result.violations]
    if fault == "ours":
        assert kinds == ["lossy-roundtrip", "harness-error"], result.violations
        assert result.reproducer is None and "TypeError" in result.reproducer_error
        assert not (tmp_path / "repro.py").exists()   # nothing half-decided is written
        return
    assert kinds == ["lossy-roundtrip"] and result.reproducer, result.reproducer_error
    spec = json.loads((tmp_path / "reproducer.json").read_text())
    assert spec["loader"] == "json", spec["loader_note"]
    assert "ValueError" in spec["loader_note"] and "seeded-no-such-kind" in spec["loader_note"]

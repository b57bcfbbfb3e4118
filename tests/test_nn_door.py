"""The nn door: `relax.frontend.nn` models (MLC-LLM's way into TVM) through export_tvm.

The catalog's nn cases are model files in cases/nn/ (a tiny MLC-style LLaMA with a paged
KV cache and symbolic lengths, a GPT-2 block over nn.KVCache, an MLP, a diffusion UNet
block); a user's own file defines MODEL and SPEC the same way. Here: the door builds
them, a user's mistakes are exit 2 naming the file and line, TVM's own exception while
exporting is a finding at the import stage, and one real check of the smallest case.
The compiled LLaMA running prefill and decode, and the sweep on it, are nightly.
"""
from __future__ import annotations

import json
import os
import textwrap

import pytest
from helpers import cli

from harness import doors
from harness.catalog import cases as catalog
from harness.doors import nn_door
from harness.options import Options
from harness.process import child
from harness.verdict import BadInput

NN_CASES = ("nn-llama-tiny", "nn-gpt2-kv-cache", "nn-mlp", "nn-conv-unet-block")

MLP_FILE = '''\
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op


class Block(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(8, 8)

    def forward(self, x: nn.Tensor):
        return op.relu(self.fc(x))


MODEL = Block()
SPEC = {"forward": {"x": nn.spec.Tensor(["n", 8], "float32"),
                    "$": {"param_mode": "packed", "effect_mode": "none"}}}
'''


def _write(folder, name: str, text: str) -> str:
    path = os.path.join(str(folder), name)
    with open(path, "w") as handle:
        handle.write(textwrap.dedent(text))
    return path


def _names(module) -> set[str]:
    return {global_var.name_hint for global_var in module.functions}


def test_the_nn_cases_are_listed_through_the_nn_door_without_tvm():
    by_id = {case.id: case for case in catalog.catalog()}
    for case_id in NN_CASES:
        case = by_id[case_id]
        assert case.door.name == "nn" and case.file.endswith(".py"), case
        assert "nn" in case.tags and not case.needs_torch


def test_a_py_file_defining_MODEL_goes_to_the_nn_door_and_others_keep_theirs(tmp_path):
    assert doors.for_file(_write(tmp_path, "mine.py", MLP_FILE)).name == "nn"
    torch_file = _write(tmp_path, "net.py", "model = None\nexample_inputs = ()\n")
    assert doors.for_file(torch_file).name == "torch"
    relax_file = _write(tmp_path, "mod.py", "mod = None\n")
    assert doors.for_file(relax_file).name == "relax"
    with pytest.raises(BadInput, match=r"does not define MODEL at module level"):
        catalog.file_case(f"nn:{relax_file}")


@pytest.mark.in_process_tvm
@pytest.mark.parametrize("case_id", NN_CASES)
def test_the_door_exports_each_catalog_model_with_its_symbolic_shapes(case_id):
    module = doors.to_relax(catalog.resolve(case_id).model())
    names = _names(module)
    if case_id == "nn-llama-tiny":   # MLC-LLM's methods, and the paged KV cache's kernels
        assert {"embed", "prefill", "decode", "batch_prefill", "batch_decode",
                "create_paged_kv_cache"} <= names
        assert {"batch_decode_paged_kv_cpu", "batch_prefill_paged_kv_cpu"} <= names
        assert "paged_attention_kv_cache_create" in module["create_paged_kv_cache"].script()
        assert "seq_len" in str(module["prefill"].params[0].ty)
    elif case_id == "nn-gpt2-kv-cache":   # nn.KVCache is an effect: its init function
        assert {"forward", "_initialize_effect"} <= names
        assert "total_seq_len" in module["forward"].script()
    else:
        assert "forward" in names and "batch" in str(module["forward"].params[0].ty)


@pytest.mark.in_process_tvm
def test_a_users_file_exports_and_exporting_again_gives_the_same_module(tmp_path):
    """export_tvm pops the spec's "$" options out of the user's dict: the door keeps its
    own copy, so the second export (a reproducer's fresh import) is the first's twin."""
    from harness.tvmapi import structure
    model = nn_door.DOOR.load(_write(tmp_path, "mine.py", MLP_FILE))
    first, second = doors.to_relax(model), doors.to_relax(model)
    assert first is not second and structure.structural_equal(first, second)
    assert [str(param.name) for param in first["forward"].params] == ["x", "packed_params"]


@pytest.mark.in_process_tvm
@pytest.mark.parametrize("text, message", [
    ("MODEL = 3\n", r"mine\.py: `MODEL` must be a tvm\.relax\.frontend\.nn\.Module instance"),
    (MLP_FILE.replace("SPEC = ", "_SPEC = "), r"defines no `SPEC` and Block has no "
                                              r"get_default_spec\(\)"),
    (MLP_FILE.replace("self.fc(x)", "self.fcc(x)"),
     r"mine\.py:10: AttributeError: 'Block' object has no attribute 'fcc' \(raised by the "
     r"model's own code"),
    (MLP_FILE.replace('"x": nn', '"y": nn'), r"the spec does not fit the model: .*gives y; "
                                             r"forward\(\) takes x"),
    (MLP_FILE.replace("MODEL = Block()", "MODEL = Block(1)"), r"mine\.py:13: TypeError"),
], ids=["not-a-module", "no-spec", "its-own-bug", "spec-misfit", "file-raises"])
def test_a_file_that_defines_no_model_or_a_broken_one_is_bad_input(tmp_path, text, message):
    with pytest.raises(BadInput, match=message):
        nn_door.DOOR.load(_write(tmp_path, "mine.py", text))


@pytest.mark.in_process_tvm
def test_tvms_own_exception_while_exporting_is_a_finding_at_import(tmp_path):
    """What TVM's frontend raises (here: a matmul of a float16 input and float32 weights)
    is TVM's, an `error` at the import stage (exit 1), never the file's BadInput."""
    path = _write(tmp_path, "mine.py", MLP_FILE.replace('8], "float32"', '8], "float16"'))
    result = child.run_spec({"case": path, "options": Options().to_json()},
                            lambda event: None, str(tmp_path))
    (violation,) = result.violations
    assert (violation.kind, violation.stage) == ("error", "import"), violation
    assert "same datatype" in violation.detail


@pytest.mark.in_process_tvm
def test_numpy_raising_under_tvms_frontend_is_tvms_not_the_files(tmp_path):
    """op.layer_norm without a weight makes it with np.ones(normalized_shape): a negative
    size makes numpy raise, in numpy's own frames, called from TVM's. Third-party frames
    are passed over (harness.classify's rule): TVM's finding at import, not a BadInput
    blaming the model file that called op.layer_norm."""
    path = _write(tmp_path, "mine.py", MLP_FILE.replace("op.relu(self.fc(x))",
                                                        "op.layer_norm(self.fc(x), [-1])"))
    model = nn_door.DOOR.load(path)   # not BadInput: the export's failure is kept
    with pytest.raises(ValueError, match="negative dimensions") as raised:
        doors.to_relax(model)
    innermost = raised.traceback[-1].path.parts
    assert "numpy" in innermost and "site-packages" in innermost   # numpy raised it
    result = child.run_spec({"case": path, "options": Options().to_json()},
                            lambda event: None, str(tmp_path))
    (violation,) = result.violations
    assert (violation.kind, violation.stage) == ("error", "import"), violation
    assert "negative dimensions" in violation.detail


@pytest.mark.in_process_tvm
def test_the_smallest_nn_case_passes_the_extract_path(tmp_path):
    """A real check, as the child runs it: nn-mlp (symbolic batch) through extraction,
    every pass guarded, and its copies by deepcopy, JSON and TVMScript."""
    result = child.run_spec({"case": "nn-mlp", "options": Options(path="extract").to_json()},
                            lambda event: None, str(tmp_path))
    assert (result.verdict, result.exit_code) == ("pass", 0), result.violations
    assert result.outcome_count == 5 and {c.name for c in result.copiers} >= {"deepcopy", "json",
                                                                           "tvmscript"}


@pytest.mark.nightly   # needs the tune extra, which the README's set-up does not install
@pytest.mark.in_process_tvm   # a check run in this process
def test_the_tune_path_cannot_test_a_symbolic_shape_model_and_says_why(tmp_path):
    """static_shape_tuning_pipeline tunes static-shape models: on nn-mlp (symbolic batch)
    the tune path is unsupported (exit 125) naming the dimension, before any tuning; a
    static model is not refused (tests/test_paths.py tunes yolov3-tiny)."""
    for package in ("psutil", "cloudpickle", "xgboost"):   # the tune extra; else it says so
        pytest.importorskip(package, reason="--path tune needs the tune extra")
    result = child.run_spec({"case": "nn-mlp", "options": Options(path="tune").to_json()},
                            lambda event: None, str(tmp_path))
    assert (result.verdict, result.exit_code) == ("unsupported", 125), result.violations
    [violation] = result.violations
    assert violation.stage == "tune" and "symbolic dimensions (batch)" in violation.detail


@pytest.mark.nightly   # a compile and three calls of the VM, ~10 s
@pytest.mark.in_process_tvm
def test_the_tiny_llama_compiles_and_runs_prefill_and_decode_through_its_paged_kv_cache():
    """The LLaMA case is a model MLC-LLM could serve: the compiled executable creates its
    paged KV cache, prefills four tokens and decodes two more on the CPU."""
    import numpy as np
    import tvm
    from tvm import relax
    from tvm.runtime import ShapeTuple

    model = catalog.resolve("nn-llama-tiny").model()
    module, params = model.model.export_tvm(model.spec)
    vm = relax.VirtualMachine(tvm.compile(module, target="llvm"), tvm.cpu())
    rng = np.random.default_rng(0)
    weights = [tvm.runtime.tensor(
        (rng.standard_normal([int(d) for d in param.shape]) * 0.1).astype("float32"))
        for _, param in params]
    cache = vm["create_paged_kv_cache"](*(ShapeTuple([n]) for n in (1, 128, 64, 16, 0)))
    builtin = tvm.get_global_func
    builtin("vm.builtin.kv_state_add_sequence")(cache, 0)
    tokens, shapes = [1, 5, 9, 3], []
    for step in range(3):
        embedded = vm["embed"](tvm.runtime.tensor(np.array(tokens, dtype="int32")), weights)
        hidden = tvm.runtime.tensor(embedded.numpy()[None])
        builtin("vm.builtin.kv_state_begin_forward")(cache, ShapeTuple([0]),
                                                     ShapeTuple([len(tokens)]))
        logits, cache = vm["prefill" if step == 0 else "decode"](hidden, cache, weights)
        builtin("vm.builtin.kv_state_end_forward")(cache)
        shapes.append(logits.numpy().shape)
        assert np.isfinite(logits.numpy()).all()
        tokens = [int(np.argmax(logits.numpy()[0, -1]))]
    assert shapes == [(1, 1, 128)] * 3


@pytest.mark.nightly   # three isolated checks, ~15 s
def test_the_pass_sweep_runs_on_the_llama_case_with_its_symbolic_shapes():
    code, out, err = cli("passes", "nn-llama-tiny", "--pass", "LegalizeOps", "--pass",
                         "FuseOps", "--pass", "StaticPlanBlockMemory", "--point", "imported",
                         "--json")
    assert code == 0, out + err
    rows = json.loads(out)["rows"]
    # clean, or a registered finding (its TVMScript refusals are findings since 2026-12-06)
    assert len(rows) == 3 and {row.get("status", row["verdict"]) for row in rows} <= {
        "pass", "known"} and not any(row.get("failing") for row in rows), rows

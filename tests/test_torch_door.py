"""The PyTorch door: torch.export -> TVM's PyTorch frontend, its ONNX twin, and what
happens where torch is missing or a model does not export.

The torch catalog cases are nightly, checked by tests/test_catalog.py like every case (a
user's model file takes each route in the default run); here, the door's own behaviour."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
from helpers import ROOT, without_torch

from harness.catalog import cases as catalog
from harness.catalog import torch_cases
from harness.cli import report
from harness.options import Options
from harness.process import child

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("torchvision") is None,
    reason="torch is not installed here: pip install -e '.[torch]' (the PyTorch door)")

def test_every_torchvision_model_is_a_case_by_every_route_and_the_twins_pair_up():
    ids = {case.id for case in catalog.catalog()}
    assert {"tv-squeezenet1_0", "tv-squeezenet1_0-onnx", "tv-squeezenet1_0-nhwc",
            "tv-squeezenet1_0-onnx-nhwc", "tv-squeezenet1_0-fx", "tv-squeezenet1_0-dynamo-nhwc",
            "hf-bert", "hf-llama-nhwc"} <= ids
    assert torch_cases.twins_of("tv-resnet18") == {
        "torch-onnx": "tv-resnet18-onnx", "torch-fx": "tv-resnet18-fx",
        "torch-dynamo": "tv-resnet18-dynamo"}
    assert torch_cases.twins_of("tv-resnet18-nhwc")["torch-fx"] == "tv-resnet18-fx-nhwc"
    assert torch_cases.twins_of("tv-resnet18-onnx-nhwc") == {}
    assert torch_cases.twins_of("hf-bert") == {}
    if importlib.util.find_spec("torchvision") is not None:
        from torchvision import models
        listed = set(models.list_models())
        assert {f"tv-{name}" for name in listed} <= ids   # every model list_models() returns


def test_without_torch_a_torch_case_cannot_be_tested_and_names_the_extra(tmp_path):
    """No torch here (a seeded `torch` that fails to import, first on the path): exit 125,
    "cannot test", with the extra to install; never a harness error or a TVM failure."""
    env = {**os.environ, "PYTHONPATH": f"{without_torch(tmp_path)}{os.pathsep}{ROOT}",
           "HARNESS_WARM": "0"}
    proc = subprocess.run([sys.executable, "-m", "harness", "check", "hf-bert"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 125, proc.stdout + proc.stderr
    assert "unsupported" in proc.stdout and "pip install -e '.[torch]'" in proc.stdout, \
        proc.stdout


@needs_torch
@pytest.mark.nightly   # 10 s: exports BERT; the export cache is read by every torch case
def test_an_export_is_made_once_per_torch_version(tmp_path, monkeypatch):
    """The exported program is cached per (torch, torchvision, transformers) version: a
    second run does not export again."""
    from harness.doors import torch_models
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    model = torch_models.TorchModel("transformers", "bert")
    path = model.export()
    assert f"torch{torch_models.versions()['torch']}" in path
    made = os.stat(path).st_mtime_ns
    assert model.export() == path and os.stat(path).st_mtime_ns == made


@needs_torch
def test_a_model_that_does_not_export_is_unsupported_with_torchs_reason(tmp_path):
    """torch.export refuses torchvision's quantized models (their packed params are
    TorchScript objects): the child's verdict is `unsupported` (exit 125) with torch's
    reason, before any TVM call, and the refusal is cached."""
    spec = {"case": "tv-quantized_shufflenet_v2_x0_5", "options": Options().to_json()}
    result = child.run_spec(spec, lambda event: None, str(tmp_path))
    assert result.verdict == "unsupported" and result.exit_code == 125, result.violations
    assert "torch.export refused quantized_shufflenet_v2_x0_5" in result.violations[0].detail


def test_the_report_sets_the_routes_side_by_side():
    """Rows of the same model by PyTorch's routes line up; a failure one frontend alone
    shows is marked, a route not run is a dash."""
    def row(case, verdict, signatures):
        return {"case": case, "layout": "nchw", "path": "extract", "target": "llvm",
                "verdict": verdict, "status": "known" if signatures else "pass",
                "outcome_count": 3, "signatures": signatures}
    rows = [row("tv-squeezenet1_0", "mutated", ["mutated:zero-pipeline:tirx.AnnotateEntryFunc"]),
            row("tv-squeezenet1_0-onnx", "pass", []), row("hf-bert", "pass", []),
            row("tv-squeezenet1_0-fx", "pass", [])]
    lines = report.pytorch_routes(rows)
    (pair,) = [line for line in lines if line.startswith("| tv-")]
    assert "**differs**" in pair and "AnnotateEntryFunc" in pair
    assert pair.count("pass (pass, 3): -") == 2 and pair.endswith("| - | **differs** |")
    assert report.pytorch_routes([rows[2]]) == []
    same = report.pytorch_routes([row("tv-squeezenet1_0", "pass", []), rows[3]])
    assert [line for line in same if line.startswith("| tv-")][0].endswith("| same |")


@needs_torch
@pytest.mark.nightly   # five exports, ~15 s
@pytest.mark.parametrize("name", sorted(__import__("harness.doors.torch_models",
                                                     fromlist=["TRANSFORMERS"]).TRANSFORMERS))
def test_every_transformers_configuration_exports(name, tmp_path, monkeypatch):
    """Our own configurations must export: a refusal there is our bug (a pad token outside
    the vocabulary once made hf-whisper-encoder "unsupported"), not torch's verdict."""
    from harness.doors import torch_models
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    assert os.path.exists(torch_models.TorchModel("transformers", name).export())


@needs_torch
def test_pytorchs_answer_of_a_python_number_or_a_type_numpy_lacks_is_said_not_ours(tmp_path):
    """The torch-op family's first run: `Tensor.item()` answers a float (our flattening
    raised: a harness-error) and a bfloat16 answer has no numpy type (`.numpy()` raised).
    A number is a 0-d answer; bfloat16 is not compared, said so (compared in float32, its
    own rounding would read as TVM's error)."""
    import numpy
    import torch

    from harness.doors import ReferenceUnavailable, torch_door

    class Program:
        graph = type("Graph", (), {"nodes": ()})()   # no operator to exclude by rule

        def __init__(self, function):
            self.function = function

        def module(self):
            return self.function

    class Model:
        def __init__(self, function):
            self._program = Program(function)

        def program(self):
            return self._program

    [number] = torch_door.DOOR.answer(Model(lambda x: x.sum().item()),
                                      [numpy.ones(3, "float32")])
    assert number.shape == () and float(number) == 3.0
    with pytest.raises(ReferenceUnavailable, match="bfloat16"):
        torch_door.DOOR.answer(Model(lambda x: x.to(torch.bfloat16)), [numpy.ones(3, "float32")])


@needs_torch
def test_a_random_or_uninitialized_answer_is_not_compared_and_an_eval_dropout_is():
    """torch-op's first run: `empty_like` answered 1.2e31 (memory never written) and
    `exponential` a random draw, both read as TVM's wrong answers. Excluded by rule; an
    eval model's dropout (train=False) is the identity and stays compared."""
    import torch

    from harness.doors import torch_door

    class Empty(torch.nn.Module):
        def forward(self, x):
            return torch.empty_like(x) + x

    class EvalDropout(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.dropout(x, 0.5, training=False) + 1

    with torch.no_grad():
        empty = torch.export.export(Empty(), (torch.ones(2),))
        dropout = torch.export.export(EvalDropout().eval(), (torch.ones(2),))
    assert torch_door._undefined_answer(empty) == ["empty_like"]
    assert torch_door._undefined_answer(dropout) == []

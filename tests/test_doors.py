"""Every input door open to a user's own files, behind one interface.

A Relax module as an ordinary Python file (imports allowed), as bare TVMScript or as
save_json text; a PyTorch model as a Python file (`model`, `example_inputs`) or a
saved ExportedProgram (.pt2), through torch.export and its ONNX twin; an ONNX file.
Each is a CASE_OR_FILE of `check` and a `file:` source of a catalog, and a file that
cannot be read, parsed or run is exit 2 naming the file and line, never a verdict.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
from helpers import ROOT, TORCH_MODEL, cli, cli_here

from harness import doors
from harness.catalog import cases as catalog
from harness.doors import door as door_module
from harness.verdict import BadInput

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="torch is not installed here: pip install -e '.[torch]' (the PyTorch door)")

RELU_SCRIPT = '''\
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            gv = R.nn.relu(x)
            R.output(gv)
        return gv
'''

RELU_BUILDER = '''\
import tvm
from tvm import relax

builder = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType((2, 3), "float32") if hasattr(relax, "TensorType")
              else relax.TensorStructInfo((2, 3), "float32"))
with builder.function("main", [x]):
    with builder.dataflow():
        out = builder.emit_output(builder.emit(relax.op.nn.relu(x)))
    builder.emit_func_output(out)
mod = builder.get()
'''



def _write(folder, name: str, text: str) -> str:
    path = os.path.join(str(folder), name)
    with open(path, "w") as handle:
        handle.write(textwrap.dedent(text))
    return path


def _check_json(*args):
    code, out, err = cli_here("check", *args, "--json", "--quiet")
    assert out.strip(), f"no JSON (exit {code}): {err}"
    return code, json.loads(out)


def test_a_relax_module_as_python_with_imports_as_bare_tvmscript_and_as_json_checks_alike(
        tmp_path):
    """The three forms of one module (relu) reach the same path and the same tasks."""
    script = _write(tmp_path, "relu_script.py", RELU_SCRIPT)
    built = _write(tmp_path, "relu_built.py", RELU_BUILDER)
    results = [_check_json(path) for path in (script, built)]
    for code, result in results:
        assert (code, result["status"]) == (0, "pass"), result
        assert result["stages"][0]["name"] == "import"
    assert results[0][1]["outcome"] == results[1][1]["outcome"]
    assert all(doors.for_file(path).name == "relax" for path in (script, built))


@pytest.mark.in_process_tvm
def test_a_relax_json_module_is_save_json_text(tmp_path):
    """save_json text (what the reducer writes when TVMScript cannot carry a module)."""
    from harness.doors import relax_door
    from harness.tvmapi import copiers
    module = relax_door.DOOR.load(_write(tmp_path, "relu.py", RELU_SCRIPT)).module
    path = _write(tmp_path, "relu.json", copiers.save_json(module))
    code, result = _check_json(path)
    assert (code, result["status"]) == (0, "pass"), result


BAD_FILES = {
    # name: (text, what stderr's one line must say)
    "syntax.py": ("import tvm\nmod = (\n", "syntax.py:2:"),
    "raises.py": ("import tvm\n\nraise RuntimeError('the user file fails')\n",
                  "raises.py:3: RuntimeError: the user file fails"),
    "no_module.py": ("import tvm\nvalue = 1\n", "defines no IRModule"),
    "two_modules.py": (RELU_BUILDER.replace("mod = builder.get()", "first = builder.get()\n"
                                            "second = tvm.IRModule()"),
                       "defines 2 IRModules (first, second); name the one to check"),
    "half_torch.py": ("import torch\nexample_inputs = (torch.zeros(1),)\n",
                      "does not define model"),
    "not_json.json": ("{not json", "not_json.json:1: not JSON"),
    "other.json": ('{"a": 1}', "not save_json text"),
    "model.txt": ("hello", "no input door reads this kind of file"),
    "empty.onnx": ("", "holds no ONNX graph"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_file_that_cannot_be_read_parsed_or_run_is_exit_2_naming_file_and_line(
        tmp_path, name):
    text, expected = BAD_FILES[name]
    path = _write(tmp_path, name, text)
    code, out, err = cli_here("check", path, "--quiet")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (code, out, err)
    assert len(lines) == 1 and expected in lines[0], lines
    assert "Traceback" not in err


def test_every_door_implements_the_interface_and_files_find_their_door(tmp_path):
    """The runner, the child, the reducer and the CLI only call Door's methods: each
    door overrides what it must, and each of its suffixes finds a door."""
    for door in doors.DOORS:
        assert door.name and door.frontend, door
        for method in ("load", "owns", "to_relax"):
            assert getattr(type(door), method) is not getattr(door_module.Door, method), \
                (door.name, method)
    torch_file = _write(tmp_path, "net.py", TORCH_MODEL)
    relax_file = _write(tmp_path, "relu.py", RELU_SCRIPT)
    assert doors.for_file(torch_file).name == "torch"
    assert doors.for_file(relax_file).name == "relax"
    assert doors.for_file(os.path.join(tmp_path, "m.onnx")).name == "onnx"
    assert doors.for_file(os.path.join(tmp_path, "p.pt2")).name == "torch"
    assert catalog.resolve(f"torch-onnx:{torch_file}").id == f"torch-onnx:{torch_file}"
    assert catalog.resolve(torch_file).id == torch_file
    with pytest.raises(BadInput, match="unknown door"):
        doors.named("tensorrt")


def test_a_catalog_file_source_takes_every_door_and_lists_without_loading(tmp_path):
    """A user's catalog names files of every door with `file:` (or `DOOR:`); listing
    reads metadata only, so it neither runs the files nor exports the torch model."""
    folder = tmp_path / "mine"
    (folder / "models").mkdir(parents=True)
    _write(folder / "models", "net.py", TORCH_MODEL + "raise SystemExit('listing ran me')\n")
    _write(folder / "models", "relu.py", RELU_SCRIPT)
    (folder / "catalog.toml").write_text(textwrap.dedent('''\
        [[case]]
        id = "mine-net"
        source = "file:models/net.py"
        [[case]]
        id = "mine-net-twin"
        source = "torch-onnx:models/net.py"
        [[case]]
        id = "mine-relu"
        source = "file:models/relu.py"
        [[case]]
        id = "mine-gone"
        source = "file:models/gone.onnx"
        '''))
    code, out, err = cli("list", "mine-*", "--json", "--cases", str(folder))
    assert code == 0, err
    listed = {entry["id"]: entry for entry in json.loads(out)}
    assert {case_id: entry["door"] for case_id, entry in listed.items()} == {
        "mine-net": "torch", "mine-net-twin": "torch-onnx", "mine-relu": "relax",
        "mine-gone": "onnx"}
    assert "no such file" in listed["mine-gone"]["error"]
    code, result = _check_json("mine-relu", "--cases", str(folder))
    assert (code, result["status"]) == (0, "pass"), result


def test_listing_marks_a_model_torch_refused_and_exports_nothing(tmp_path, monkeypatch):
    """`list --json` says what an earlier export found (a refusal), and makes none."""
    from harness.doors import torch_models
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE", str(cache))
    folder = torch_models.cache_folder()
    os.makedirs(folder)
    refused = os.path.join(folder, "transformers-bert.pt2.refused")
    with open(refused, "w") as handle:
        handle.write("torch.export refused bert: seeded")
    listed = {name: catalog.Case(f"hf-{name}", f"transformers:{name}").manifest()
              for name in ("bert", "gpt2")}   # what `list --json` prints for each
    assert listed["bert"]["refused"] == "torch.export refused bert: seeded"
    assert listed["gpt2"]["inputs"] == {"input0": [1, 16]} and "refused" not in listed["gpt2"]
    assert sorted(os.listdir(folder)) == ["transformers-bert.pt2.refused"]   # nothing exported


@needs_torch
def test_a_users_pytorch_model_file_goes_through_torch_export(tmp_path):
    path = _write(tmp_path, "net.py", TORCH_MODEL)
    code, result = _check_json(path)
    assert result["status"] in ("pass", "known"), result
    assert [stage["name"] for stage in result["stages"]][:2] == ["export", "import"]
    assert result["outcome_count"] > 0


@needs_torch
@pytest.mark.nightly   # two exports and an ONNX export: ~20 s
def test_a_users_model_as_its_onnx_twin_and_as_a_saved_program(tmp_path):
    path = _write(tmp_path, "net.py", TORCH_MODEL)
    saver = _write(tmp_path, "save.py", TORCH_MODEL + textwrap.dedent(f'''
        torch.export.save(torch.export.export(model.eval(), example_inputs),
                          {os.path.join(str(tmp_path), "net.pt2")!r})
        '''))
    subprocess.run([sys.executable, saver], check=True, cwd=ROOT, timeout=300)
    for name in (f"torch-onnx:{path}", os.path.join(str(tmp_path), "net.pt2")):
        code, result = _check_json(name)
        assert result["status"] in ("pass", "known"), (name, result)
        assert result["stages"][0]["name"] == "export"


@needs_torch
@pytest.mark.nightly   # an export torch refuses, then a reduction: ~25 s
def test_a_model_torch_refuses_is_unsupported_and_a_frontend_failure_reproduces(tmp_path):
    refused = _write(tmp_path, "refused.py", TORCH_MODEL.replace(
        "return torch.relu", "if x.sum() > 0:\n            return x\n        return torch.relu"))
    code, result = _check_json(refused)
    assert (code, result["status"]) == (125, "unsupported"), result
    assert "torch.export refused" in result["violations"][0]["detail"]
    # TVM's PyTorch frontend gets grid_sample's grid layout wrong (a registered finding):
    # the reproducer of a user's file embeds the file itself and exits 1.
    grid = _write(tmp_path, "grid.py", '''\
        import torch
        import torch.nn.functional as F


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(7, 4, 1)

            def forward(self, x, grid):
                sampled = F.grid_sample(x, grid, align_corners=True)
                return self.conv(sampled.permute(0, 3, 1, 2))


        model = Net()
        example_inputs = (torch.randn(2, 1, 4, 4), torch.rand(2, 7, 7, 2) * 2 - 1)
        ''')
    out_dir = tmp_path / "reduced"
    code, out, err = cli("reduce", grid, "--out", str(out_dir))
    repro = out_dir / "repro.py"
    assert repro.exists(), out + err
    proc = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "class Net" in repro.read_text()   # the user's file, embedded


def test_a_door_sharing_py_files_claims_those_that_define_its_name(tmp_path):
    """Door.defines, how the PyTorch and nn doors claim their .py files before the Relax
    door takes the rest: a name bound at module level, not one only used or nested; a file
    that does not parse, a directory or another suffix is no such door's."""
    path = tmp_path / "net.py"
    path.write_text("import os as example_inputs\nMODEL = 1\ndef f():\n    model = 2\n")
    defines = door_module.Door.defines
    assert defines(str(path), "MODEL") and defines(str(path), "example_inputs")
    assert not defines(str(path), "model")   # bound inside a function only
    (tmp_path / "broken.py").write_text("MODEL = (\n")
    assert not defines(str(tmp_path / "broken.py"), "MODEL")
    (tmp_path / "dir.py").mkdir()
    assert not defines(str(tmp_path / "dir.py"), "MODEL")
    (tmp_path / "net.txt").write_text("MODEL = 1\n")
    assert not defines(str(tmp_path / "net.txt"), "MODEL")
    assert doors.for_file(str(path)).name == "torch"   # example_inputs: the PyTorch door's
    assert doors.named("nn").claims(str(path)) and doors.named("torch").claims("m.pt2")


def test_listing_the_catalog_imports_no_framework_once_its_op_types_are_remembered():
    """Every CLI start lists the catalog (to find the case it was given): reading the
    wheel's ONNX models for their op types once imported onnx in each (0.7 s) and read 82
    files. Once remembered (the first listing of this onnx wheel), a listing imports none
    of onnx, TVM, torch, TensorFlow or JAX, and lists the same cases."""
    probe = ("import io, sys, contextlib\nfrom harness.cli.main import main\n"
             "out = io.StringIO()\nwith contextlib.redirect_stdout(out):\n    main(['list'])\n"
             "print(sorted(m for m in ('onnx', 'tvm', 'torch', 'tensorflow', 'jax')\n"
             "             if m in sys.modules))\n"
             "print(out.getvalue().count(chr(10)))")
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), [run.stderr[-2000:] for run in runs]
    (_, first_count), (loaded, count) = (run.stdout.split("\n")[:2] for run in runs)
    assert loaded == "[]" and count == first_count and int(count) > 500, runs[1].stdout

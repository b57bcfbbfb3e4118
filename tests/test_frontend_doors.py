"""The frontends beyond ONNX, torch.export and nn: TFLite, StableHLO (JAX), torch.fx and
torch.compile's relax_dynamo import, each a door of its own.

Each door reads a user's file and the catalog's models, answers through its framework
(the TFLite interpreter, JAX, eager PyTorch), and rebuilds its model from a recipe in
repro.py. Each comparison is proved able to fail by a seeded miscompile only running the
module shows; bad files are exit 2 naming the file, a missing extra is exit 125 naming it.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
import seeded_answers
from helpers import ROOT, TORCH_MODEL, cli, cli_here

from harness import doors
from harness.catalog import cases as catalog
from harness.options import Options
from harness.result import Result
from harness.runner.path_runner import PathRunner
from harness.verdict import BadInput, Outcome

needs_tflite = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None or importlib.util.find_spec("tflite") is None,
    reason="tensorflow is not installed: this door needs the tflite extra "
           "(pip install -e '.[tflite]')")
needs_jax = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="jax is not installed: this door needs the jax extra (pip install -e '.[jax]')")
needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="torch is not installed here: pip install -e '.[torch]' (the PyTorch door)")

# A user's TFLite model file: a Keras conv -> ReLU -> pooling, converted on the spot.
TFLITE_MODEL = '''\
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
keras_model = tf.keras.Sequential([
    tf.keras.Input((8, 8, 3), batch_size=1),
    tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
])
tflite_model = tf.lite.TFLiteConverter.from_keras_model(keras_model).convert()
'''
# A user's JAX model file: operations TVM's StableHLO frontend converts, a maximum among them.
JAX_MODEL = '''\
import jax
import jax.numpy as jnp


def jax_function(x, y):
    return jnp.maximum(x, y) * jnp.exp(y) + jnp.cos(x)


example_args = (jax.random.normal(jax.random.PRNGKey(0), (4, 4)),
                jax.random.normal(jax.random.PRNGKey(1), (4, 4)))
'''


def _write(folder, name: str, text: str) -> str:
    path = os.path.join(str(folder), name)
    with open(path, "w") as handle:
        handle.write(text)
    return path


def _wrong(result: Result) -> list:
    return [v for v in result.violations if v.kind == Outcome.WRONG_RESULT]


# ---- finding the door -----------------------------------------------------------------

def test_each_file_finds_its_door_by_suffix_or_by_the_names_it_defines(tmp_path):
    """.tflite and a .py defining `tflite_model` are TFLite's; .mlir and a .py defining
    `jax_function` StableHLO's; the PyTorch routes are asked for by name."""
    assert doors.for_file(_write(tmp_path, "m.py", TFLITE_MODEL)).name == "tflite"
    assert doors.for_file(_write(tmp_path, "j.py", JAX_MODEL)).name == "stablehlo"
    assert doors.for_file(_write(tmp_path, "t.py", TORCH_MODEL)).name == "torch"
    assert doors.for_file(str(tmp_path / "m.tflite")).name == "tflite"
    assert doors.for_file(str(tmp_path / "m.mlir")).name == "stablehlo"
    torch_file = str(tmp_path / "t.py")
    for route in ("torch-fx", "torch-dynamo"):
        assert catalog.resolve(f"{route}:{torch_file}").door.name == route


@pytest.mark.parametrize("name, text, expected", [
    ("bad.tflite", "not a flatbuffer at all", "is not a TFLite flatbuffer"),
    ("bad.mlir", "module {}\n", "holds no StableHLO"),
    ("half.py", "import jax\ndef jax_function(x):\n    return x\n", "does not define example_args"),
], ids=["tflite-file", "mlir-file", "jax-names"])
def test_a_file_the_door_cannot_read_is_exit_2_naming_it_and_the_fix(tmp_path, name, text,
                                                                     expected):
    path = _write(tmp_path, name, text)
    code, out, err = cli_here("check", path, "--quiet")
    assert code == 2 and expected in err and "Traceback" not in err, (code, out, err)


def test_a_tflite_model_files_value_must_be_the_flatbuffers_bytes():
    """What `tflite_model` holds is checked before TVM sees it (in the child, once the file
    ran: TensorFlow's import is 5 s, so the check itself is tested here)."""
    from harness.doors import tflite_door
    with pytest.raises(BadInput, match="must be the flatbuffer's bytes"):
        tflite_door.check_flatbuffer("text", "m.py")
    with pytest.raises(BadInput, match="is not a TFLite flatbuffer"):
        tflite_door.check_flatbuffer(b"\0" * 16, "m.py")
    assert tflite_door.check_flatbuffer(bytearray(b"1234TFL3...."), "m.py") == b"1234TFL3...."


@needs_jax
def test_a_jax_function_that_does_not_lower_is_the_files_to_fix(tmp_path):
    path = _write(tmp_path, "bad.py", "import jax.numpy as jnp\n"
                  "def jax_function(x):\n    return jnp.reshape(x, (7,))\n"
                  "example_args = (jnp.ones((2, 2)),)\n")
    code, out, err = cli_here("check", path, "--quiet")
    assert code == 2 and "JAX cannot lower `jax_function`" in err and f"{path}:3" in err, err


def test_without_its_extra_a_door_cannot_test_and_names_the_extra(tmp_path):
    """No jax here (a seeded `jax` that fails to import, first on the path): exit 125,
    naming the extra; never a harness error nor a TVM failure."""
    hidden = tmp_path / "hidden" / "jax"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text('raise ImportError("seeded: no jax here")\n')
    path = _write(tmp_path, "j.py", JAX_MODEL)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'hidden'}{os.pathsep}{ROOT}",
           "HARNESS_WARM": "0"}
    proc = subprocess.run([sys.executable, "-m", "harness", "check", path], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 125, proc.stdout + proc.stderr
    assert "pip install -e '.[jax]'" in proc.stdout and "harness-error" not in proc.stdout


# ---- the answers, and a seeded miscompile each comparison alone sees ------------------
# TensorFlow and JAX are loaded in a fresh python, never in a test worker: a worker that
# imported TensorFlow dies of SIGSEGV when a later test imports torch (measured,
# tensorflow-cpu 2.21.0 and torch 2.14.1). The harness checks each case in a child of
# its own, so its checks never mix them.

def _model(door: str, path: str):
    return doors.named(door).load(path)


def _in_fresh_python(function: str, *args):
    """`function(*args)` of this module run in a fresh python: its JSON answer."""
    code = (f"import json, test_frontend_doors as tests\n"
            f"print(json.dumps(tests.{function}(*{args!r})))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "tests"), ROOT])}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def checked_by_door(door: str, path: str) -> dict:
    """The model's comparisons on a clean compile; the wrong results once TIR's max is
    computed as min (tests/seeded_answers.py); and whether the door's recipe, run in a
    namespace of its own as repro.py runs it, rebuilds the module the door imported."""
    model = _model(door, path)
    clean = PathRunner(Options(path="compile")).run_model(model, Result("m"))
    patch = pytest.MonkeyPatch()
    try:
        name = seeded_answers.seed_tir_miscompile(patch)
        seeded = PathRunner(Options(path="compile")).run_model(model, Result("m"))
    finally:
        patch.undo()
    rebuilt, imported = _recipe_and_import(door, model)
    return {"clean": {record.comparison: record.status for record in clean.answers},
            "seeded": [[v.pass_name, v.access_path] for v in _wrong(seeded)], "pass": name,
            "recipe rebuilds it": rebuilt == imported and "def main" in imported}


@pytest.mark.parametrize("door, text, reference", [
    # TensorFlow's import and converter (~25 s): nightly; the default run's tflite-conv-block
    # compares with the interpreter on every run
    pytest.param("tflite", TFLITE_MODEL, "TFLite interpreter",
                 marks=[needs_tflite, pytest.mark.nightly]),
    # 10 s: nightly; the default run's jax-elementwise-compile compares with JAX every run
    pytest.param("stablehlo", JAX_MODEL, "JAX", marks=[needs_jax, pytest.mark.nightly]),
], ids=["tflite", "stablehlo"])
def test_a_model_is_compared_with_its_framework_a_miscompile_named_and_its_recipe_rebuilds_it(
        tmp_path, door, text, reference):
    found = _in_fresh_python("checked_by_door", door, _write(tmp_path, "m.py", text))
    assert found["clean"][reference] == "agree", found
    assert found["seeded"] == [[found["pass"], f"(answer vs {reference})"]], found
    assert found["recipe rebuilds it"], found


@needs_torch
@pytest.mark.parametrize("route", [pytest.param("torch", marks=pytest.mark.nightly),
                                   "torch-fx",
                                   # nightly: 5 s; the default run's torch.compile route is
                                   # the graph-break test below
                                   pytest.param("torch-dynamo", marks=pytest.mark.nightly)])
def test_the_three_pytorch_routes_agree_with_eager_pytorch_and_each_sees_a_miscompile(
        tmp_path, route):
    """The same model file by torch.export, torch.fx and torch.compile: each answer agrees
    with eager PyTorch's; with TIR's max computed as min, each route names the pass; each
    route's recipe rebuilds its module. (torch.export's: nightly, as in test_answers.)"""
    found = checked_by_door(route, _write(tmp_path, "t.py", TORCH_MODEL))
    assert found["clean"]["PyTorch"] == "agree", found
    assert found["seeded"] == [[found["pass"], "(answer vs PyTorch)"]], found
    assert route == "torch" or found["recipe rebuilds it"], found


@needs_torch
def test_a_model_torch_compile_breaks_into_graphs_is_one_function_each_and_not_compared(
        tmp_path):
    """A graph break (a print in forward): relax_dynamo compiles each graph alone, so the
    module has one function per graph and no whole-model answer is claimed."""
    path = _write(tmp_path, "broken.py", textwrap.dedent('''\
        import torch


        class Net(torch.nn.Module):
            def forward(self, x):
                y = torch.relu(x) + 1
                print("a graph break")
                return torch.tanh(y) * 2


        model = Net()
        example_inputs = (torch.randn(2, 3),)
        '''))
    model = _model("torch-dynamo", path)
    module = doors.to_relax(model)
    assert sorted(gv.name_hint for gv in module.get_global_vars()) == ["graph_1", "main"]
    with pytest.raises(doors.ReferenceUnavailable, match="2 graphs"):
        doors.answer(model, [])


# ---- repro.py's recipes and saved files ----------------------------------------------

_RECIPE_IMPORTS = {"tflite": "import tflite\nfrom tvm.relax.frontend.tflite import from_tflite",
                   "stablehlo": "from tvm.relax.frontend.stablehlo import from_stablehlo"}
_RECIPE_MODULE = {"tflite": "from_tflite(tflite.Model.GetRootAsModel(flatbuffer, 0))",
                  "stablehlo": "from_stablehlo(text)"}


def _recipe_and_import(door_name: str, model) -> tuple[str, str]:
    """(the module repro.py's load() makes from the door's recipe, its text run in a
    namespace of its own; the module the door imported), as TVMScript. (That repro.py runs
    standalone, in a python without the harness: the frontend-failure test below.)"""
    door = doors.named(door_name)
    if door.reproducer not in ("tflite", "stablehlo", "torch_route"):
        return "", ""
    namespace = {"__name__": "repro"}
    exec(compile("\n".join([_RECIPE_IMPORTS.get(door_name, ""), door.recipe(model),
                            f"module = {_RECIPE_MODULE.get(door_name, 'module')}"]),
                 "repro.py", "exec"), namespace)
    return namespace["module"].script(), doors.to_relax(model).script()


@needs_jax
@pytest.mark.nightly   # 10 s: JAX's lowering twice; the default run's repro.py proofs are ONNX's
def test_a_frontend_failure_writes_a_repro_that_lowers_the_users_function_again(tmp_path):
    """The StableHLO frontend's registered failure on a user's function (a reduction):
    repro.py embeds the file, lowers it with JAX and imports the text, standalone (no
    harness on its path): exit 1, reproduces."""
    path = _write(tmp_path, "mean.py", "import jax\nimport jax.numpy as jnp\n"
                  "def jax_function(x):\n    return jnp.mean(x, axis=1)\n"
                  "example_args = (jax.random.normal(jax.random.PRNGKey(0), (2, 3)),)\n")
    out = tmp_path / "out"
    code, printed, err = cli("check", path, "--reduce", "--out", str(out))
    assert code == 0 and "known: error at stage import" in printed, printed + err
    repro = out / "repro.py"
    assert "from_stablehlo(text)" in repro.read_text() and "def jax_function" in \
        repro.read_text()
    proc = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": ""})
    assert proc.returncode == 1 and "reproduces" in proc.stdout, proc.stdout + proc.stderr


def tflite_file(source: str, out: str) -> str:
    with open(out, "wb") as handle:
        handle.write(_model("tflite", source).flatbuffer)
    return out


@needs_tflite
@pytest.mark.nightly   # TensorFlow's import and converter, then a check: ~13 s
def test_a_saved_tflite_file_is_read_as_is(tmp_path):
    saved = _in_fresh_python("tflite_file", _write(tmp_path, "m.py", TFLITE_MODEL),
                             str(tmp_path / "m.tflite"))
    code, out, err = cli("check", saved, "--path", "compile")
    assert code == 0 and "answer vs TFLite interpreter: agree" in out, out + err
    (listed,) = doors.named("tflite").inputs(saved).values()   # list --json's, no TensorFlow
    assert listed == [1, 8, 8, 3]


def test_an_unknown_operator_of_each_frontend_is_unsupported_not_an_error():
    """The converters' own ways of saying they have no converter (by their texts)."""
    from harness.tvmapi import errors
    for text in ("Unsupported operation stablehlo.convert",
                 "Unsupported module type <class 'torch.nn.GRU'>",
                 "Unsupported function target <built-in function foo>",
                 "The following operators are not supported in frontend TFLite: 'X'"):
        assert errors.is_unsupported_op_error(AssertionError(text)), text
    assert not errors.is_unsupported_op_error(ValueError(
        "Unsupported Attribute type: <class 'DenseI64ArrayAttr'>"))   # a converter's crash

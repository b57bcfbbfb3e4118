"""Shared test helpers: run the real path in-process or the CLI in a subprocess."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

from harness.catalog import cases as catalog
from harness.options import Options
from harness.result import Result
from harness.runner.path_runner import PathRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDED = os.path.join(ROOT, "tests", "seeded.py")
SMALL_CASE = "conv-reshape-concat"   # a real conv/reshape/concat graph, ~1 s through the path
# A user's Relax module file, as the Relax door reads one (`mod` at module level).
RELAX_MODULE_FILE = """from tvm import relax

builder = relax.BlockBuilder()
tensor = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 / later
x = relax.Var("x", tensor((2, 3), "float32"))
with builder.function("main", [x]):
    with builder.dataflow():
        y = builder.emit_output(relax.op.add(x, x))
    builder.emit_func_output(y)
mod = builder.get()
"""


def run_in_process(case: str = SMALL_CASE, copiers=None, **options) -> Result:
    runner = PathRunner(Options(**options), copier_table=copiers)
    return runner.run_model(catalog.resolve(case).model(), Result(case))


def cli(*args, python: str = sys.executable, timeout: float = 600):
    """(exit code, stdout, stderr) of `python -m harness ARGS` run from the repo root."""
    proc = subprocess.run([python, "-m", "harness", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def cli_here(*args):
    """(exit code, stdout, stderr) of the CLI run in this process, from the repo root: no
    interpreter start-up, and checks go to this worker's warm server (no TVM import each
    time). For commands that do not interrupt themselves; the environment and the
    working folder are restored after."""
    from harness.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(arg) for arg in args])
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue(), err.getvalue()


def cli_json(*args, **kwargs):
    code, out, err = cli(*args, "--json", "--quiet", **kwargs)
    assert out.strip(), f"no JSON on stdout (exit {code}); stderr:\n{err}"
    return code, json.loads(out), err


def seeded(name: str) -> str:
    return f"{SEEDED}:{name}"


# A one-relu Relax module as TVMScript: compiled, it meets every pass of tvm.compile.
RELU = """\
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y
"""

NO_TORCH = 'raise ImportError("seeded: this python has no torch")\n'
NO_TORCH_DIR = os.path.join(tempfile.gettempdir(), f"harness-no-torch-{os.getpid()}")


def without_torch(folder) -> str:
    """A folder to put first on PYTHONPATH so that `import torch` fails there, as where
    torch is not installed (tvm_ffi imports torch whenever it can: 2-3 s a process)."""
    package = os.path.join(str(folder), "torch")
    os.makedirs(package, exist_ok=True)
    with open(os.path.join(package, "__init__.py"), "w") as handle:
        handle.write(NO_TORCH)
    return str(folder)


# A user's PyTorch model file: conv -> ReLU -> mean (the PyTorch door's smallest model).
TORCH_MODEL = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)).mean(dim=(2, 3))


model = Net()
example_inputs = (torch.randn(1, 3, 8, 8),)
'''

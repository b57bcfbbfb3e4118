"""The plugin, installed in an environment, leaves an unrelated project's pytest alone.

A throwaway project with its own test and its own hypothesis profile runs with
the plugin (it is installed in this environment) and with it disabled
(`-p no:tvm_harness`, as if not installed): same outcome, same profile, and no
TVM or onnx imported by the plugin. A project with a catalog of its own
(HARNESS_CASES) collects its own cases only, not the harness's built-in ones.
"""
import json
import os
import subprocess
import sys

CONFTEST = '''
from hypothesis import settings
settings.register_profile("theirs", max_examples=7)
settings.load_profile("theirs")
'''
TEST = '''
import json, os, sys
from hypothesis import given, settings, strategies as st

@given(st.integers())
def test_their_property(value):
    assert isinstance(value, int)

def test_report_what_the_session_looks_like():
    with open(os.environ["THEIR_REPORT"], "w") as handle:
        json.dump({"max_examples": settings.default.max_examples,
                   "heavy": sorted(m for m in ("tvm", "tvm_ffi", "onnx") if m in sys.modules)},
                  handle)
'''


def _run(project, report, *args):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", *args], cwd=project, capture_output=True, text=True,
                          timeout=300, env={"THEIR_REPORT": str(report), "PATH": "/usr/bin:/bin"})
    return proc.returncode, proc.stdout.strip().splitlines()[-1], json.loads(report.read_text())


def test_unrelated_project_sees_no_difference(tmp_path):
    project = tmp_path / "theirs"
    (project / "tests").mkdir(parents=True)
    (project / "conftest.py").write_text(CONFTEST)
    (project / "tests" / "test_theirs.py").write_text(TEST)
    (project / "pytest.ini").write_text("[pytest]\n")
    with_plugin = _run(project, tmp_path / "with.json")
    without = _run(project, tmp_path / "without.json", "-p", "no:tvm_harness",
                   "-p", "no:harness.suite.plugin")
    assert with_plugin[0] == without[0] == 0, (with_plugin, without)
    assert with_plugin[1].split(" in ")[0] == without[1].split(" in ")[0] == "2 passed"
    assert with_plugin[2]["max_examples"] == without[2]["max_examples"] == 7
    assert with_plugin[2]["heavy"] == [], "the plugin imported TVM/onnx in a foreign session"


def test_plugin_options_are_prefixed():
    proc = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True,
                          text=True, timeout=120)
    for title in ("TVM extraction invariants", "guard every TVM pass a test runs"):
        section = proc.stdout.split(title)[1].split("\n\n")[0]
        options = [word for word in section.split() if word.startswith("--")]
        assert options and all(option.startswith("--harness-") for option in options), options


# ---- a foreign project's own catalog: its cases only, marked as the built-in ones ------

USER_CATALOG = '''
[[case]]
id = "mine-relu"
source = "builder:builders.py:relu"

[[case]]
id = "mine-big"
source = "builder:builders.py:relu"
tags = ["slow"]

[[case]]
id = "mine-heavy"
source = "builder:builders.py:relu"
tags = ["nightly"]
'''
USER_BUILDERS = '''
from onnx import TensorProto, helper


def relu():
    """A one-node ONNX model (collection never builds it; a check would)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    return helper.make_model(graph)
'''
USER_TEST = '''
from harness.pytest_plugin import assert_invariant


def test_my_models(case_result, invariant):
    result, command = case_result
    assert_invariant(result, invariant, command)
'''


USER_CONFTEST = '''
import json


def pytest_collection_modifyitems(items):
    """Each item's markers, for the test to read (`--collect-only -q` shows ids only)."""
    with open("markers.json", "w") as handle:
        json.dump({item.nodeid: sorted(m.name for m in item.iter_markers()) for item in items},
                  handle)
'''


def _foreign_project(tmp_path):
    project = tmp_path / "theirs"
    (project / "mine").mkdir(parents=True)
    (project / "mine" / "catalog.toml").write_text(USER_CATALOG)
    (project / "mine" / "builders.py").write_text(USER_BUILDERS)
    (project / "test_mine.py").write_text(USER_TEST)
    (project / "conftest.py").write_text(USER_CONFTEST)
    (project / "pytest.ini").write_text("[pytest]\n")
    return project


def _opt_in_markers(project) -> dict[str, set[str]]:
    """{item id: its slow/nightly markers} of the last collection in the project."""
    markers = json.loads((project / "markers.json").read_text())
    return {nodeid.split("[", 1)[1].rstrip("]"): set(names) & {"slow", "nightly"}
            for nodeid, names in markers.items()}


def _collected(project, *args, cases: str | None = "mine") -> list[str]:
    """The item ids `pytest --collect-only -q` lists in the project (HARNESS_CASES=cases)."""
    env = {"PATH": "/usr/bin:/bin", **({"HARNESS_CASES": cases} if cases else {})}
    env.update({name: value for name, value in os.environ.items()
                if name == "HARNESS_CACHE"})
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "-p", "no:xdist", *args, "test_mine.py"],
                          cwd=project, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return [line.split("[", 1)[1].rstrip("]") for line in proc.stdout.splitlines()
            if line.startswith("test_mine.py::")]


def test_a_foreign_project_collects_only_its_own_cases(tmp_path):
    """`HARNESS_CASES=mine pytest test_mine.py` once collected the whole built-in catalog
    (1,960 items, yolov4-tiny and the slow cases included). Its opt-in cases carry the
    built-in ones' markers, so `-m` leaves them out as this repository's addopts does."""
    project = _foreign_project(tmp_path)
    opt_in = {"mine-relu": set(), "mine-big": {"slow"}, "mine-heavy": {"nightly"}}
    mine = {f"{case}-{invariant}": markers for case, markers in opt_in.items()
            for invariant in ("no-mutation", "lossless-roundtrip")}
    assert set(_collected(project)) == set(mine)
    assert _opt_in_markers(project) == mine
    asked = _collected(project, "--harness-builtin", "--harness-case", "mine-relu",
                       "--harness-case", "yolov3-tiny")
    assert set(asked) == {"mine-relu-no-mutation", "mine-relu-lossless-roundtrip",
                          "yolov3-tiny-no-mutation", "yolov3-tiny-lossless-roundtrip"}
    assert _collected(project, cases=None) == ["no-cases"]   # one skipped item saying why


def test_the_numbers_are_an_item_only_where_a_run_compares_them(tmp_path):
    """`same-numbers` exists on the compile path for llvm (where the executable runs), and
    not with --harness-no-answers: no item passes over a comparison nobody made."""
    project = _foreign_project(tmp_path)
    compiled = set(_collected(project, "--harness-case", "mine-relu",
                              "--harness-path", "compile"))
    assert compiled == {"mine-relu-compile-no-mutation", "mine-relu-compile-lossless-roundtrip",
                        "mine-relu-compile-same-numbers"}
    assert "mine-relu-compile-same-numbers" not in _collected(
        project, "--harness-case", "mine-relu", "--harness-path", "compile",
        "--harness-no-answers")
    assert not [item for item in _collected(project, "--harness-case", "mine-relu")
                if "same-numbers" in item]
    # a target in TVM's JSON form is llvm all the same
    assert "mine-relu-compile-same-numbers" in _collected(
        project, "--harness-case", "mine-relu", "--harness-path", "compile",
        "--harness-target", '{"kind": "llvm", "mcpu": "x86-64"}')

"""The plugin, installed in an environment, leaves an unrelated project's pytest alone.

A throwaway project with its own test and its own hypothesis profile runs with
the plugin (it is installed in this environment) and with it disabled
(`-p no:tvm_harness`, as if not installed): same outcome, same profile, and no
TVM or onnx imported by the plugin.
"""
import json
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

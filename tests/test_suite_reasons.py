"""What did not pass, counted by reason: guard-suite over a tiny synthetic suite (no TVM).

A whole suite run far from its CI skips what needs a GPU or a missing package, has files
that do not collect and tests that fail on their own; none of that may vanish from the
count, and none of it is a guard finding. The synthetic suite has one of each: skips with
reasons, a module-level importorskip, a file importing a package that is not installed,
a file raising at import, a failing test, a missing fixture, a conftest.py that does not
import, a file that hangs past --file-timeout, a test that ends the process (os._exit);
the summary must count each under its category and reason, the merge of the folder must
keep the counts, and the failed tests of a guarded run are run again unguarded to tell
TVM's failure from the guard's doing.
"""
import json
import os

import pytest

from harness.suite import file_run, not_passed
from tests.helpers import cli, cli_here

MISSING = "surely_not_installed_pkg_xyz"
FILES = {
    "test_skips.py": f'''
import pytest

@pytest.mark.skip(reason="needs CUDA")
def test_cuda_one():
    pass

@pytest.mark.skip(reason="needs CUDA")
def test_cuda_two():
    pass

def test_gpu_inside():
    pytest.skip("requires gpu")

def test_passes():
    pass

def test_fails():
    assert 3 == 4

def test_fails_too():
    assert 5 == 6

def test_missing_fixture(nope):
    pass

def test_imports_inside():
    import {MISSING}  # noqa
''',
    "test_optional.py": f'''
import pytest
pytest.importorskip("{MISSING}")

def test_never():
    pass
''',
    "test_broken_import.py": f'''
import {MISSING}  # noqa

def test_never():
    pass
''',
    "test_raises_at_import.py": '''
raise RuntimeError("broken at import, object at 0x7f00ab12")
''',
    "test_hangs.py": '''
import time

def test_quick():
    pass

def test_sleeps():
    time.sleep(120)
''',
    "test_exits.py": "import os\n\ndef test_exits():\n    os._exit(3)\n",
    "sub/conftest.py": f"import {MISSING}  # noqa\n",
    "sub/test_under_a_broken_conftest.py": "def test_never():\n    pass\n",
}


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


def _reasons(summary: dict) -> dict[tuple[str, str], tuple[int, int]]:
    return {(category, group["reason"]): (group["tests"], group["files"])
            for category, entry in summary["not_passed"].items()
            for group in entry["reasons"]}


def test_every_test_that_did_not_pass_is_counted_by_category_and_reason(suite, tmp_path):
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(suite), "--no-guard", "--out", str(out),
                       "--file-timeout", "4", "--exclude", "*/test_raises_*")
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    missing = f"ModuleNotFoundError: No module named '{MISSING}'"
    assert _reasons(summary) == {
        ("skipped", "needs CUDA"): (2, 1),
        ("skipped", "requires gpu"): (1, 1),
        ("skipped", f"could not import '{MISSING}': No module named '{MISSING}'"): (0, 1),
        # the test's own import, the file's, and the conftest's: one reason, three files
        ("missing-package", missing): (1, 3),
        ("failed", "assert N == N"): (2, 1),
        ("failed", "fixture 'nope' not found"): (1, 1),
        ("time-cap", "killed at the N s time cap while running test_hangs.py::test_sleeps"):
            (0, 1),
        ("crashed", "pytest exited N without ending its session while running "
                    "test_exits.py::test_exits"): (0, 1),
    }, summary["not_passed"]
    assert summary["outcomes"] == {"passed": 2, "skipped": 3, "failed": 3, "error": 1}
    assert summary["collectors"] == {"skipped": 1, "error": 2, "time-cap": 1, "crashed": 1}
    assert summary["excluded"] == {"*/test_raises_*": 1}
    assert summary["status"] == "pass" and not summary["findings"]   # none is a finding
    text = (out / "summary.md").read_text()
    assert "## Not passed, by reason" in text and "| skipped | `needs CUDA` | 2 | 1 |" in text
    assert "Not passed, by reason" in (out / "summary.html").read_text()
    assert "skipped: 3 tests, 2 files" in err and "'needs CUDA' (2 tests, 1 files)" in err
    assert "4 tests cannot run here" in err
    # the merge of the folder reads the same records: the counts survive it (the suite lies
    # outside the working folder: its files' folders under OUT/files must not be hidden)
    code, _, err = cli_here("merge", str(out), "--out", str(tmp_path / "merged"))
    assert code == 0, err
    merged = json.loads((tmp_path / "merged" / "guard-suite" / "summary.json").read_text())
    assert merged["not_passed"] == summary["not_passed"], err


def test_a_collection_error_is_counted_where_the_reason_puts_it():
    lines = [{"collector": "t/test_a.py", "outcome": "error",
              "reason": "ImportError: cannot import name 'VDevice' from 'tvm.ir' "
                        "(/x/.venv/lib/python3.11/site-packages/tvm/ir/__init__.py)"},
             {"collector": "t/test_b.py", "outcome": "error",
              "reason": "ModuleNotFoundError: No module named 'tvm.arith'"},
             {"collector": "t/test_c.py", "outcome": "error",
              "reason": "ModuleNotFoundError: No module named 'scipy.special'"},
             {"collector": "t/test_d.py", "outcome": "error",
              "reason": "OSError: libcuda.so.1: cannot open shared object file"},
             {"test": "t/test_e.py::test_x", "outcome": "failed",
              "reason": "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure "
                        "in name resolution>"},
             {"collector": "t/test_f.py", "outcome": "crashed",
              "reason": "pytest died of SIGKILL while running t/test_f.py::test_big"}]
    found = not_passed.tally(lines)
    assert [group["reason"] for group in found["cannot-collect"]["reasons"]] == [
        "ImportError: cannot import name 'VDevice' from 'tvm.ir' (tvm/ir/__init__.py)",
        "ModuleNotFoundError: No module named 'tvm.arith'"]   # TVM's own: not missing here
    assert (found["missing-package"]["tests"], found["missing-package"]["files"]) == (0, 2)
    assert found["needs-network"]["tests"] == 1 and found["crashed"]["files"] == 1
    # a guarded failure nobody ran again, and one of an unguarded run
    again = not_passed.tally([{"test": "t::a", "outcome": "failed", "reason": "x"},
                            {"test": "t::b", "outcome": "error", "reason": "y",
                             "guarded": False}])
    assert list(again) == ["failed", "failed-unrechecked"]


def test_a_test_failing_under_the_guard_is_run_again_without_it(tmp_path):
    """A test that fails only when guarded (it looks for the guard's option) passes when
    run again unguarded: `passes-unguarded`; one that always fails is TVM's, `failed`."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_guard_sensitive.py").write_text(
        "import sys\n\n"
        "def test_fails_only_guarded():\n    assert '--harness-guard' not in sys.argv\n\n"
        "def test_always_fails():\n    assert 3 == 4\n\n"
        "def test_passes():\n    pass\n")
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(folder), "--out", str(out), "--file-timeout", "120")
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["not_passed"]["failed"]["tests"] == 1, summary["not_passed"]
    assert summary["not_passed"]["failed"]["reasons"][0]["reason"] == "assert N == N"
    [changed] = summary["not_passed"]["passes-unguarded"]["reasons"]
    assert changed["tests"] == 1 and changed["example"].endswith("test_fails_only_guarded")
    assert summary["tests"] == 3   # the re-run's records are not tests of the summary
    [row] = [json.loads(line)["row"] for line in open(out / "guard-suite-rows.jsonl")]
    assert row["recheck_seconds"] > 0 and row["recorded"] == 3
    assert "passes-unguarded: 1 tests" in err


def test_a_file_is_named_from_its_suite_root_wherever_the_run_starts(tmp_path, monkeypatch):
    root = tmp_path / "tvm"
    (root / "tests" / "python" / "ir").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-v'\n")
    test = root / "tests" / "python" / "ir" / "test_x.py"
    test.write_text("def test_x():\n    pass\n")
    for where in (tmp_path, root / "tests"):
        monkeypatch.chdir(where)
        assert file_run.key(str(test)) == os.path.join("tests", "python", "ir", "test_x.py")
    (root / "pyproject.toml").write_text("[tool.ruff]\n")   # no pytest section: not a root
    monkeypatch.chdir(root)
    assert file_run.key(str(test)) == os.path.join("tests", "python", "ir", "test_x.py")
    assert not_passed.normalize("need nvcc >= 11.4") == "need nvcc >= 11.4"
    assert not_passed.normalize("assert 3 == 4 at 0xdeadbeef", numbers=True) == \
        "assert N == N at 0x?"

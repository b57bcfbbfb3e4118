"""What did not pass, counted by reason: guard-suite over tiny synthetic suites.

A whole suite run far from its CI skips what needs a GPU or a missing package, has files
that do not collect and tests that fail on their own; none of that may vanish from the
count, and none of it is a guard finding. The synthetic suite has one of each: skips with
reasons, a module-level importorskip, a file importing a package that is not installed,
a file raising at import, a failing test, a missing fixture, a conftest.py that does not
import, a file that hangs past --file-timeout, a test that ends the process (os._exit);
the summary must count each under its category and reason, the merge of the folder must
keep the counts. Under the guard, what did not pass is run again to tell TVM's failure (or
a flaky test) from the guard's doing, a harness error: a test that fails only while the
guard's instrument is on, a file the guard's run kills (a signal, the time cap) that
completes without it.
"""
import json
import os

import pytest

from harness.suite import file_run, not_passed
from harness.suite import summary as suite_summary
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


@pytest.mark.nightly   # 9 s: the reasons' tally; the default run keeps the suite's exit proofs
def test_every_test_that_did_not_pass_is_counted_by_category_and_reason(suite, tmp_path):
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(suite), "--no-guard", "--out", str(out),
                       "--file-timeout", "4", "--exclude", "*/test_raises_*")
    assert code == 1, err   # the suite's own failures are never a pass
    summary = json.loads((out / "summary.json").read_text())
    assert summary["suite_status"] == "suite-failed" and "the suite failed on its own" in err
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


# True only while the guard is on: its PassInstrument sits in the current PassContext (the
# guard imports TVM; a test run without it never does, so it checks without importing).
GUARDED = '''
import sys


def guarded():
    tvm = sys.modules.get("tvm")
    return tvm is not None and any(instrument.name == "HarnessSuiteGuard" for instrument
                                   in tvm.transform.PassContext.current().instruments)
'''


def _suite(tmp_path, files: dict[str, str]):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.nightly   # 13 s: the default run's guard-made failure proof is the killed file's
def test_a_test_the_guard_fails_is_a_harness_error_and_a_flaky_one_is_flaky(tmp_path):
    """A failed test is run again unguarded, and once it passes, once more guarded: one
    that fails only while the guard's instrument is on fails again, the guard's doing (exit
    4, named); one that fails on its first run only passes, flaky; one that always fails is
    TVM's, `failed`."""
    counter = tmp_path / "runs"
    folder = _suite(tmp_path, {
        "test_guard_sensitive.py": GUARDED + "\n\n"
        "def test_fails_only_guarded():\n    assert not guarded()\n\n\n"
        "def test_always_fails():\n    assert 3 == 4\n\n\n"
        "def test_passes():\n    pass\n",
        "test_flaky.py": "import pathlib\n\n\ndef test_fails_on_its_first_run_only():\n"
        f"    counter = pathlib.Path({str(counter)!r})\n"
        "    runs = int(counter.read_text()) if counter.exists() else 0\n"
        "    counter.write_text(str(runs + 1))\n"
        "    assert runs > 0, 'the first run fails'\n"})
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(folder), "--out", str(out), "--file-timeout", "120")
    assert code == 4, err
    assert counter.read_text() == "3"   # guarded, unguarded, guarded again
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "harness-error", summary["findings"]
    found = summary["not_passed"]
    assert {category: entry["tests"] for category, entry in found.items()} == {
        "failed": 1, "flaky": 1, "guard-changed": 1}, found
    assert found["failed"]["reasons"][0]["reason"] == "assert N == N"
    assert found["flaky"]["reasons"][0]["example"].endswith("test_fails_on_its_first_run_only")
    [changed] = summary["guard_changed"]   # the flaky test is not among them
    assert changed["test"] == "test_guard_sensitive.py::test_fails_only_guarded", changed
    assert "once more under it: failed" in changed["how"]
    [finding] = summary["findings"]
    assert finding["status"] == "harness-error" and finding["count"] == 1
    assert finding["example_test"] == changed["test"]
    assert summary["tests"] == 4   # the re-runs' records are not tests of the summary
    rows = [json.loads(line)["row"] for line in open(out / "guard-suite-rows.jsonl")]
    assert all(row["recheck_seconds"] > 0 for row in rows), rows
    assert f"harness-error: {changed['file']}, test {changed['test']}" in err
    assert "The guard changed these outcomes" in (out / "summary.md").read_text()


def test_a_file_killed_only_under_the_guard_is_a_harness_error(tmp_path):
    """A file whose pytest dies under the guard runs again whole without it (the same
    cap): completing, the kill was the guard's doing (exit 4, the file and the test that
    was running named); killed again, it stays the file's own, `crashed`."""
    folder = _suite(tmp_path, {
        "test_dies_guarded.py": GUARDED + "import os\nimport signal\n\n\n"
        "def test_ok():\n    pass\n\n\n"
        "def test_dies_guarded():\n    if guarded():\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n",
        "test_always_dies.py": "import os\nimport signal\n\n\n"
        "def test_dies():\n    os.kill(os.getpid(), signal.SIGKILL)\n"})
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(folder), "--out", str(out), "--file-timeout", "120",
                       "--jobs", "2")
    assert code == 4, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "harness-error"
    [changed] = summary["guard_changed"]
    assert (changed["file"], changed["test"]) == (
        "test_dies_guarded.py", "test_dies_guarded.py::test_dies_guarded"), changed
    assert "died of SIGKILL while running test_dies_guarded.py::test_dies_guarded" in \
        changed["how"]
    found = summary["not_passed"]
    assert (found["guard-changed"]["tests"], found["guard-changed"]["files"]) == (0, 1)
    [crashed] = found["crashed"]["reasons"]   # killed again without the guard: its own
    assert crashed["example"] == "test_always_dies.py", found
    assert summary["outcomes"] == {"passed": 1}   # what ran under the guard before the kills
    assert "harness-error: test_dies_guarded.py, test test_dies_guarded.py::" in err


@pytest.mark.nightly   # 5 s: the default run's killed-file proof is the one above
def test_a_file_killed_once_under_the_guard_is_run_under_it_again_not_blamed_on_it(tmp_path):
    """A kill that does not repeat (the machine paused or loaded past the cap once) is
    not the guard's doing: the file is run whole under the guard once more, and what that
    run records is the file's. Before, the file went straight to the unguarded re-run,
    which completed, and the guard was blamed (three such harness errors in one night)."""
    folder = _suite(tmp_path, {
        "test_killed_once.py": "import os\nimport signal\n\n"
        "FLAG = os.path.join(os.path.dirname(__file__), 'killed-once')\n\n\n"
        "def test_killed_once():\n    if not os.path.exists(FLAG):\n"
        "        open(FLAG, 'w').close()\n        os.kill(os.getpid(), signal.SIGKILL)\n"})
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(folder), "--out", str(out), "--file-timeout", "120")
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] != "harness-error" and not summary["guard_changed"], summary
    assert summary["outcomes"] == {"passed": 1}, summary
    assert "run again under the guard: the first run was pytest died of SIGKILL" in err, err
    [row] = [json.loads(line)["row"] for line in (out / "guard-suite-rows.jsonl").open()]
    assert row["retried"].startswith("pytest died of SIGKILL"), row


@pytest.mark.nightly   # a hang costs its time cap: 30 s
def test_a_file_timed_out_only_under_the_guard_is_a_harness_error(tmp_path):
    """Killed at the time cap under the guard, completing in a second without it."""
    folder = _suite(tmp_path, {"test_hangs_guarded.py": GUARDED + "import time\n\n\n"
                               "def test_hangs_guarded():\n    while guarded():\n"
                               "        time.sleep(1)\n"})
    out = tmp_path / "out"
    code, _, err = cli("guard-suite", str(folder), "--out", str(out), "--file-timeout", "30")
    assert code == 4, err
    summary = json.loads((out / "summary.json").read_text())
    [changed] = summary["guard_changed"]
    assert changed["test"] == "test_hangs_guarded.py::test_hangs_guarded", changed
    assert "killed at the 30 s time cap" in changed["how"]
    assert list(summary["not_passed"]) == ["guard-changed"], summary["not_passed"]


def test_what_the_guard_changed_and_what_is_flaky_are_read_from_the_rechecked_lines():
    def failed(test, **again):
        return [{"test": test, "outcome": "failed", "reason": "assert 1 == 2", "violations": []},
                {"rechecked": test, "outcome": "passed", **again}]
    flaky = failed("t.py::a", guarded_again="passed")
    stopped = [{"collector": "u.py", "outcome": "time-cap", "running": "u.py::b",
                "reason": "killed at the 9 s time cap while running u.py::b"},
               {"rechecked": "u.py", "outcome": "time-cap", "reason": "killed again"}]
    alone = suite_summary.summarize(flaky + stopped)   # flaky and a file that hangs unguarded too
    assert alone["status"] == "pass" and alone["guard_exit"] == 0 and not alone["guard_changed"]
    # a file killed at the time cap unguarded too: the suite's failure, not the guard's
    assert (alone["suite_status"], alone["exit"]) == ("suite-failed", 1)
    assert list(alone["not_passed"]) == ["flaky", "time-cap"]
    changed = suite_summary.summarize(flaky + failed("t.py::c", guarded_again="error")
                         + failed("t.py::d")   # never run under the guard again: not shown flaky
                         + [stopped[0], {"rechecked": "u.py", "outcome": "completed"}])
    assert changed["exit"] == 4 and [item["test"] for item in changed["guard_changed"]] == [
        "t.py::c", "t.py::d", "u.py::b"]
    assert changed["not_passed"]["guard-changed"]["tests"] == 2
    assert [f["count"] for f in changed["findings"]] == [2, 1]   # tests, then the file


def test_a_file_is_named_from_its_suite_root_wherever_the_run_starts(tmp_path, monkeypatch):
    root = tmp_path / "tvm"
    (root / "tests" / "python" / "ir").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-v'\n")
    test = root / "tests" / "python" / "ir" / "test_x.py"
    test.write_text("def test_x():\n    pass\n")
    for where in (tmp_path, root / "tests"):
        monkeypatch.chdir(where)
        assert file_run.key(str(test)) == os.path.join("tests", "python", "ir", "test_x.py")
    assert file_run.suite_root(str(test)) == str(root)
    (root / "pyproject.toml").write_text("[tool.ruff]\n")   # no pytest section: not a root
    assert file_run.suite_root(str(test)) is None
    monkeypatch.chdir(tmp_path)   # no root: named from here
    assert file_run.key(str(test)) == os.path.join("tvm", "tests", "python", "ir", "test_x.py")
    assert not_passed.normalize("need nvcc >= 11.4") == "need nvcc >= 11.4"
    assert not_passed.normalize("assert 3 == 4 at 0xdeadbeef", numbers=True) == \
        "assert N == N at 0x?"


def test_a_suite_with_failing_and_uncollectable_tests_never_exits_as_a_pass(tmp_path):
    """It exited 0 ("status pass") and called a user's failing test TVM's. Now: exit 1 with
    the suite's own failures said apart from the guard's findings; --allow-suite-failures
    exits on the guard's alone; a run where no test ran is no-tests, never a pass."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "test_a.py").write_text("def test_ok():\n    pass\n\n"
                                      "def test_fails():\n    assert 1 + 1 == 3\n")
    (folder / "test_b.py").write_text("def test_(:\n")   # does not collect
    code, _, err = cli("guard-suite", str(folder), "--out", str(tmp_path / "out"))
    assert code == 1, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["status"], summary["suite_status"]) == ("pass", "suite-failed")
    assert set(summary["not_passed"]) == {"failed", "cannot-collect"}
    assert "TVM's" not in err and "the suite's, not the guard's" in err
    assert summary["guard_exit"] == 0   # what --allow-suite-failures exits with
    assert suite_summary.summarize([])["suite_status"] == "no-tests"
    assert suite_summary.summarize([])["exit"] == 1
    # the headline never says the guard passed when it checked nothing
    nothing = suite_summary.headline(suite_summary.summarize([]))
    assert "the guard checked nothing" in nothing and "status pass" not in nothing

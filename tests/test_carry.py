"""`report --carry DIR`: a row computed from the very same inputs on an earlier night is
taken, not checked again, and read again against today's registry (harness.cli.carry).

A real report makes the earlier night; the carried rows are then edited to show that the
carry reads them again (a violation no entry explains turns the row red) and that it
keys on the inputs (another digest is checked again).
"""
import ast
import json
import shutil
import subprocess
import sys

import pytest
from helpers import RELAX_MODULE_FILE, ROOT, SMALL_CASE, cli_here

from harness.cli import carry, row_code
from harness.cli.report import row_key

pytestmark = pytest.mark.in_process_tvm


def _report(out, *more):
    return cli_here("report", SMALL_CASE, "--out", out, "--jobs", "1", *more)


def _lines(folder):
    with open(f"{folder}/report-rows.jsonl") as handle:
        return [json.loads(line) for line in handle]


def _rewrite(folder, edit):
    lines = _lines(folder)
    for line in lines:
        edit(line)
    with open(f"{folder}/report-rows.jsonl", "w") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


@pytest.fixture(scope="session")
def last_night(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("last-night"))
    code, _, err = _report(folder)
    assert code == 0, err
    return folder


def test_a_row_of_the_same_inputs_is_carried_not_checked(last_night, tmp_path):
    code, _, err = _report(str(tmp_path / "tonight"), "--carry", last_night,
                           "--carry-refresh", "0")
    assert code == 0, err
    assert "1 carried from an earlier run with the same inputs, 0 to run" in err, err
    (line,) = _lines(tmp_path / "tonight")
    (before,) = _lines(last_night)
    assert line["row"]["carried"] == last_night
    assert {k: v for k, v in line["row"].items() if k != "carried"} == before["row"]
    assert line["inputs"] == before["inputs"] == carry.inputs_digest("report")


def test_a_carried_row_is_read_again_against_todays_registry(last_night, tmp_path):
    """The earlier night's row says pass; its violations, read against today's registry,
    say a new finding (as if the registry had lost the entry that explained it)."""
    earlier = str(tmp_path / "earlier")
    shutil.copytree(last_night, earlier)

    def unexplained(line):
        line["row"]["judged"]["violations"].append({
            "kind": "mutated", "stage": "zero-pipeline", "pass_name": "HarnessNoSuchPass",
            "access_path": "(its input)", "detail": "seeded: no entry explains this"})
    _rewrite(earlier, unexplained)
    code, _, err = _report(str(tmp_path / "tonight"), "--carry", earlier,
                           "--carry-refresh", "0")
    assert "1 carried" in err, err
    (line,) = _lines(tmp_path / "tonight")
    assert line["row"]["status"] == "new" and line["row"]["failing"], line["row"]
    assert code == 1, err


def test_a_row_of_other_inputs_is_checked_again(last_night, tmp_path):
    earlier = str(tmp_path / "earlier")
    shutil.copytree(last_night, earlier)
    _rewrite(earlier, lambda line: line.update(inputs="another harness"))
    code, _, err = _report(str(tmp_path / "tonight"), "--carry", earlier)
    assert code == 0 and "0 carried" in err and "1 to run" in err, err
    (line,) = _lines(tmp_path / "tonight")
    assert "carried" not in line["row"]


def test_a_source_build_is_never_carried(last_night):
    (line,) = _lines(last_night)
    stack = {**line["stack"], "tvm_version": "git:5d4dc87213ab"}
    assert carry.rows([last_night], "report", stack, lambda row: row["case"], refresh=0) == {}
    assert carry.rows([last_night], "report", line["stack"], lambda row: row["case"],
                      refresh=0)


def test_the_digest_follows_the_code_and_the_catalog_not_the_registry(tmp_path, monkeypatch):
    for top in ("harness", "cases"):
        shutil.copytree(f"{ROOT}/{top}", tmp_path / top,
                        ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(carry.paths, "REPO_ROOT", str(tmp_path))
    digest = carry.inputs_digest.__wrapped__
    commands = ("report", "passes", "guard-suite")
    first = {command: digest(command) for command in commands}

    def edit(relative):
        with open(tmp_path / relative, "a") as handle:
            handle.write("\n# an edit\n")
        return {command: digest(command) for command in commands}
    # a registry edit: rows are read again, not recomputed
    assert edit("cases/known_issues/00-core.toml") == first
    # the page and the fuzzer make no row: last night's report and sweep stand
    page = edit("harness/pages/matrix_page.py")
    assert page["report"] == first["report"] and page["passes"] == first["passes"]
    assert edit("harness/fuzz/fuzz_ops.py") == page
    # the pass guard checks every row of every command
    guard = edit("harness/tvmapi/pass_guard.py")
    assert all(guard[command] != page[command] for command in commands), guard
    # the catalog is every row's input too
    catalog = edit("cases/catalog.toml")
    assert all(catalog[command] != guard[command] for command in commands), catalog


def test_a_rows_digest_covers_every_harness_module_its_checking_child_imports():
    """The digest's code is a static import closure (harness.cli.row_code); a child that
    really checks cases (an ONNX graph case, an onnx-node case) imports nothing outside
    it, lazy imports and the doors included. A dynamic import the closure cannot see
    would fail here, and so would a row maker left out of ROW_MAKERS."""
    script = ("import json, sys, tempfile\n"
              "from harness.options import Options\n"
              "from harness.process.child import run_spec\n"
              "for case in sys.argv[1:]:\n"
              "    with tempfile.TemporaryDirectory() as work:\n"
              "        run_spec({'case': case, 'options': Options().to_json()},\n"
              "                 lambda event: None, work)\n"
              "print(json.dumps(sorted(name for name in sys.modules\n"
              "                        if name.split('.')[0] == 'harness')))\n")
    done = subprocess.run([sys.executable, "-c", script, SMALL_CASE,
                           "node-averagepool_1d_default"], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert "harness.runner.path_runner" in imported and "harness.doors.onnx_door" in imported
    modules = row_code.modules(ROOT)
    for command in ("report", "passes"):
        covered = set(row_code.files_of(command, ROOT))
        assert [name for name in imported if modules[name] not in covered] == [], command


def test_what_the_cli_imports_beyond_a_rows_code_does_nothing_when_imported():
    """`python -m harness report` imports every command (harness.cli.main registers them),
    so a module outside report's closure still runs its top level: it may only define
    names (imports, functions, classes, constants, tables), never call into another
    module's state, or an edit to it could change a row the digest says is the same."""
    inside = set(row_code.files_of("report", ROOT)) & set(row_code.files_of("passes", ROOT))
    offenders = []
    for relative in sorted(set(row_code.modules(ROOT).values()) - inside):
        with open(f"{ROOT}/{relative}") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            defines = isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                        ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
                                        ast.AnnAssign))
            docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            guarded = isinstance(node, ast.If) and ast.unparse(node.test) in (
                "TYPE_CHECKING", "__name__ == '__main__'")   # never run by an import
            if not (defines or docstring or guarded) and relative != "harness/__main__.py":
                offenders.append(f"{relative}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert offenders == []


def test_guard_suite_carries_files_and_their_records_while_the_suite_is_the_same(tmp_path):
    """A file runs, then is carried whole (its records copied: the summary counts them as
    before); once a test file changes, the suite's digest moves and the file runs again."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for index in range(1):
        (suite / f"test_{index}.py").write_text(f"def test_{index}():\n    pass\n")
    (suite / "pytest.ini").write_text("[pytest]\n")

    def run(out, *more):
        code, _, err = cli_here("guard-suite", str(suite), "--no-guard", "--out",
                                str(tmp_path / out), *more)
        with open(tmp_path / out / "summary.json") as handle:
            return code, err, json.load(handle)
    code, err, first = run("night1")
    assert code == 0 and "1 to run" in err, err
    code, err, second = run("night2", "--carry", str(tmp_path / "night1"),
                            "--carry-refresh", "0")
    assert code == 0 and "1 carried from an earlier run with the same inputs, 0 to run" in err
    assert second["outcomes"] == first["outcomes"] == {"passed": 1}
    assert all(row["carried"] == str(tmp_path / "night1") for row in second["files"])
    (suite / "test_0.py").write_text("def test_0():\n    assert True\n")
    code, err, third = run("night3", "--carry", str(tmp_path / "night1"))
    assert code == 0 and "0 carried" in err and "1 to run" in err, err
    assert not any("carried" in row for row in third["files"])


def test_each_row_is_checked_for_real_one_night_in_n():
    """--carry-refresh 7: over any 7 nights each row is due exactly once, and the rows
    due on one night are about a seventh (spread, not all on one night)."""
    keys = [("case", index, "extract") for index in range(700)]
    for key in keys[:50]:
        assert sum(carry.due(key, day, 7) for day in range(1000, 1007)) == 1
    tonight = sum(carry.due(key, 1000, 7) for key in keys)
    assert 60 <= tonight <= 140, tonight
    assert not any(carry.due(key, day, 0) for key in keys[:20] for day in range(7))


def test_a_row_due_tonight_is_checked_again(last_night, tmp_path):
    (line,) = _lines(last_night)
    key = row_key(line["row"])
    due_day = next(day for day in range(1000, 1007) if carry.due(key, day, 7))
    assert carry.rows([last_night], "report", line["stack"], row_key, day=due_day) == {}
    assert carry.rows([last_night], "report", line["stack"], row_key, day=due_day + 1)


def test_a_users_file_is_never_carried(last_night, tmp_path):
    """Its content is no part of the digest (nor what its Python imports beside it): a
    user's model is checked every night, built-in cases carry. Last night's row is
    relabelled as the user's file's, the same stack and digest: it is checked again."""
    from harness.catalog import cases as catalog
    mine = tmp_path / "mine.py"
    mine.write_text(RELAX_MODULE_FILE)
    earlier = str(tmp_path / "earlier")
    shutil.copytree(last_night, earlier)
    _rewrite(earlier, lambda line: line["row"].update(case=str(mine)))
    code, _, err = cli_here("report", str(mine), "--out", str(tmp_path / "tonight"),
                            "--jobs", "1", "--carry", earlier, "--carry-refresh", "0")
    assert code == 0 and "--carry: 1 rows" in err and "0 carried" in err \
        and "1 to run" in err, err
    assert carry.case_carries(catalog.resolve(SMALL_CASE))
    assert carry.case_carries(catalog.resolve("nn-mlp"))   # its file is under cases/
    assert not carry.case_carries(catalog.Case("mine", "file:mine.py", base=str(tmp_path)))


def test_a_row_that_ended_early_is_checked_again(last_night, tmp_path):
    """A crash, a time limit or our own bug is no function of the inputs: never carried."""
    earlier = str(tmp_path / "earlier")
    shutil.copytree(last_night, earlier)
    _rewrite(earlier, lambda line: line["row"].update(verdict="timeout"))
    code, _, err = _report(str(tmp_path / "tonight"), "--carry", earlier,
                           "--carry-refresh", "0")
    assert code == 0 and "0 carried" in err and "1 to run" in err, err
    assert not carry.settled({"file": "t.py", "timed_out": True})
    assert not carry.settled({"file": "t.py", "returncode": -11})


def test_the_suites_digest_follows_a_test_file_given_alone(tmp_path):
    import sys
    test_file = tmp_path / "test_one.py"
    test_file.write_text("def test_one():\n    pass\n")
    first = carry.suite_digest(sys.executable, [str(test_file)])
    assert first is not None and first == carry.suite_digest(sys.executable, [str(test_file)])
    test_file.write_text("def test_one():\n    assert True\n")
    assert carry.suite_digest(sys.executable, [str(test_file)]) != first

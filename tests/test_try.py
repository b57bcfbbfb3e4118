"""`try`: a change read by its files and lines, the checks it can affect selected with
their reasons, run on the base and the head, and what is new or fixed named.

A real git history stands in for apache/tvm (a toy ONNX frontend whose converter map has
the real one's shape, a C++ pass file, docs) and a toy bench for the build and the checks
(it reads the seeded markers back from the checked-out tree, as a real build runs the
seeded code). What is real: the diff reading, the selection over the real catalog (the
ONNX node tests' operators), the two sides' runs and their comparison, the comment, the
checkout left as found. The same on a real TVM commit is the nightly test at the bottom.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys

import pytest
import seeded_history
from helpers import ROOT

from harness.cli import try_change
from harness.premerge import change as change_of
from harness.premerge import targets, touched
from harness.premerge.exercised import Exercised
from harness.versions import nights

FRONTEND = "python/tvm/relax/frontend/onnx/onnx_frontend.py"
PASS_FILE = "src/relax/transform/fuse_ops.cc"
TOY_FRONTEND = '''"""A toy ONNX frontend: the converter map's shape is the real one's."""
import math

ROUNDING = "half_to_even"


def _blocks(x, size):
    return x // size


class Relu:
    @classmethod
    def _impl_v1(cls, x):
        return x


class DepthToSpace:
    @classmethod
    def _impl_v11(cls, x, size):
        return [0, 1, 4, 2, 5, 3], _blocks(x, size)


class SpaceToDepth:
    @classmethod
    def _impl_v1(cls, x, size):
        return [0, 3, 5, 1, 2, 4]


def _get_convert_map():
    return {
        "Relu": Relu,
        "DepthToSpace": DepthToSpace,
        "SpaceToDepth": SpaceToDepth,
    }
'''
TOY_PASS = '''Pass FuseOps(int level) {
  auto pass_func = [=](IRModule m, PassContext pc) { return relax::FuseOps(m, level); };
  return CreateModulePass(/*pass_function=*/pass_func,  //
                          /*opt_level=*/0,              //
                          /*name=*/"FuseOps",           //
                          /*required=*/{});
}
'''
WRONG = "wrong-result:compile:(outcome):differs from onnxruntime"
MUTATED = "mutated:extract-tasks:FuseOps"


@pytest.fixture
def repo(tmp_path):
    """A toy apache/tvm at its base commit."""
    root = tmp_path / "tvm"
    (root / "python" / "tvm").mkdir(parents=True)
    seeded_history.git(root, "init", "-q", "-b", "main")
    seeded_history.commit(root, "base", {FRONTEND: lambda old: TOY_FRONTEND,
                                         PASS_FILE: lambda old: TOY_PASS,
                                         "docs/index.md": lambda old: "docs\n",
                                         "tests/python/test_a.py": lambda old: "x = 1\n"})
    return root


def _branch(root, name: str, edits: dict) -> str:
    seeded_history.git(root, "checkout", "-q", "-b", name, "main")
    made = seeded_history.commit(root, name, edits)
    seeded_history.git(root, "checkout", "-q", "main")
    return made


def _touched(root, edits: dict) -> list[touched.Touched]:
    head = _branch(root, "change", edits)
    return touched.read(change_of.of_refs(str(root), "main", head))


# ---- what a change touches ------------------------------------------------------------

def test_a_changed_converter_class_names_its_map_entry_and_only_it(repo):
    read = _touched(repo, {FRONTEND: seeded_history.replace("[0, 1, 4, 2, 5, 3]",
                                                            "[0, 1, 4, 3, 5, 2]")})
    assert [(item.area, item.frontend, item.converters) for item in read] == [
        (touched.Area.FRONTEND, "onnx", frozenset({"DepthToSpace"}))]


def test_a_changed_helper_names_the_converters_that_call_it(repo):
    read = _touched(repo, {FRONTEND: seeded_history.replace("return x // size",
                                                            "return x // (size * size)")})
    assert read[0].converters == {"DepthToSpace"} and not read[0].whole_frontend


def test_a_changed_map_line_names_its_entry(repo):
    read = _touched(repo, {FRONTEND: seeded_history.replace('"Relu": Relu,',
                                                            '"Relu": SpaceToDepth,')})
    assert read[0].converters == {"Relu"}   # the entry changed, not SpaceToDepth


def test_a_module_constant_reaches_the_whole_frontend_and_an_import_does_not(repo):
    read = _touched(repo, {FRONTEND: seeded_history.replace('"half_to_even"', '"up"')})
    assert read[0].whole_frontend and "outside every converter" in read[0].why
    seeded_history.git(repo, "checkout", "-q", "main")
    imported = _branch(repo, "imports", {FRONTEND: seeded_history.replace(
        "import math\n", "import math\nimport functools\n")})
    read = touched.read(change_of.of_refs(str(repo), "main", imported))
    assert not read[0].whole_frontend and not read[0].converters


def test_a_translator_method_in_another_file_names_the_map_entries_that_call_it(repo):
    """PyTorch's map is in exported_program_translator.py, its methods in the base class's
    file: a change of the method names the ATen converters."""
    base_file = "python/tvm/relax/frontend/torch/base_fx_graph_translator.py"
    map_file = "python/tvm/relax/frontend/torch/exported_program_translator.py"
    seeded_history.commit(repo, "torch", {
        base_file: lambda old: "class Base:\n    def _conv2d(self, node):\n        return 1\n"
                               "\n    def _relu(self, node):\n        return 2\n",
        map_file: lambda old: "class Importer(Base):\n    def create_convert_map(self):\n"
                              "        return {\n            'conv2d.default': self._conv2d,\n"
                              "            'relu.default': self._relu,\n        }\n"})
    read = _touched(repo, {base_file: seeded_history.replace("return 1", "return 3")})
    assert (read[0].frontend, read[0].converters) == ("torch", {"conv2d.default"})


def test_a_cpp_pass_file_names_the_passes_it_registers(repo):
    read = _touched(repo, {PASS_FILE: seeded_history.replace(
        "return relax::FuseOps(m, level);", "return relax::FuseOps(m, level + 1);")})
    assert (read[0].area, read[0].passes) == (touched.Area.PASS, {"FuseOps"})


def test_a_tir_pass_is_named_with_its_namespace():
    assert touched._pass_name("AnnotateEntryFunc", "tirx.") == "tirx.AnnotateEntryFunc"
    assert touched._pass_name("tirx.NarrowDataType", "tirx.") == "tirx.NarrowDataType"


# ---- the selection --------------------------------------------------------------------

def _maps():
    from harness.catalog import cases as catalog
    return {case.id: case.door.converter_map
            for case in catalog.select_for_run(None, everything=True)}


def _node_tests():
    from harness.catalog import onnx_node
    return onnx_node.operators_by_case()


def test_a_changed_converter_selects_the_cases_that_exercise_it_named_first():
    from harness.premerge import exercised
    found = exercised.gather([], _node_tests(), _maps())
    item = touched.Touched(FRONTEND, touched.Area.FRONTEND, "onnx",
                           frozenset({"DepthToSpace"}))
    selection = targets.select([item], found, _maps())
    cases = set(selection.cases["compile"])
    assert "node-depthtospace_crd_mode_example" in cases
    assert all("depthtospace" in case for case in cases)
    assert selection.reproducers and not selection.passes


def test_a_measured_record_wins_over_the_graph_and_a_cap_is_said():
    found = Exercised()
    for number in range(5):
        found.add("onnx", f"case-{number}", {"Add", "Relu"} if number else {"Add"},
                  "measured")
    item = touched.Touched(FRONTEND, touched.Area.FRONTEND, "onnx", frozenset({"Add"}))
    maps = {f"case-{number}": "onnx" for number in range(5)}
    selection = targets.select([item], found, maps, per_converter=2)
    assert list(selection.cases["compile"]) == ["case-0", "case-1"]   # Add alone first
    assert any("2 of the 5 cases" in note for note in selection.notes)
    found.add("onnx", "case-0", {"Relu"}, "the model's graph")   # never replaces measured
    assert found.of_case("case-0") == {"Add"}


def test_a_whole_frontend_change_selects_a_cover_of_its_converters():
    found = Exercised()
    found.add("onnx", "a", {"Add", "Relu"}, "measured")
    found.add("onnx", "b", {"Add"}, "measured")
    found.add("onnx", "c", {"Conv"}, "measured")
    assert targets.cover(found, ("onnx",), {"a": "onnx", "b": "onnx", "c": "onnx"}) == \
        ["a", "c"]


def test_docs_and_tests_alone_select_nothing_and_anything_else_the_default():
    docs = touched.Touched("docs/index.md", touched.Area.INERT)
    assert targets.select([docs], Exercised(), {}).empty
    ir = touched.Touched("src/ir/module.cc", touched.Area.UNMAPPED, why="nothing maps it")
    selection = targets.select([docs, ir], Exercised(), {})
    assert set(selection.cases) == {"extract", "compile"} and selection.reproducers
    assert all("default selection" in why[0] for why in selection.cases["compile"].values())


# ---- a try, end to end on the toy history ---------------------------------------------

class ToyBench:
    """Builds nothing; a check shows what the seeded files hold: a DepthToSpace case a
    wrong answer where the permutation is wrong, a reproducer where its marker is."""

    def __init__(self, root):
        self.root, self.builds, self.checks = root, [], 0

    def _text(self, relative):
        path = self.root / relative
        return path.read_text() if path.exists() else ""

    def _shows(self, case: str) -> list[str]:
        wrong = "[0, 1, 4, 3, 5, 2]" in self._text(FRONTEND) and "depthtospace" in case
        # the registered SpaceToDepth bug (onnx-spacetodepth-mode-ignored) on its own case
        wrong |= "[0, 3, 5, 1, 2, 4]" in self._text(FRONTEND) and "spacetodepth_crd" in case
        return [WRONG] if wrong else []

    def build(self, commit):
        seeded_history.git(self.root, "checkout", "-q", "--detach", commit)
        self.builds.append(commit)
        ok = "syntax error" not in self._text(PASS_FILE)
        return {"ok": ok, "seconds": 1.0, "reused": False, "folder": "build",
                "tail": "" if ok else "fuse_ops.cc:1: error"}

    def runner(self, commit, folder):
        seeded_history.git(self.root, "checkout", "-q", "--detach", commit)
        return commit

    def run_item(self, item, runner, out, folder):
        if item.name == "reproducers":
            reproduces = "[0, 3, 5, 1, 2, 4]" in self._text(FRONTEND)   # SpaceToDepth's bug
            return {"reproducer onnx-spacetodepth-crd": {
                "signatures": [nights.REPRODUCES] if reproduces else [],
                "recheck": {"script": "spacetodepth.py"}}}, ""
        if item.name.startswith("passes-"):   # the sweep: mutated where the pass writes m
            name = item.argv[item.argv.index("--pass") + 1]
            mutates = "const_cast" in self._text(PASS_FILE)
            return {f"passes {name} {case} imported": {
                "signatures": [MUTATED] if mutates else [], "recheck": {}}
                for case in item.argv[1:item.argv.index("--pass")]}, ""
        cases = list(item.argv[1:item.argv.index("--path")])
        path = item.argv[item.argv.index("--path") + 1]
        return {f"report {path} {case} nchw llvm": {
            "signatures": self._shows(case),
            "recheck": {"case": case, "args": ["--path", path]}} for case in cases}, ""

    def shows(self, recheck, signature, runner):
        self.checks += 1
        if "script" in recheck:
            return "[0, 3, 5, 1, 2, 4]" in self._text(FRONTEND)
        return signature in self._shows(recheck["case"])


def _args(repo, tmp_path, **overrides):
    return try_change.options(**{"source": str(repo), "base": "main", "jobs": 1,
                                 "no_ccache": True, "comment": str(tmp_path / "comment.md"),
                                 "state": str(tmp_path / "state"), **overrides})


def _patch(repo, tmp_path, name, old, new) -> str:
    text = (repo / FRONTEND).read_text()
    assert old in text
    (repo / FRONTEND).write_text(text.replace(old, new))
    diff = seeded_history.git(repo, "diff")
    seeded_history.git(repo, "checkout", "-q", "--", FRONTEND)
    path = tmp_path / name
    path.write_text(diff + "\n")
    return str(path)


def test_a_patch_that_breaks_a_converter_is_new_confirmed_and_the_checkout_left_as_found(
        repo, tmp_path, capsys):
    patch = _patch(repo, tmp_path, "break.patch", "[0, 1, 4, 2, 5, 3]", "[0, 1, 4, 3, 5, 2]")
    bench = ToyBench(repo)
    code = try_change.try_change(_args(repo, tmp_path, patch=patch), lambda *_: bench)
    text = capsys.readouterr().out
    assert code == 1, text
    assert "**" in text and "New on the head" in text and WRONG in text
    assert "node-depthtospace_crd_mode_example" in text and "confirmed" in text
    assert "converter DepthToSpace changed" in text
    branch = seeded_history.git(repo, "branch", "--list", "harness-try/*")
    assert "harness-try/break.patch-" in branch
    assert seeded_history.git(repo, "symbolic-ref", "--short", "HEAD") == "main"
    assert not seeded_history.git(repo, "status", "--porcelain")
    assert (tmp_path / "comment.md").read_text() == text
    # the same try again resumes: nothing is built or run a second time
    builds = list(bench.builds)
    assert try_change.try_change(_args(repo, tmp_path, patch=patch), lambda *_: bench) == 1
    assert bench.builds == builds


def test_a_patch_that_fixes_a_registered_bug_names_it_and_nothing_new(repo, tmp_path,
                                                                      capsys):
    patch = _patch(repo, tmp_path, "fix.patch", "[0, 3, 5, 1, 2, 4]", "[0, 1, 3, 5, 2, 4]")
    code = try_change.try_change(_args(repo, tmp_path, patch=patch, json=True),
                                 lambda *_: ToyBench(repo))
    answer = json.loads(capsys.readouterr().out)
    assert code == 0
    # by its reproducer (the toy's), and by the registered entry's own case, no longer wrong
    fixed = {fix["entry"]: fix["note"] for fix in answer["fixes"]}
    assert set(fixed) == {"onnx-spacetodepth-crd", "onnx-spacetodepth-mode-ignored"}
    assert fixed["onnx-spacetodepth-crd"] == ""
    assert fixed["onnx-spacetodepth-mode-ignored"].startswith("its cases no longer show it")
    assert answer["new"] == []
    assert answer["selection"]["cases"]["compile"]   # SpaceToDepth's node tests ran


def test_an_unchanged_answer_is_no_news(repo, tmp_path, capsys):
    """The seeded fault's twin: a change to a converter that changes nothing it computes
    must not be reported (a false finding is the worst bug)."""
    patch = _patch(repo, tmp_path, "noop.patch", "return [0, 1, 4, 2, 5, 3], _blocks(x, size)",
                   "result = [0, 1, 4, 2, 5, 3], _blocks(x, size)\n        return result")
    code = try_change.try_change(_args(repo, tmp_path, patch=patch), lambda *_: ToyBench(repo))
    assert code == 0
    assert "**0 new**" in capsys.readouterr().out
    # another change to the same converter on the same base: the base is read back, only
    # the head is built and run
    other = _patch(repo, tmp_path, "other.patch", "return x // size", "return (x // size)")
    bench = ToyBench(repo)
    assert try_change.try_change(_args(repo, tmp_path, patch=other), lambda *_: bench) == 0
    base = seeded_history.git(repo, "rev-parse", "main")
    assert len(bench.builds) == 1 and bench.builds[0] != base


def test_a_head_that_does_not_compile_is_new(repo, tmp_path, capsys):
    head = _branch(repo, "broken", {PASS_FILE: seeded_history.append("syntax error")})
    code = try_change.try_change(_args(repo, tmp_path, head=head), lambda *_: ToyBench(repo))
    text = capsys.readouterr().out
    assert code == 1 and "build:it does not compile" in text and "fuse_ops.cc:1" in text
    assert "| build | `build:it does not compile` | confirmed |" in text   # one line a row


def test_a_pass_that_starts_mutating_its_input_is_found_by_its_sweep(repo, tmp_path, capsys):
    head = _branch(repo, "mutates", {PASS_FILE: seeded_history.replace(
        "return relax::FuseOps(m, level);",
        "const_cast<IRModuleNode*>(m.get())->attrs = {}; return relax::FuseOps(m, level);")})
    code = try_change.try_change(_args(repo, tmp_path, head=head), lambda *_: ToyBench(repo))
    text = capsys.readouterr().out
    assert code == 1
    assert "passes FuseOps yolov3-tiny-nhwc imported" in text and MUTATED in text
    assert "not checked again" in text   # a sweep row has no check of its own
    assert "the sweep of FuseOps" in text


def test_a_docs_only_change_runs_nothing_and_says_so(repo, tmp_path):
    head = _branch(repo, "docs", {"docs/index.md": seeded_history.append("more"),
                                  "tests/python/test_a.py": seeded_history.append("y = 2")})
    proc = subprocess.run([sys.executable, "-m", "harness", "try", "--source", str(repo),
                           "--base", "main", "--head", head], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to run" in proc.stdout and "docs/index.md" in proc.stdout


@pytest.mark.parametrize("argv, said", [
    (["--head", "main", "--patch", "x.patch"], "not both"),
    ([], "give the change"),
    (["--patch", "missing.patch"], "no such file"),
    (["--head", "no-such-ref"], "is not a commit"),
])
def test_bad_input_is_exit_2_with_one_line(repo, argv, said):
    proc = subprocess.run([sys.executable, "-m", "harness", "try", "--source", str(repo),
                           "--base", "main", *argv], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_patch_that_does_not_apply_or_a_dirty_checkout_is_bad_input(repo, tmp_path):
    bad = tmp_path / "bad.patch"
    bad.write_text(f"--- a/{FRONTEND}\n+++ b/{FRONTEND}\n@@ -1,1 +1,1 @@\n-nothing like it\n"
                   "+at all\n")
    proc = subprocess.run([sys.executable, "-m", "harness", "try", "--source", str(repo),
                           "--base", "main", "--patch", str(bad)], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 2 and "does not apply" in proc.stderr
    (repo / FRONTEND).write_text("dirty\n")
    proc = subprocess.run([sys.executable, "-m", "harness", "try", "--source", str(repo),
                           "--base", "main", "--head", "main"], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 2 and "uncommitted changes" in proc.stderr


def test_the_toy_frontend_parses():
    ast.parse(TOY_FRONTEND)


# ---- on a real TVM checkout -----------------------------------------------------------

SOURCE = os.environ.get("HARNESS_TVM_SOURCE", "")


def _try_real(name: str, tmp_path) -> tuple[int, dict]:
    import seeded_tvm_changes
    patch = seeded_tvm_changes.patch(SOURCE, name, str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "harness", "try", "--source", SOURCE,
                           "--base", "HEAD", "--patch", patch, "--json", "--jobs", "2",
                           "--state", str(tmp_path / "state")],
                          capture_output=True, text=True, cwd=ROOT, timeout=5400)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout)


def _side(answer: dict, name: str) -> dict:
    return next(side for side in answer["sides"] if side["side"] == name)


NEEDS_SOURCE = pytest.mark.skipif(not SOURCE, reason="HARNESS_TVM_SOURCE (an apache/tvm "
                                                     "checkout with a build in its build/) "
                                                     "is not set")


@pytest.mark.nightly
@NEEDS_SOURCE
def test_a_docs_only_change_to_real_tvm_runs_nothing(tmp_path):
    code, answer = _try_real("docs", tmp_path)
    assert code == 0 and answer["selection"]["checks"] == 0 and "sides" not in answer


@pytest.mark.nightly
@NEEDS_SOURCE
def test_a_python_only_break_of_a_real_converter_is_found_without_a_build(tmp_path):
    """DepthToSpace's CRD permutation made wrong: a wrong answer on the compile path, the
    head served by the base's build (no compile)."""
    code, answer = _try_real("converter", tmp_path)
    assert code == 1
    assert any("depthtospace_crd" in finding["row"] for finding in answer["new"])
    assert _side(answer, "head")["build"]["reused"]


@pytest.mark.nightly
@NEEDS_SOURCE
def test_a_real_fix_is_named_as_fixing_its_entry_and_changes_nothing_else(tmp_path):
    import seeded_tvm_changes
    code, answer = _try_real("fix", tmp_path)
    assert code == 0 and not answer["new"]
    assert [fix["entry"] for fix in answer["fixes"]] == [seeded_tvm_changes.FIXED_ENTRY]


@pytest.mark.nightly
@NEEDS_SOURCE
def test_a_real_pass_made_to_mutate_its_input_in_cpp_is_found(tmp_path):
    code, answer = _try_real("pass", tmp_path)
    assert code == 1
    assert "FuseOps" in answer["selection"]["passes"]
    assert any(finding["signature"] == "mutated:zero-pipeline:FuseOps"
               and finding["state"] == "confirmed" for finding in answer["new"])


# ---- a fix, verified (`upstream ENTRY --fix PATCH`) -----------------------------------

def _entry(folder):
    from harness.catalog.issue_entry import KnownIssue
    (folder / "known_issues.toml").write_text(
        '[[issue]]\nid = "onnx-spacetodepth-crd"\ncase = "node-spacetodepth*"\n'
        'verdict = "wrong-result"\nreference = "not yet reported"\n'
        'reproducer = "reproducers/spacetodepth.py"\ntitle = "SpaceToDepth ignores mode"\n'
        'expected = "CRD order"\nactual = "DCR order"\n')
    (folder / "reproducers").mkdir()
    (folder / "reproducers" / "spacetodepth.py").write_text("raise SystemExit(1)\n")
    return KnownIssue(case=("node-spacetodepth*",), verdict="wrong-result",
                      reference="not yet reported", id="onnx-spacetodepth-crd",
                      base=str(folder), reproducer="reproducers/spacetodepth.py",
                      title="SpaceToDepth ignores mode", expected="CRD order",
                      actual="DCR order")


def test_a_patch_verified_to_fix_an_entry_is_kept_with_it_and_carried_upstream(
        repo, tmp_path, capsys):
    import dataclasses
    import tomllib

    from harness.catalog.issue_entry import KnownIssue
    from harness.cli import fix_verify, upstream
    registry = tmp_path / "registry"
    registry.mkdir()
    entry = _entry(registry)
    args = argparse.Namespace(source=str(repo), base="main", build_dir=None, store=None,
                              state=str(tmp_path / "state"), jobs=1)
    wrong = _patch(repo, tmp_path, "wrong.patch", "[0, 1, 4, 2, 5, 3]", "[0, 1, 4, 2, 5, 3] ")
    code = fix_verify.verify(entry, argparse.Namespace(**vars(args), fix=wrong),
                             make_bench=lambda *_: ToyBench(repo))
    assert code == 1 and "does not fix onnx-spacetodepth-crd" in capsys.readouterr().out
    assert not (registry / "fixes").exists()
    right = _patch(repo, tmp_path, "right.patch", "[0, 3, 5, 1, 2, 4]", "[0, 1, 3, 5, 2, 4]")
    code = fix_verify.verify(entry, argparse.Namespace(**vars(args), fix=right),
                             make_bench=lambda *_: ToyBench(repo))
    assert code == 0, capsys.readouterr()
    kept = registry / "fixes" / "onnx-spacetodepth-crd.patch"
    assert kept.read_text() == open(right).read()
    with open(registry / "known_issues.toml", "rb") as handle:
        written = tomllib.load(handle)["issue"][0]
    assert written["fix"] == "fixes/onnx-spacetodepth-crd.patch"
    assert "the reproducer stops reproducing (confirmed)" in written["fix_verified"]
    text = upstream.report(dataclasses.replace(entry, fix=written["fix"],
                                               fix_verified=written["fix_verified"]))
    assert "### A fix" in text and "[0, 1, 3, 5, 2, 4]" in text and "Verified: `try" in text
    assert isinstance(entry, KnownIssue)


def test_recorded_passes_narrow_a_changed_pass_to_the_paths_that_run_it():
    from harness.premerge import exercised
    rows = [{"case": "conv-reshape-concat", "path": "extract", "passes": ["FuseOps"]},
            {"case": "conv-reshape-concat", "path": "compile", "passes": ["LegalizeOps"]}]
    found = exercised.gather(rows, {}, {"conv-reshape-concat": "onnx"})
    item = touched.Touched(PASS_FILE, touched.Area.PASS, passes=frozenset({"FuseOps"}))
    selection = targets.select([item], found, {})
    assert set(selection.cases) == {"extract"} and "FuseOps" in selection.passes
    unknown = targets.select([touched.Touched(PASS_FILE, touched.Area.PASS,
                                              passes=frozenset({"Other"}))], found, {})
    assert not unknown.cases and any("its sweep rows alone" in note for note in unknown.notes)

"""The watch loop (`watch --source`): nights compared, news checked again, hunts that name
the seeded commits with no one choosing a range or a signature, budgets that resume,
a build failure found, the page.

A real git history stands in for apache/tvm (tests/seeded_history.py makes the seeded
branch) and a toy bench for the build and the checks: it reads the seeded markers back
from the checked-out tree, as a real build would run the seeded code. The loop itself
(nights, news, recheck, hunts, journals, the page) is the real one. The same branch on
a real TVM commit is the nightly test at the bottom.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
import seeded_history
from helpers import ROOT

from harness.cli import watch
from harness.versions import bisect, nights

MUTATION = "mutated:extract-tasks:SeededAnnotate"
CONVERTER = "error:import:-:ValueError: Concat axis must be given"
ROW = "report extract conv-reshape-concat nchw llvm"


def _tree(repo, relative):
    path = repo / relative
    return path.read_text() if path.exists() else ""


class ToyBench:
    """Builds nothing unless src/ says so; a check shows what the seeded files hold."""

    def __init__(self, repo, flaky_once=False, reproducers=None):
        self.repo, self.flaky_once, self.checks = repo, flaky_once, 0
        self.builds: list[str] = []
        # {entry: the marker file whose presence makes its reproducer reproduce}
        self.reproducers = reproducers or {}

    def _signatures(self) -> list[str]:
        found = []
        if "SeededAnnotate" in _tree(self.repo, "python/tvm/relax/pipeline.py"):
            found.append(MUTATION)
        if "raise ValueError" in _tree(self.repo, "python/tvm/relax/frontend/onnx.py"):
            found.append(CONVERTER)
        return found

    def _compiles(self) -> bool:
        return "syntax error" not in _tree(self.repo, "src/core.cc")

    def build(self, commit):
        seeded_history.git(self.repo, "checkout", "-q", "--detach", commit)
        self.builds.append(commit)
        ok = self._compiles()
        return {"ok": ok, "seconds": 1.0, "reused": False, "folder": "build",
                "tail": "" if ok else "src/core.cc:1: error: expected ';'"}

    def runner(self, commit, folder):
        seeded_history.git(self.repo, "checkout", "-q", "--detach", commit)
        return commit

    def _reproduces(self, marker):
        return (self.repo / marker).exists()

    def run_item(self, item, runner, out, folder):
        if item.name == "reproducers":
            return {f"reproducer {entry}": {
                "signatures": [nights.REPRODUCES] if self._reproduces(marker) else [],
                "recheck": {"script": marker}} for entry, marker in self.reproducers.items()}, ""
        if not item.name.startswith("report-"):
            return {}, ""
        rows = {ROW: {"signatures": self._signatures(),
                      "recheck": {"case": "conv-reshape-concat", "args": []}}}
        if self.flaky_once:   # a row that shows a failure once, and not when checked again
            self.flaky_once = False
            rows["report extract flaky-case nchw llvm"] = {
                "signatures": ["timeout:extract-tasks:-"], "recheck": {"case": "flaky-case"}}
        else:
            rows["report extract flaky-case nchw llvm"] = {
                "signatures": [], "recheck": {"case": "flaky-case"}}
        return rows, ""

    def shows(self, recheck, signature, runner):
        self.checks += 1
        if "script" in recheck:
            return self._reproduces(recheck["script"])
        return signature in self._signatures()

    def stored(self, commit):
        return False

    def probe_for(self, hunt):
        def probe(commit):
            self.checks += 1
            seeded_history.git(self.repo, "checkout", "-q", "--detach", commit)
            if hunt.change == nights.BROKE:
                code = 0 if self._compiles() else 1
                return bisect.Step(commit, code, 1.0, True, "build", [], {"seconds": 60.0})
            if "script" in hunt.recheck:
                code = 1 if self._reproduces(hunt.recheck["script"]) else 0
                return bisect.Step(commit, code, 1.0, False, "script", [], {"reused": True})
            shown = self._signatures()
            return bisect.Step(commit, 1 if shown else 0, 1.0, False,
                               "; ".join(shown) or "pass", shown, {"reused": True})
        return probe


@pytest.fixture
def branch(tmp_path):
    """A toy apache/tvm with a seeded branch on top of its base commit."""
    repo = tmp_path / "tvm"
    (repo / "python" / "tvm" / "relax" / "frontend").mkdir(parents=True)
    (repo / "src").mkdir()
    seeded_history.git(repo, "init", "-q", "-b", "main")
    (repo / "python" / "tvm" / "relax" / "pipeline.py").write_text("passes = [LegalizeOps]\n")
    (repo / "python" / "tvm" / "relax" / "frontend" / "onnx.py").write_text(
        "def concat(axis):\n    return axis\n")
    (repo / "src" / "core.cc").write_text("int core;\n")
    (repo / "docs.md").write_text("docs\n")
    base = seeded_history.commit(repo, "base", {})
    made = seeded_history.seed(
        repo, "docs.md",
        mutation={"python/tvm/relax/pipeline.py": seeded_history.replace(
            "passes = [LegalizeOps]", "passes = [LegalizeOps, SeededAnnotate]")},
        converter={"python/tvm/relax/frontend/onnx.py": seeded_history.replace(
            "    return axis", "    raise ValueError('Concat axis must be given')")},
        fix={"python/tvm/relax/pipeline.py": seeded_history.replace(
            ", SeededAnnotate", "")})
    return repo, {"base": base, **made}


def _args(tmp_path, **overrides):
    values = dict(state=str(tmp_path / "state"), budget=60.0, no_hunt=False,
                  report=["conv-reshape-concat"], paths=["extract"], no_reproducers=True,
                  fuzz_examples=0, fuzz_seed=1, suite=[], page=None, store=None,
                  keep_builds=None, record=False, ref="main")
    return argparse.Namespace(**{**values, **overrides})


def _night(repo, tmp_path, bench, commit, **overrides):
    return watch.watch(_args(tmp_path, **overrides), str(repo), commit, bench)


def test_night_two_names_each_seeded_commit_and_night_three_the_fix(branch, tmp_path):
    repo, made = branch
    bench = ToyBench(repo)
    assert _night(repo, tmp_path, bench, made["base"]) == 0       # the first night: no news
    assert _night(repo, tmp_path, bench, made["ordinary-3"]) == 1
    state = nights.WatchState(str(tmp_path / "state"))
    culprits = {hunt.signature: hunt for hunt in state.hunts.values()}
    assert set(culprits) == {MUTATION, CONVERTER}
    assert culprits[MUTATION].state == "found"
    assert culprits[MUTATION].culprit == made["mutation"]
    assert culprits[MUTATION].parent == made["ordinary-1"]
    assert culprits[MUTATION].pr == "90002"
    assert culprits[CONVERTER].culprit == made["converter"]
    assert "Since apache/tvm" in culprits[CONVERTER].report
    # suspects first: the pass's name is in the culprit's diff, so its hunt takes the
    # parent and the commit, not a binary search over the range
    assert culprits[MUTATION].steps == 2

    assert _night(repo, tmp_path, bench, made["fix"]) == 0   # a fix is good news: exit 0
    state = nights.WatchState(str(tmp_path / "state"))
    fixed = [hunt for hunt in state.hunts.values() if hunt.fixed]
    assert [hunt.culprit for hunt in fixed] == [made["fix"]]
    assert fixed[0].state == "found" and "Fixed by" in fixed[0].report
    page = (tmp_path / "state" / "watch.html").read_text()
    for role in ("mutation", "converter", "fix"):
        assert made[role][:10] in page
    assert "#90002" in page


def test_a_change_that_does_not_repeat_is_flaky_and_never_hunted(branch, tmp_path):
    repo, made = branch
    bench = ToyBench(repo)
    _night(repo, tmp_path, bench, made["base"])
    bench.flaky_once = True
    _night(repo, tmp_path, bench, made["ordinary-1"])   # before any seeded regression
    night = nights.WatchState(str(tmp_path / "state")).nights[-1]
    assert [(news.signature, news.state) for news in night.news] == [
        ("timeout:extract-tasks:-", nights.FLAKY)]
    assert not nights.WatchState(str(tmp_path / "state")).hunts


def test_a_hunt_out_of_budget_says_how_far_it_got_and_resumes(branch, tmp_path):
    repo, made = branch
    bench = ToyBench(repo)
    _night(repo, tmp_path, bench, made["base"])
    # a budget for nothing: the first hunt takes one step (a run always gets further), the
    # other does not start
    _night(repo, tmp_path, bench, made["ordinary-3"], budget=1e-9)
    state = nights.WatchState(str(tmp_path / "state"))
    assert {hunt.state for hunt in state.hunts.values()} == {"pending"}
    progress = sorted(hunt.progress for hunt in state.hunts.values())
    assert progress[0].startswith("1 check so far; the culprit is one of the")
    assert progress[1].startswith("not started")
    assert "pending" in (tmp_path / "state" / "watch.html").read_text()
    # the next run: the same commit, nothing new on the branch; the hunts go on
    assert _night(repo, tmp_path, bench, made["ordinary-3"]) == 1
    state = nights.WatchState(str(tmp_path / "state"))
    assert {hunt.culprit for hunt in state.hunts.values()} == {made["mutation"],
                                                               made["converter"]}
    assert len(state.nights) == 2


def test_a_build_that_stops_compiling_is_news_with_its_log_and_its_commit(branch, tmp_path):
    repo, made = branch
    bench = ToyBench(repo)
    _night(repo, tmp_path, bench, made["fix"])
    seeded_history.git(repo, "checkout", "-q", "main")
    breaking = seeded_history.commit(repo, "[Arith] Refactor (#90007)",
                                     {"src/core.cc": lambda old: "syntax error\n"})
    tip = seeded_history.commit(repo, "[Docs] After (#90008)", {"docs.md": lambda old: "x\n"})
    assert _night(repo, tmp_path, bench, tip) == 1
    state = nights.WatchState(str(tmp_path / "state"))
    assert not state.nights[-1].build["ok"]
    assert "expected ';'" in state.nights[-1].build["tail"]
    [hunt] = state.hunts.values()
    assert (hunt.change, hunt.culprit, hunt.state) == (nights.BROKE, breaking, "found")
    assert "does not build" in hunt.report
    assert "expected &#x27;;&#x27;" in (tmp_path / "state" / "watch.html").read_text()
    # still broken the next night: no news again (its hunt is the first night's); once it
    # builds again, rows are compared with the last night that built, not the broken one
    later = seeded_history.commit(repo, "[Docs] Later (#90009)", {"docs.md": lambda old: "y\n"})
    assert _night(repo, tmp_path, bench, later) == 1   # broken still: exit 1, no new hunt
    assert nights.WatchState(str(tmp_path / "state")).nights[-1].news == []
    repaired = seeded_history.commit(repo, "[Arith] Repair (#90010)",
                                     {"src/core.cc": lambda old: "int core;\n"})
    assert _night(repo, tmp_path, bench, repaired) == 0
    state = nights.WatchState(str(tmp_path / "state"))
    assert state.nights[-1].previous == made["fix"] and state.nights[-1].news == []


def test_an_interrupted_night_resumes_without_building_again(branch, tmp_path):
    repo, made = branch

    class Interrupted(ToyBench):
        def run_item(self, item, runner, out, folder):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _night(repo, tmp_path, Interrupted(repo), made["base"])
    bench = ToyBench(repo)
    assert _night(repo, tmp_path, bench, made["base"]) == 0
    assert bench.builds == []      # the build was recorded before the interruption
    state = nights.WatchState(str(tmp_path / "state"))
    assert len(state.nights) == 1 and state.nights[0].finished


def test_two_reproducers_that_flip_one_night_are_two_hunts(branch, tmp_path):
    """Judged by exit code, two reproducers' changes share the signature `reproduces`: each
    is still its own question, with its own culprit."""
    repo, made = branch
    bench = ToyBench(repo, reproducers={"entry-a": "a.flag", "entry-b": "b.flag"})
    _night(repo, tmp_path, bench, made["fix"], no_reproducers=False)
    seeded_history.git(repo, "checkout", "-q", "main")
    first = seeded_history.commit(repo, "[TIR] A (#90011)", {"a.flag": lambda old: "1\n"})
    seeded_history.commit(repo, "[Docs] B (#90012)", {"docs.md": lambda old: "z\n"})
    second = seeded_history.commit(repo, "[TIR] C (#90013)", {"b.flag": lambda old: "1\n"})
    assert _night(repo, tmp_path, bench, second, no_reproducers=False) == 1
    hunts = nights.WatchState(str(tmp_path / "state")).hunts.values()
    assert sorted((hunt.row, hunt.culprit) for hunt in hunts) == [
        ("reproducer entry-a", first), ("reproducer entry-b", second)]


def test_a_row_lost_one_night_is_compared_with_the_night_before(branch, tmp_path):
    """A night whose command failed (the harness's failure) has no row: the next night
    compares that row with the last night that had it, and hunts from there."""
    repo, made = branch

    class Lossy(ToyBench):
        def run_item(self, item, runner, out, folder):
            return {}, "report-extract exited 4: a harness bug"

    _night(repo, tmp_path, ToyBench(repo), made["base"])
    assert _night(repo, tmp_path, Lossy(repo), made["ordinary-1"]) == 4
    assert _night(repo, tmp_path, ToyBench(repo), made["ordinary-3"]) == 1
    state = nights.WatchState(str(tmp_path / "state"))
    assert {news.since for news in state.nights[-1].news} == {made["base"]}
    assert {hunt.culprit for hunt in state.hunts.values()} == {made["mutation"],
                                                               made["converter"]}


def test_a_branch_moved_back_is_news_but_no_hunt(branch, tmp_path):
    repo, made = branch
    bench = ToyBench(repo)
    _night(repo, tmp_path, bench, made["ordinary-3"])
    assert _night(repo, tmp_path, bench, made["fix"]) == 0
    assert _night(repo, tmp_path, bench, made["ordinary-1"]) == 0   # force-pushed back
    night = nights.WatchState(str(tmp_path / "state")).nights[-1]
    assert night.news and all("not hunted" in news.note for news in night.news)


def test_watch_refuses_what_is_not_a_tvm_checkout(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "harness", "watch", "--source", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "not a git checkout of apache/tvm" in proc.stderr.strip().splitlines()[-1]


def test_a_stored_build_serves_every_commit_with_its_compiled_inputs(tmp_path):
    """The build store keys libraries by compiled inputs: a Python-only commit is checked
    on its parent's stored build, with no cmake, ninja or LLVM on the machine."""
    from harness.versions import build_store, commit_bisect
    repo = tmp_path / "tvm"
    for sub in ("3rdparty/tvm-ffi/3rdparty/dlpack", "3rdparty/tvm-ffi/3rdparty/libbacktrace"):
        (repo / sub).mkdir(parents=True)
        (repo / sub / "README").write_text("vendored\n")
    (repo / "src").mkdir()
    (repo / "src" / "core.cc").write_text("int core;\n")
    seeded_history.git(repo, "init", "-q")
    built = seeded_history.commit(repo, "built", {})
    python_only = seeded_history.commit(repo, "python only", {"python/tvm/x.py": lambda _: "x\n"})
    compiled = seeded_history.commit(repo, "c++", {"src/core.cc": lambda _: "int other;\n"})
    build_dir = tmp_path / "build" / "lib"
    build_dir.mkdir(parents=True)
    (build_dir / "libtvm_compiler.so").write_bytes(b"\x7fELF" + b"0" * 1000)
    (build_dir / "libtvm_compiler.so.o").write_text("not a library")
    store = str(tmp_path / "store")
    key = commit_bisect.compiled_key(str(repo), built)
    folder = build_store.keep(store, key, str(tmp_path / "build"), built, "built")
    assert sorted(os.listdir(os.path.join(folder, "lib"))) == ["libtvm_compiler.so"]
    assert commit_bisect.compiled_key(str(repo), python_only) == key
    assert commit_bisect.compiled_key(str(repo), compiled) != key
    probe = commit_bisect.CommitProbe(str(repo), str(tmp_path / "elsewhere"), "case", [], 1,
                                      False, (), 60.0, lambda text: None, store=store)
    seeded_history.git(repo, "checkout", "-q", "--detach", python_only)
    stats, failure, lib_folder = probe.build(python_only)
    assert (stats.reused, failure, lib_folder) == (True, "", folder)
    [entry] = build_store.entries(store)
    assert entry["bytes"] > 1000 and list(entry["commits"]) == [built]
    assert build_store.prune(store, 1) == [] and build_store.entries(store)


def test_the_nightly_main_column_is_one_watch_command_that_parses():
    """The workflow stays thin: its `main` job runs `python -m harness watch`, which a person
    runs locally the same way, and the options it gives are the command's own."""
    import shlex

    import yaml

    from harness.cli.main import build_parser
    with open(os.path.join(ROOT, ".github", "workflows", "nightly.yml")) as handle:
        job = yaml.safe_load(handle)["jobs"]["main"]
    [command] = [step["run"] for step in job["steps"] if "harness watch" in step.get("run", "")]
    argv = shlex.split(command.replace("${{ github.run_number }}", "7"))
    assert argv[:3] == ["python", "-m", "harness"]
    args = build_parser().parse_args(argv[3:])
    watch._check_options(args)
    assert args.ref == "origin/main" and args.store and args.state and args.suite


# ---- the same loop on a real TVM build (nightly; HARNESS_TVM_SOURCE) ------------------

REAL_MUTATION = {"python/tvm/relax/pipeline.py": lambda text: seeded_history.replace(
    "def zero_pipeline(*, enable_warning: bool = False):",
    '@tvm.transform.module_pass(opt_level=0, name="AnnotateSeeded")\n'
    "def _annotate_seeded(mod, _ctx):\n"
    "    for g_var, func in list(mod.functions.items()):\n"
    "        if isinstance(func, tvm.relax.Function):\n"
    '            mod[g_var] = func.with_attr("seeded", 1)   # writes into its input\n'
    "    return mod\n\n\n"
    "def zero_pipeline(*, enable_warning: bool = False):")(
    seeded_history.replace("            [\n                transform.LegalizeOps(",
                           "            [\n                _annotate_seeded,\n"
                           "                transform.LegalizeOps(")(text))}
REAL_CONVERTER = {"python/tvm/relax/frontend/onnx/onnx_frontend.py": seeded_history.replace(
    '    def _impl_v13(cls, bb, inputs, attr, params):\n        axis = attr.get("axis", 0)\n'
    "        _, param_dict = params\n",
    '    def _impl_v13(cls, bb, inputs, attr, params):\n        axis = attr.get("axis", 0)\n'
    "        if axis == 1:\n"
    '            raise ValueError(f"Concat along axis {axis} needs inputs of one rank")\n'
    "        _, param_dict = params\n")}
REAL_FIX = {"python/tvm/relax/pipeline.py": seeded_history.replace(
    "                _annotate_seeded,\n", "")}


@pytest.mark.nightly
@pytest.mark.skipif(not os.environ.get("HARNESS_TVM_SOURCE"),
                    reason="set HARNESS_TVM_SOURCE to a clean apache/tvm checkout (built or "
                           "not: the first build takes 50-95 min on 2 cores)")
def test_watch_names_the_seeded_commits_on_a_real_tvm(tmp_path):
    """The seeded branch on top of the checkout's HEAD (Python-only: one build serves every
    commit), three nights: the culprits are named with no range or signature given, the
    fix by the fixed search. Two cases: the seeded converter stops conv-reshape-concat at
    its import, before the mutating pass runs, so conv-float16 (no Concat) is the
    row that shows the mutation. The checkout is put back on its commit afterwards."""
    source = os.environ["HARNESS_TVM_SOURCE"]
    head = seeded_history.git(source, "rev-parse", "HEAD")
    from pathlib import Path
    try:
        seeded_history.git(source, "checkout", "-q", "--detach", head)
        made = seeded_history.seed(Path(source), "README.md", REAL_MUTATION, REAL_CONVERTER,
                                   REAL_FIX)
        state = tmp_path / "state"

        def night(ref):
            proc = subprocess.run(
                [sys.executable, "-m", "harness", "watch", "--source", source, "--ref", ref,
                 "--state", str(state), "--report", "conv-reshape-concat", "--report",
                 "conv-float16", "--paths", "extract", "--no-reproducers"],
                capture_output=True, text=True, cwd=ROOT,
                env=dict(os.environ, PYTHONPATH=ROOT), timeout=4 * 3600)
            return proc.returncode, proc.stdout + proc.stderr[-3000:]

        assert night(head)[0] == 0
        code, said = night(made["ordinary-3"])
        assert code == 1, said
        hunts = [hunt for hunt in nights.WatchState(str(state)).hunts.values()
                 if hunt.change == nights.NEW]
        assert {hunt.culprit for hunt in hunts if hunt.state == "found"} == {
            made["mutation"], made["converter"]}, said
        # the fix: the seeded pass's mutation is gone, found by the fixed search (the
        # registered tirx.AnnotateEntryFunc mutation, which the seeded one masked on
        # conv-float16, shows again: news of its own, exit 1)
        code, said = night(made["fix"])
        fixed = [hunt for hunt in nights.WatchState(str(state)).hunts.values()
                 if hunt.fixed and "AnnotateSeeded" in hunt.signature]
        assert [(hunt.culprit, hunt.state) for hunt in fixed] == [(made["fix"], "found")], said
    finally:
        seeded_history.git(source, "checkout", "-q", "--detach", head)

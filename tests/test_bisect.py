"""The bisect drivers, on stand-ins for TVM: toy wheels and a tiny git repository.

Only here does a toy stand in for TVM: the subject is the driver (version listing,
cached environments, binary search, resume, skip handling), not TVM.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile

import pytest
from helpers import ROOT, cli_here

from harness.versions import bisect as bisect_mod
from harness.versions import envs as envs_mod

TOY = "harness-toy-tvm"
VERSIONS = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"]
CULPRIT = "1.4"          # the seeded violation starts here
UNTESTABLE = "1.5"       # exits 125: the driver must step around it
STEP = ("{python} -c \"import sys, harness_toy_tvm as t; sys.exit(t.check())\"")


def _wheel(folder, version):
    """A minimal, valid pure-Python wheel of the toy package."""
    code = 125 if version == UNTESTABLE else (1 if version >= CULPRIT else 0)
    files = {
        "harness_toy_tvm/__init__.py": f"def check():\n    return {code}\n",
        f"harness_toy_tvm-{version}.dist-info/METADATA":
            f"Metadata-Version: 2.1\nName: {TOY}\nVersion: {version}\n",
        f"harness_toy_tvm-{version}.dist-info/WHEEL":
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = f"harness_toy_tvm-{version}.dist-info/RECORD"
    lines = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        lines.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    files[record] = "\n".join(lines + [f"{record},,"]) + "\n"
    with zipfile.ZipFile(folder / f"harness_toy_tvm-{version}-py3-none-any.whl", "w") as whl:
        for name, text in files.items():
            whl.writestr(name, text)


@pytest.fixture
def toy_index(tmp_path, monkeypatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in VERSIONS:
        _wheel(wheels, version)
    env = dict(os.environ, PIP_FIND_LINKS=str(wheels), HARNESS_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=ROOT)
    return env


def _bisect(env, *extra):
    argv = [sys.executable, "-m", "harness", "bisect", "toy", "--package", TOY,
            "--good", VERSIONS[0], "--bad", VERSIONS[-1], "--step-command", STEP, "--bare-env",
            *extra]
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)


@pytest.mark.needs_env
@pytest.mark.nightly   # ~50 s of pip building toy environments; the search logic is tested below
def test_release_bisect_names_the_culprit_and_resumes(toy_index):
    first = _bisect(toy_index)
    assert first.returncode == 0, first.stderr
    assert f"first bad: {TOY}=={CULPRIT}" in first.stdout
    state_dir = os.path.join(toy_index["HARNESS_CACHE"], "bisect")
    (state_file,) = os.listdir(state_dir)
    with open(os.path.join(state_dir, state_file)) as handle:
        steps = json.load(handle)["steps"]
    assert steps[UNTESTABLE]["code"] == 125
    decided = set(steps)
    # As if interrupted before the culprit was decided: resume probes only that step.
    del steps[CULPRIT]
    with open(os.path.join(state_dir, state_file), "w") as handle:
        json.dump({"steps": steps}, handle)
    resumed = _bisect(toy_index)
    assert f"first bad: {TOY}=={CULPRIT}" in resumed.stdout, resumed.stderr
    assert f"{len(decided) - 1} steps already decided" in resumed.stderr
    assert "building environment" not in resumed.stderr   # cached environments reused
    with open(os.path.join(state_dir, state_file)) as handle:
        assert set(json.load(handle)["steps"]) == decided


def test_search_steps_around_skips(tmp_path):
    outcome = {"1": "good", "2": "skip", "3": "good", "4": "bad", "5": "bad"}
    assert bisect_mod.search(list(outcome), outcome.get) == ("4", [])
    outcome = {"1": "good", "2": "skip", "3": "bad"}
    assert bisect_mod.search(list(outcome), outcome.get) == ("3", ["2"])


# What each release showed, as `check --json` reports it: the README's story, where
# 0.1.15.post1 broke save_json while AnnotateEntryFunc's registered mutation shows on all.
ANNOTATE = "mutated:zero-pipeline:tirx.AnnotateEntryFunc"
SEGFAULT = "crash:import/checks:-:SIGSEGV"
SHOWED = {"0.1.14.post0": [ANNOTATE], "0.1.14.post1": [ANNOTATE],
          "0.1.15.post0": [ANNOTATE], "0.1.15.post1": [SEGFAULT], "0.1.15.post2": [SEGFAULT]}


def _step(version, signatures):
    return bisect_mod.Step(version, 1 if signatures else 0, 1.0, False, "", signatures)


def test_the_bisect_follows_the_failure_in_front_of_you_not_every_known_bug():
    """The seeded fault: a registered mutation on every release. Counting any violation as
    bad makes the good end bad (the ends are not as claimed); the default, the failure
    the bad end shows and the good end does not, names the release that broke save_json."""
    steps = {version: _step(version, shown) for version, shown in SHOWED.items()}
    releases = list(SHOWED)
    by_exit_code = bisect_mod.Judge()
    assert by_exit_code(steps[releases[0]]) == bisect_mod.BAD     # derailed
    pattern = bisect_mod.the_new_failure(steps[releases[0]], steps[releases[-1]])
    assert str(pattern) == SEGFAULT
    judge = bisect_mod.Judge(pattern)
    assert bisect_mod.search(releases, lambda v: judge(steps[v])) == ("0.1.15.post1", [])
    # --match names it explicitly, globs allowed
    judge = bisect_mod.Judge(bisect_mod.Pattern.parse("crash:*"))
    assert bisect_mod.search(releases, lambda v: judge(steps[v]))[0] == "0.1.15.post1"


def test_ends_that_show_the_same_failures_have_no_failure_to_bisect():
    assert bisect_mod.the_new_failure(_step("1", [ANNOTATE]), _step("2", [ANNOTATE])) is None
    # the most severe new failure is chosen
    both = _step("2", [ANNOTATE, "error:extract-tasks:-:ValueError: x", SEGFAULT])
    assert str(bisect_mod.the_new_failure(_step("1", []), both)) == SEGFAULT


def test_the_table_says_what_each_step_showed(tmp_path):
    state = bisect_mod.State(str(tmp_path / "s.json"))
    for version, shown in SHOWED.items():
        state.record(_step(version, shown))
    lines = bisect_mod.table(list(SHOWED), state, bisect_mod.Judge(
        bisect_mod.Pattern.parse(SEGFAULT)))
    assert lines[0].split()[:2] == ["0.1.14.post0", "good"] and ANNOTATE in lines[0]
    assert lines[-1].split()[:2] == ["0.1.15.post2", "bad"] and f"* {SEGFAULT}" in lines[-1]


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_git_bisect_run_with_bisect_step_finds_the_seeded_commit(tmp_path):
    repo = tmp_path / "toytvm"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    shas = {}
    for index in range(1, 7):
        (repo / "build.sh").write_text("exit 1\n" if index == 2 else "exit 0\n")
        verdict = 1 if index >= 4 else 0
        (repo / "check.py").write_text(f"import sys\nsys.exit({verdict})  # c{index}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"c{index}")
        shas[index] = _git(repo, "rev-parse", "HEAD")
    _git(repo, "bisect", "start", shas[6], shas[1])
    step = [sys.executable, "-m", "harness", "bisect-step", "--tvm-source", str(repo),
            "--build-command", "sh build.sh", "--check-command", f"{sys.executable} check.py"]
    proc = subprocess.run(["git", "-C", str(repo), "bisect", "run", *step], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    assert f"{shas[4]} is the first bad commit" in proc.stdout, proc.stdout + proc.stderr


def test_a_broken_step_is_never_stored_so_a_rerun_probes_it_again(tmp_path):
    codes = {"1": 0, "2": 0, "3": -1, "4": 1, "5": 1}     # -1: the index was unreachable
    probes = []

    def probe(version):
        probes.append(version)
        return bisect_mod.Step(version, codes[version], 1.0, False, "index unreachable")

    def decide(state):
        return lambda version: bisect_mod.Judge()(
            bisect_mod.observe(version, probe, state, lambda text: None))

    state = bisect_mod.State(str(tmp_path / "s.json"))
    for end in ("1", "5"):
        decide(state)(end)
    with pytest.raises(bisect_mod.StepBroken):
        bisect_mod.search(list(codes), decide(state))
    assert "3" not in bisect_mod.State(state.path).steps       # nothing stored for it
    codes["3"] = 1                                               # the user fixed the cause
    probes.clear()
    state = bisect_mod.State(state.path)
    assert bisect_mod.search(list(codes), decide(state))[0] == "3"
    assert probes[0] == "3" and not {"1", "5"} & set(probes)   # re-probed; the ends reused


def test_an_unreachable_index_is_a_broken_step_not_an_untestable_release(monkeypatch):
    from harness.versions import envs

    def unreachable(*args, **kwargs):
        raise envs.TransientFailure("cannot reach the package index: NewConnectionError")
    monkeypatch.setattr(envs, "ensure", unreachable)
    monkeypatch.setattr(envs, "lookup", lambda packages, extra=(): None)
    probe = bisect_mod.make_probe("apache-tvm", {}, ["true"], 10, (), lambda text: None)
    assert bisect_mod.Judge()(probe("0.26.0")) == bisect_mod.BROKEN


def test_pip_output_is_told_apart_transient_or_not():
    from harness.versions import envs
    assert envs._TRANSIENT.search("WARNING: Retrying ... NewConnectionError(...)")
    assert not envs._TRANSIENT.search("ERROR: No matching distribution found for x==9")


@pytest.mark.needs_env
@pytest.mark.nightly   # pip builds the toy environment (~7 s)
def test_two_processes_building_one_environment_at_once_share_it(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "1.0")
    env = dict(os.environ, PIP_FIND_LINKS=str(wheels), HARNESS_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=ROOT, PIP_NO_INDEX="1")
    code = ("import sys; from harness.versions import envs; "
            f"print(envs.ensure({{'{TOY}': '1.0'}}, log=lambda t: print(t), extra=()))")
    both = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env=env) for _ in range(2)]
    outputs = [proc.communicate(timeout=300)[0] for proc in both]
    assert [proc.returncode for proc in both] == [0, 0]
    paths = {out.strip().splitlines()[-1] for out in outputs}
    assert len(paths) == 1
    assert sum("building environment" in out for out in outputs) == 1   # built once
    (path,) = paths
    assert os.path.exists(os.path.join(path, envs_mod.READY))
    leftovers = [n for n in os.listdir(os.path.dirname(path)) if ".building-" in n]
    assert leftovers == []


def test_each_release_is_paired_with_the_tvm_ffi_it_needs_unless_told(monkeypatch):
    """A plain `bisect --good 0.25.0 --bad 0.27.0.post1` built every release with the newest
    tvm-ffi: 0.25.0 could not load its library and 0.27.0.post1 crashed at import. Each
    release now gets its extra's pin (setup.cfg); --with still wins."""
    from harness.versions import envs
    assert envs.companion_pins("apache-tvm", "0.25.0") == {"apache-tvm-ffi": "0.1.12"}
    assert envs.companion_pins("apache-tvm", "0.27.0") == {"apache-tvm-ffi": "0.1.14.post1"}
    assert envs.companion_pins("apache-tvm", "0.19.0") == {}
    assert envs.companion_pins("apache-tvm-ffi", "0.1.12") == {}
    asked = []

    def ensure(packages, log=None, extra=()):
        asked.append(dict(packages))
        raise envs.BadInput("stop here")
    monkeypatch.setattr(envs, "ensure", ensure)
    monkeypatch.setattr(envs, "lookup", lambda packages, extra=(): None)
    bisect_mod.make_probe("apache-tvm", {}, ["true"], 10, (), lambda text: None)("0.25.0")
    bisect_mod.make_probe("apache-tvm", {"apache-tvm-ffi": "0.1.13"}, ["true"], 10, (),
                          lambda text: None)("0.25.0")
    assert asked == [{"apache-tvm": "0.25.0", "apache-tvm-ffi": "0.1.12"},
                     {"apache-tvm": "0.25.0", "apache-tvm-ffi": "0.1.13"}]


# `bisect node-convtranspose_dilations --path compile --fixed`, over toy releases: what each
# one's `check --json` says (its violations, and the stages and passes its run reached).
# 1.0-1.1 stop in CodeGenVM before the TIR passes run (the failure asked about); 1.2 stops
# earlier in the same stage (LegalizeOps); from 1.3 it compiles, showing the registered
# AnnotateEntryFunc mutation the old releases cannot show.
CODEGEN = "error:compile:-:InternalError: CodeGenVM cannot handle this intrinsic now"
LEGALIZE = "error:compile:relax.LegalizeOps:ValueError: not enough values to unpack"
ENTRY = "mutated:compile:tirx.AnnotateEntryFunc"
RELAX = ["relax.LegalizeOps", "relax.FuseOps", "relax.VMShapeLower"]
COMPILED = RELAX + ["tirx.AnnotateEntryFunc", "tirx.LowerTVMBuiltin"]
FIX_STORY = {"1.0": ([CODEGEN], RELAX), "1.1": ([CODEGEN], RELAX),
             "1.2": ([LEGALIZE], RELAX[:1]), "1.3": ([ENTRY], COMPILED),
             "1.4": ([ENTRY], COMPILED)}


@pytest.fixture
def toy_releases(tmp_path, monkeypatch):
    """The release bisect with FIX_STORY's releases: each environment's "python" prints its
    release's check JSON (no pip, no TVM)."""
    from harness.versions import envs
    for version, (shown, passes) in FIX_STORY.items():
        folder = tmp_path / "envs" / version
        folder.mkdir(parents=True)
        (folder / "check.json").write_text(json.dumps({
            "verdict": shown[0].split(":")[0], "violations": [{"signature": s} for s in shown],
            "stages": [{"name": "import"}, {"name": "compile"}],
            "passes": [{"stage": "compile", "name": name} for name in passes]}))
        (folder / "python").write_text('#!/bin/sh\ncat "$(dirname "$0")/check.json"\nexit 1\n')
        (folder / "python").chmod(0o755)
    monkeypatch.setattr(bisect_mod, "state_path", lambda *args: str(tmp_path / "state.json"))
    monkeypatch.setattr(bisect_mod, "list_versions", lambda package, pre=False: list(FIX_STORY))
    monkeypatch.setattr(envs, "lookup", lambda packages, extra=(): None)
    monkeypatch.setattr(envs, "ensure", lambda packages, log=None, extra=():
                        str(tmp_path / "envs" / packages[TOY]))
    monkeypatch.setattr(envs, "touch", lambda path: None)
    monkeypatch.setattr(envs, "python_of", lambda path: os.path.join(path, "python"))
    return lambda *extra: cli_here("bisect", "node-convtranspose_dilations", "--path", "compile",
                                   "--package", TOY, "--good", "1.0", "--bad", "1.4",
                                   "--bare-env", *extra)


def test_fixed_follows_the_old_ends_failure_and_steps_around_masked_releases(toy_releases):
    """--fixed searches where the old end's failure stops showing, never the mutation only
    the new end shows; 1.2, which stops before CodeGenVM could run, is masked: neither
    still failing nor fixed."""
    code, out, err = toy_releases("--fixed")
    assert code == 0, out + err
    assert f"fixed in: {TOY}==1.3 (no longer showing {CODEGEN})" in out, out
    assert "first bad" not in out and "showing mutated" not in out
    assert f"masked: 1.2 (the run stopped before {CODEGEN} could show)" in out, out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("  1.")] == \
        [["1.0", "old"], ["1.1", "old"], ["1.2", "masked"], ["1.3", "new"], ["1.4", "new"]]


def test_an_end_that_stops_before_the_failure_could_show_is_masked_not_good(toy_releases):
    """Without --fixed the failure is the new end's, the mutation: 1.0 stops in CodeGenVM
    before AnnotateEntryFunc runs, so it cannot say whether it has the mutation."""
    code, out, err = toy_releases()
    assert code == 2 and "first bad" not in out, out + err
    assert "1.0 is masked" in out, out

"""Every reproducer linked from the registry runs standalone and answers for this stack.

Exit 1 where its registry entry says the bug is (this TVM / tvm-ffi within the
entry's ranges), 0 where it is not (fixed, or not yet broken: e.g. the tvm-ffi
0.1.15 crash on the pinned 0.1.14.post1). A reproducer that stops reproducing
where the registry says the bug lives means either upstream fixed it (update
the registry) or the reproducer rotted: both must be looked at.
"""
import os
import subprocess
import sys

import pytest
from helpers import NO_TORCH_DIR, ROOT, cli_here, without_torch
from reproducer_runner import Runner

from harness.catalog import known_issues
from harness.tvmapi import loading
from harness.versions import envs
from harness.versions.releases import release_sets


def _entries_by_reproducer():
    found = {}
    for issue in known_issues.registry():
        if issue.reproducer:
            found.setdefault(issue.reproducer, []).append(issue)
    return found


def _bug_is_here(issues, versions: dict) -> bool:
    return any(issue.on_stack(versions) for issue in issues)


def _answers_as_registered(reproducer, issues, python: str, versions: dict,
                           runner: Runner | None = None) -> None:
    """`runner`: fork it from a parent that imported TVM once (the default run) instead of
    a fresh interpreter (the nightly, on every release)."""
    path = os.path.join(issues[0].base, reproducer)
    env = dict(os.environ)
    with open(path) as handle:
        needs_torch = "import torch" in handle.read()
    if not needs_torch:   # as a user without torch runs it
        env["PYTHONPATH"] = without_torch(NO_TORCH_DIR)
    if runner is not None and not needs_torch:
        code, stdout, stderr = runner.run(path)
        printed = stdout + stderr[-2000:]
    else:
        proc = subprocess.run([python, path], capture_output=True, text=True, timeout=600,
                              cwd=os.path.dirname(path), env=env)
        code, printed = proc.returncode, proc.stdout + proc.stderr[-2000:]
    expected = 1 if _bug_is_here(issues, versions) else 0
    if code == 2 and (python != sys.executable or not expected):
        # it cannot run on that release (its TVMScript is newer; the construct it needs is
        # gone, as SizeVar after 0.25), where the registry does not expect the bug: no answer
        return
    assert code == expected, (
        f"{reproducer}: exit {code}, registry expects {expected} on {versions}\n{printed}")
    assert ("reproduces" if expected else "does not reproduce") in printed


def _imports_torch(reproducer: str, issues) -> bool:
    with open(os.path.join(issues[0].base, reproducer)) as handle:
        return "import torch" in handle.read()


# A reproducer that imports torch starts a fresh interpreter with torch (5-8 s each, 18 s
# for the three): nightly. The default run answers every other one, forked from a parent
# that imported TVM once.
REPRODUCERS = sorted(_entries_by_reproducer().items())


@pytest.mark.parametrize("reproducer, issues", [
    pytest.param(reproducer, issues, id=os.path.basename(reproducer),
                 marks=[pytest.mark.nightly] if _imports_torch(reproducer, issues) else [])
    for reproducer, issues in REPRODUCERS])
def test_reproducer_answers_as_registered(reproducer, issues, reproducer_runner):
    _answers_as_registered(reproducer, issues, sys.executable, loading.versions(),
                           reproducer_runner)


@pytest.mark.nightly
@pytest.mark.needs_env
@pytest.mark.parametrize("release", list(release_sets()))
def test_every_reproducer_answers_as_registered_on_every_release(release):
    """The registry's version ranges, kept honest where it is cheap: each reproducer run in
    a cached environment of every release set the nightly covers."""
    pins = release_sets()[release]
    python = envs.python_of(envs.ensure(pins))
    versions = {"tvm_version": pins["apache-tvm"], "tvm_ffi_version": pins["apache-tvm-ffi"]}
    wrong = []
    for reproducer, issues in REPRODUCERS:
        try:
            _answers_as_registered(reproducer, issues, python, versions)
        except AssertionError as exc:
            wrong.append(str(exc).splitlines()[0])
    assert not wrong, "\n".join(wrong)


def test_checked_in_reproducers_are_what_their_specs_render(tmp_path):
    """A template fix reaches every generated reproducer (`python -m harness reproducers`);
    one edited by hand, or left behind by a template change, fails here."""
    import shutil

    from harness.catalog.cases import CASES_DIR
    from harness.runner import reproducer
    folder = os.path.join(CASES_DIR, "reproducers")
    specs = [name for name in os.listdir(folder) if name.endswith(".json")]
    assert len(specs) >= 6
    assert reproducer.regenerate(folder, check=True) == []
    copy = tmp_path / "reproducers"
    shutil.copytree(folder, copy)
    edited = copy / specs[0].replace(".json", ".py")
    edited.write_text(edited.read_text() + "# edited by hand\n")
    assert reproducer.regenerate(str(copy), check=True) == [str(edited)]
    reproducer.regenerate(str(copy))
    assert reproducer.regenerate(str(copy), check=True) == []


# ---- `reproducers --run`: which registered bugs still reproduce on a build ----------

def _rows(out: str) -> dict[str, list[str]]:
    """The table's rows by entry: [entry, reproducer, exit, seconds, ...]."""
    lines = out.splitlines()
    assert lines[1].split()[:4] == ["entry", "reproducer", "exit", "s"], out
    return {line.split()[0]: line.split() for line in lines[2:] if not line.startswith(" ")}


def test_run_answers_on_the_installed_wheel_as_the_registry_expects(monkeypatch):
    """One reproducer that reproduces here, and one whose entry does not cover this stack
    (tvm-ffi 0.1.15's segfault: the pinned apache-tvm-ffi is 0.1.14.post1). They run as
    where torch is not installed (tvm_ffi imports it in every process that can: 2-3 s)."""
    monkeypatch.setenv("PYTHONPATH", without_torch(NO_TORCH_DIR))
    code, out, err = cli_here("reproducers", "--run", "convert-layout-sum",
                              "tvm-ffi-0.1.15-save-json-segfault")
    assert code == 0, out + err
    rows = _rows(out)
    assert rows["convert-layout-sum"][1:3] == ["convert_layout_sum.py", "1"]
    assert rows["tvm-ffi-0.1.15-save-json-segfault"][2] == "0"
    assert "does not (apache-tvm-ffi 0.1.14.post1 outside >=0.1.15)" in out
    assert all(line.endswith("as expected") for line in out.splitlines()[2:]), out
    assert "2 as the registry expects, 0 differ, 0 skipped" in err


USER_REGISTRY = """
[[issue]]
id = "mine-fixed-here"
case = "mine-model"
verdict = "error"
tvm = ">=0.25.0"
reference = "ours"
reproducer = "reproducers/fixed_here.py"

[[issue]]
id = "mine-only-on-0.25"
case = "mine-model"
verdict = "error"
tvm = "==0.25.0"
reference = "ours"
reproducer = "reproducers/still_there.py"
"""


def test_run_marks_where_the_registry_would_go_stale_and_fails(tmp_path):
    """A user catalog's two entries: one whose bug no longer reproduces where the registry
    says it lives (fixed here), one that reproduces outside its range."""
    (tmp_path / "reproducers").mkdir()
    (tmp_path / "known_issues.toml").write_text(USER_REGISTRY)
    (tmp_path / "reproducers" / "fixed_here.py").write_text(
        'print("does not reproduce: the pass leaves its input alone")\nraise SystemExit(0)\n')
    (tmp_path / "reproducers" / "still_there.py").write_text(
        'print("reproduces: the pass rebinds its input")\nraise SystemExit(1)\n')
    code, out, err = cli_here("reproducers", "--run", "mine-fixed-here", "mine-only-on-0.25",
                              "--cases", tmp_path)
    assert code == 1, out + err
    rows = {line.split()[0]: line for line in out.splitlines()[2:] if not line.startswith(" ")}
    assert "reproduces (inside apache-tvm >=0.25.0)" in rows["mine-fixed-here"]
    assert rows["mine-fixed-here"].endswith("DIFFERS: fixed here? it does not reproduce: the "
                                            "entry goes stale on a release with this fix "
                                            "(record fixed_by, narrow its range)")
    installed = loading.versions()["tvm_version"]
    assert f"does not (apache-tvm {installed} outside ==0.25.0)" in rows["mine-only-on-0.25"]
    assert rows["mine-only-on-0.25"].endswith("DIFFERS: reproduces outside the registered "
                                              "range (widen it)")
    assert "it said: does not reproduce: the pass leaves its input alone" in out
    assert "0 as the registry expects, 2 differ, 0 skipped" in err


def test_a_source_builds_expectation_follows_the_checkouts_history():
    """On a source build an entry is expected where its commits say: not after its fix,
    not before its first bad commit (asked of git; here this repository's own history)."""
    import dataclasses

    from harness.cli import reproducers
    head, parent = subprocess.run(["git", "-C", ROOT, "log", "-2", "--format=%H"],
                                  capture_output=True, text=True, check=True).stdout.split()
    versions = {"tvm_version": "git:" + parent[:12], "tvm_ffi_version": "0.1.14.post1"}
    stack = reproducers.Stack("a source build", sys.executable, None, versions, True, ROOT,
                              parent)
    entry = next(entry for entry in known_issues.registry()
                 if entry.id == "convert-layout-dropout")
    assert reproducers.expectation(entry, stack)[0]   # a source build: inside every range
    fixed_at_head = dataclasses.replace(entry, fixed_by=f"{head} the fix")
    assert reproducers.expectation(fixed_at_head, stack)[0]   # the fix is not in its history
    fixed_before = dataclasses.replace(entry, fixed_by=f"{parent} the fix")
    assert reproducers.expectation(fixed_before, stack) == (
        False, f"fixed by {parent[:10]}, which this commit holds")
    introduced_later = dataclasses.replace(entry, introduced_by=f"{head} the regression")
    assert reproducers.expectation(introduced_later, stack) == (
        False, f"introduced by {head[:10]}, which this commit lacks")
    unknown = dataclasses.replace(entry, fixed_by="0123456789 a commit of another repository")
    assert reproducers.expectation(unknown, stack)[0]


def test_a_torch_reproducer_is_skipped_where_torch_is_missing(tmp_path):
    import dataclasses

    from harness.cli import reproducers
    script = tmp_path / "needs_torch.py"
    script.write_text("import torch\nraise SystemExit(1)\n")
    stack = dataclasses.replace(reproducers.installed_stack(), has_torch=False)
    answer = reproducers.run_one(str(script), stack, 60)
    assert answer.code is None and answer.said.startswith("skipped: needs torch")
    assert reproducers.verdict(answer, True)[0] == "skipped"


def test_run_refuses_a_source_without_a_build_before_any_work(tmp_path):
    """--source against a checkout the other side of a build: one line, exit 2."""
    (tmp_path / "tvm" / "python" / "tvm").mkdir(parents=True)
    (tmp_path / "tvm" / "build" / "lib").mkdir(parents=True)   # a build half way: tvm-ffi's
    (tmp_path / "tvm" / "build" / "lib" / "libtvm_ffi.so").write_bytes(b"")
    for argv, says in (
            (["--source", tmp_path / "missing"], "not a TVM checkout (no python/tvm)"),
            (["--source", tmp_path], "not a TVM checkout (no python/tvm)"),
            (["--source", tmp_path / "tvm"], "no TVM build there (no lib/libtvm.so"),
            (["--source", tmp_path / "tvm", "--build-dir", tmp_path / "nobuild"],
             f"--build-dir {tmp_path / 'nobuild'}: no TVM build there"),
            (["--build-dir", tmp_path], "--build-dir goes with --source"),
            (["nosuch-entry"], "no known-issue entry 'nosuch-entry'"),
            (["onnx-resize-axes-upsample"], "no reproducer registered for")):
        code, out, err = cli_here("reproducers", "--run", *argv)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (argv, err)
        assert says in err, (argv, err)
    code, _, err = cli_here("reproducers", "convert-layout-sum")
    assert code == 2 and "ENTRY_ID is for --run" in err


WORKAROUNDS = [entry for entry in known_issues.registry() if entry.workaround]


@pytest.mark.parametrize("entry", WORKAROUNDS, ids=[entry.id for entry in WORKAROUNDS])
def test_a_registered_workaround_holds_where_the_bug_is(entry, reproducer_runner):
    """An entry's workaround is what `check` tells a user to do: its reproducer run with
    `--workaround` applies it and must exit 0 wherever the entry says the bug is (and 1
    without it: the same run proves the bug is there)."""
    if not entry.on_stack(loading.versions()):
        pytest.skip(f"{entry.id} is not registered for this TVM stack")
    path = os.path.join(entry.base, entry.reproducer)
    assert reproducer_runner.run(path)[0] == 1
    code, stdout, stderr = reproducer_runner.run(path, "--workaround")
    assert code == 0 and "with the workaround" in stdout, stdout + stderr[-1000:]


def test_a_workaround_is_refused_without_a_reproducer_to_verify_it(tmp_path):
    from harness.catalog import issue_entry
    from harness.verdict import BadInput
    registry = tmp_path / "known_issues.toml"
    registry.write_text('[[issue]]\nid = "x"\ncase = "*"\nverdict = "error"\n'
                        'reference = "r"\nworkaround = "do something else"\n')
    with pytest.raises(BadInput, match="verified by its `reproducer`"):
        issue_entry.read(str(registry))

"""bisect-step's own build flow on toy CMake checkouts: what aborts (128), what skips (125).

A toy stands in for apache/tvm here (CI cannot build TVM in its time); the real
build is the nightly test at the bottom, run when HARNESS_TVM_SOURCE points at a
checkout. The toy has TVM's shape where the step looks: a CMake project with
3rdparty/tvm-ffi and its dlpack / libbacktrace present.
"""
import os
import subprocess
import sys

import pytest
from helpers import ROOT

from harness.versions import commit_step, source_build, source_checkout

GOOD_C = "int tvm_answer(void) { return 42; }\n"
BROKEN_C = "int tvm_answer(void) { return 42 }\n"     # a commit that does not compile
CMAKE = ("cmake_minimum_required(VERSION 3.16)\nproject(toytvm C)\n"
         "add_library(toytvm SHARED answer.c)\n")


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def _commit_all(repo, message):
    """A fresh repository holding what is in `repo`, as one commit."""
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


def _fake_llvm_config(folder, version):
    path = folder / "llvm-config-fake"
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def toy(tmp_path):
    repo = tmp_path / "toytvm"
    for sub in ("3rdparty/tvm-ffi/3rdparty/dlpack", "3rdparty/tvm-ffi/3rdparty/libbacktrace"):
        (repo / sub).mkdir(parents=True)
        (repo / sub / "README").write_text("vendored\n")
    (repo / "CMakeLists.txt").write_text(CMAKE)
    (repo / "answer.c").write_text(GOOD_C)
    _commit_all(repo, "good")
    return repo


def _step(repo, tmp_path, *extra, llvm="16.0.6"):
    env = dict(os.environ, PYTHONPATH=ROOT,
               HARNESS_LLVM_CONFIG=_fake_llvm_config(tmp_path, llvm))
    return subprocess.run([sys.executable, "-m", "harness", "bisect-step", "--source", str(repo),
                           "--build-dir", str(tmp_path / "build"), "--no-ccache", *extra],
                          capture_output=True, text=True, env=env, timeout=600)


def _have_build_tools() -> bool:
    try:
        source_build.find_cmake(), source_build.find_ninja()
        return True
    except source_checkout.EnvironmentProblem:
        return False


needs_build_tools = pytest.mark.skipif(not _have_build_tools(),
                                       reason="CMake >= 3.26 and ninja: pip install -e '.[build]'")


@needs_build_tools
def test_a_commit_that_does_not_compile_is_skipped_after_a_good_configure(toy, tmp_path):
    (toy / "answer.c").write_text(BROKEN_C)
    _git(toy, "commit", "-qam", "broken")
    proc = _step(toy, tmp_path, "--build-only")
    assert proc.returncode == 125, proc.stderr
    assert "does not compile: skip it (125)" in proc.stderr
    assert "[configure]" in proc.stderr and "answer.c" in proc.stderr   # the failing file shown


@needs_build_tools
def test_a_first_configure_that_fails_aborts(toy, tmp_path):
    (toy / "CMakeLists.txt").write_text(CMAKE + "message(FATAL_ERROR \"toy cannot configure\")\n")
    _git(toy, "commit", "-qam", "bad cmake")
    proc = _step(toy, tmp_path, "--build-only")
    assert proc.returncode == 128, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("bisect-step: cannot bisect here: cmake cannot configure"), last
    assert "Traceback" not in proc.stderr


def test_an_llvm_older_than_15_aborts_naming_the_package(toy, tmp_path):
    proc = _step(toy, tmp_path, "--build-only", llvm="14.0.6")
    assert proc.returncode == 128, proc.stderr
    assert "apt-get install llvm-16-dev" in proc.stderr.strip().splitlines()[-1]


def test_no_llvm_on_path_aborts(monkeypatch, tmp_path):
    monkeypatch.delenv("HARNESS_LLVM_CONFIG", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(source_checkout.EnvironmentProblem, match="no llvm-config of LLVM >= 15"):
        source_build.find_llvm_config()


def test_a_cmake_older_than_3_26_aborts_naming_the_extra(monkeypatch, tmp_path):
    old = tmp_path / "cmake"
    old.write_text("#!/bin/sh\necho 'cmake version 3.25.1'\n")
    old.chmod(0o755)
    monkeypatch.setattr(source_build, "_tool", lambda name: str(old))
    with pytest.raises(source_checkout.EnvironmentProblem, match=r"found 3\.25\.1.*\.\[build\]"):
        source_build.find_cmake()


def test_a_missing_submodule_aborts(tmp_path):
    repo = tmp_path / "nosub"
    repo.mkdir()
    (repo / "CMakeLists.txt").write_text(CMAKE)
    _commit_all(repo, "no tvm-ffi")
    proc = _step(repo, tmp_path, "--build-only")
    assert proc.returncode == 128, proc.stderr
    assert "submodule 3rdparty/tvm-ffi is missing" in proc.stderr.strip().splitlines()[-1]


def test_not_a_checkout_is_bad_input(tmp_path):
    proc = _step(tmp_path, tmp_path)
    assert proc.returncode == 2 and "is not a git checkout" in proc.stderr


@pytest.mark.nightly
@pytest.mark.skipif(not os.environ.get("HARNESS_TVM_SOURCE"),
                    reason="set HARNESS_TVM_SOURCE to an apache/tvm checkout (built or "
                           "not: the first build takes ~95 min on 2 cores)")
def test_real_tvm_checkout_builds_and_checks_against_its_own_build():
    source = os.environ["HARNESS_TVM_SOURCE"]
    proc = subprocess.run([sys.executable, "-m", "harness", "bisect-step", "--source", source,
                           "conv-reshape-concat"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=4 * 3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[build]" in proc.stderr and "[check]" in proc.stderr


@pytest.mark.nightly
@pytest.mark.skipif(not os.environ.get("HARNESS_TVM_FFI_SOURCE"),
                    reason="set HARNESS_TVM_FFI_SOURCE to an apache/tvm-ffi checkout")
def test_real_tvm_ffi_checkout_is_built_into_an_env_with_a_tvm_release():
    source = os.environ["HARNESS_TVM_FFI_SOURCE"]
    proc = subprocess.run([sys.executable, "-m", "harness", "bisect-step", "--package",
                           "apache-tvm-ffi", "--source", source, "--with",
                           "apache-tvm==0.27.0.post1", "--untestable", "bad",
                           "conv-reshape-concat"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=3600)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]   # a verdict, not skip or abort
    assert "[tvm-ffi package]" in proc.stderr and "[check]" in proc.stderr


# ---- what a commit's check showed, decided like `bisect` decides a release --------------

def _showed(*violations):
    from harness.result import Result
    result = Result("yolov3-tiny", options={"layout": "nchw", "path": "extract"},
                    tvm_version="git:5d4dc8721307", tvm_ffi_version="0.1.14.post1")
    for violation in violations:
        result.add(violation)
    return result


def test_a_registered_failure_on_a_commit_is_good_and_a_new_one_bad(capsys):
    from harness.signature import Pattern
    from harness.verdict import Violation
    annotate = Violation("mutated", "zero-pipeline", "(pass input)", "rebound",
                         "tirx.AnnotateEntryFunc", 48)
    new = Violation("error", "extract-tasks", "(exception)", "ValueError: broken")
    # A source build has no release number: registered entries count in every range.
    assert commit_step.decide(_showed(annotate), None, False) == 0
    assert "registered [annotate-entry-func-yolov3-tiny]" in capsys.readouterr().err
    assert commit_step.decide(_showed(annotate, new), None, False) == 1
    assert commit_step.decide(_showed(annotate), None, True) == 1            # --any
    assert commit_step.decide(_showed(annotate, new), Pattern.parse("crash:*"), False) == 0
    assert commit_step.decide(_showed(new), Pattern.parse("error:extract-tasks"), False) == 1


def test_a_build_command_checks_its_build_not_the_harness_venvs_tvm(tmp_path):
    """Once it checked whatever TVM the harness's venv had and said 0: a bisect of nothing.
    A checkout whose build does not give TVM's python/ and build/lib aborts (128)."""
    repo = tmp_path / "notvm"
    repo.mkdir()
    (repo / "README").write_text("builds nothing\n")
    _commit_all(repo, "no TVM here")
    proc = subprocess.run([sys.executable, "-m", "harness", "bisect-step", "--source", str(repo),
                           "--build-command", "true", "conv-reshape-concat"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT),
                          timeout=600)
    assert proc.returncode == 128, proc.stderr[-2000:]
    assert "not from" in proc.stderr and "aborting the bisect" in proc.stderr, proc.stderr[-2000:]


def _repo(folder, *files):
    """A git repo with one commit per file name given; its commit hashes."""
    os.makedirs(folder)
    run = lambda *args: subprocess.run(["git", "-C", str(folder), *args], check=True,  # noqa: E731
                                       capture_output=True, text=True).stdout.strip()
    run("init", "-q", "-b", "main")
    run("config", "user.email", "t@t")
    run("config", "user.name", "t")
    commits = []
    for name in files:
        with open(os.path.join(folder, name), "w") as handle:
            handle.write(name)
        run("add", "-A")
        run("commit", "-q", "-m", name)
        commits.append(run("rev-parse", "HEAD"))
    return run, commits


def test_a_nested_submodule_a_mirror_lacks_builds_its_newest_and_says_so(tmp_path, capsys,
                                                                         monkeypatch):
    """Offline, a mirror that lags upstream lacks the pinned commit of tvm-ffi's dlpack: the
    newest commit it has is checked out, with a warning (a bisect stops at nothing here);
    a sibling whose pinned commit the mirror holds gets exactly that one."""
    lag_run, lag = _repo(tmp_path / "dlpack", "old.h", "pinned.h")
    lag_run("reset", "-q", "--hard", lag[0])   # the mirror lags: it lacks `pinned.h`
    lag_run("reflog", "expire", "--expire=now", "--all")
    lag_run("gc", "-q", "--prune=now")
    ok_run, ok = _repo(tmp_path / "backtrace", "a.c", "b.c")
    ffi_run, _ = _repo(tmp_path / "ffi", "README")
    for name, commit in (("dlpack", lag[1]), ("backtrace", ok[0])):
        ffi_run("-c", "protocol.file.allow=always", "submodule", "add", "-q",
                str(tmp_path / name), f"3rdparty/{name}")
        ffi_run("update-index", "--cacheinfo", f"160000,{commit},3rdparty/{name}")
    ffi_run("commit", "-q", "-m", "pins")
    tvm_run, _ = _repo(tmp_path / "tvm", "CMakeLists.txt")
    tvm_run("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(tmp_path / "ffi"),
            "3rdparty/tvm-ffi")
    tvm_run("commit", "-q", "-m", "ffi")
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "tvm"), str(checkout)], check=True)
    for key, value in (("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "protocol.file.allow"),
                       ("GIT_CONFIG_VALUE_0", "always")):   # local "mirrors", as file URLs
        monkeypatch.setenv(key, value)
    source_checkout.update_submodules(str(checkout), ("3rdparty/tvm-ffi",),
                                      ("3rdparty/dlpack", "3rdparty/backtrace"))
    nested = checkout / "3rdparty" / "tvm-ffi" / "3rdparty"
    head = lambda path: subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"],  # noqa: E731
                                       capture_output=True, text=True).stdout.strip()
    assert head(nested / "dlpack") == lag[0]        # the newest the mirror has
    assert head(nested / "backtrace") == ok[0]      # its pinned commit, which it has
    err = capsys.readouterr().err
    assert "3rdparty/dlpack's pinned commit is not in its remote" in err
    assert "backtrace's pinned" not in err

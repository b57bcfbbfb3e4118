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
import tempfile

import pytest
from helpers import without_torch

from harness.catalog import known_issues
from harness.tvmapi import loading
from harness.versions import envs
from harness.versions.releases import release_sets

NO_TORCH_DIR = os.path.join(tempfile.gettempdir(), f"harness-no-torch-{os.getpid()}")


def _entries_by_reproducer():
    found = {}
    for issue in known_issues.registry():
        if issue.reproducer:
            found.setdefault(issue.reproducer, []).append(issue)
    return found


def _bug_is_here(issues, versions: dict) -> bool:
    return any(issue.on_stack(versions) for issue in issues)


def _answers_as_registered(reproducer, issues, python: str, versions: dict) -> None:
    path = os.path.join(issues[0].base, reproducer)
    env = dict(os.environ)
    with open(path) as handle:
        if "import torch" not in handle.read():   # as a user without torch runs it
            env["PYTHONPATH"] = without_torch(NO_TORCH_DIR)
    proc = subprocess.run([python, path], capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(path), env=env)
    if proc.returncode == 2 and python != sys.executable:
        return   # it cannot run on that release (its TVMScript is newer): no answer
    expected = 1 if _bug_is_here(issues, versions) else 0
    assert proc.returncode == expected, (
        f"{reproducer}: exit {proc.returncode}, registry expects {expected} on "
        f"{versions}\n{proc.stdout}{proc.stderr[-2000:]}")
    assert ("reproduces" if expected else "does not reproduce") in proc.stdout


REPRODUCERS = sorted(_entries_by_reproducer().items())
NAMES = [os.path.basename(reproducer) for reproducer, _ in REPRODUCERS]


@pytest.mark.parametrize("reproducer, issues", REPRODUCERS, ids=NAMES)
def test_reproducer_answers_as_registered(reproducer, issues):
    _answers_as_registered(reproducer, issues, sys.executable, loading.versions())


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
    assert len(specs) >= 8
    assert reproducer.regenerate(folder, check=True) == []
    copy = tmp_path / "reproducers"
    shutil.copytree(folder, copy)
    edited = copy / specs[0].replace(".json", ".py")
    edited.write_text(edited.read_text() + "# edited by hand\n")
    assert reproducer.regenerate(str(copy), check=True) == [str(edited)]
    reproducer.regenerate(str(copy))
    assert reproducer.regenerate(str(copy), check=True) == []

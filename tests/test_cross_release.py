"""Across releases: a case's module saved with save_json (and its tasks' tuning log) in one
release's child, loaded in the next one's (harness.versions.cross_release, `matrix
--cross-release`).

On the installed TVM, saved and loaded by the same release: nothing is lost. A JSON edited
between the two children, which no check of a single release can see, is caught, each edit
by the comparison it is for. One real pair (the previous release set saving, the
installed release loading) runs by default; the matrix over every release set is nightly.
"""
import html
import json
import os
import shutil
import sys

import pytest
from helpers import SMALL_CASE, cli_here

from harness.catalog import known_issues
from harness.options import Options
from harness.runner.cross_release import MODULE, TUNING_LOG
from harness.tvmapi import loading
from harness.versions import cross_release, envs
from harness.versions.releases import release_sets

INSTALLED = loading.versions()
# The tests that load a copy of `saved` run on one xdist worker: it saves once.
SAVED_ONCE = pytest.mark.xdist_group("cross-release-saved")


@pytest.fixture(scope="session")
def saved(tmp_path_factory):
    """SMALL_CASE saved by the installed release, once: each test loads a copy."""
    folder = str(tmp_path_factory.mktemp("saved"))
    result = cross_release.save_in(SMALL_CASE, Options(), sys.executable, folder)
    assert result.verdict == "pass", result.violations
    return folder, result


def _copy(saved, tmp_path) -> str:
    folder = str(tmp_path / "copy")
    shutil.copytree(saved[0], folder)
    return folder


def _edit_module(folder: str, edit) -> None:
    path = os.path.join(folder, MODULE)
    with open(path) as handle:
        graph = json.load(handle)
    for node in graph["nodes"]:
        edit(node)
    with open(path, "w") as handle:
        json.dump(graph, handle)


@SAVED_ONCE
def test_saved_and_loaded_by_one_release_is_the_same_module(saved, tmp_path):
    folder, save = saved
    assert sorted(os.listdir(folder)) == ["module.json", "saved.json", TUNING_LOG]
    assert [stage.name for stage in save.stages] == ["import", "save-json", "extract",
                                                     "tuning-log"]
    result = cross_release.load_in(SMALL_CASE, Options(), sys.executable, _copy(saved, tmp_path))
    assert result.verdict == "pass", result.violations
    assert result.outcome == save.outcome and result.outcome_count == 3   # the same tasks
    assert [stage.name for stage in result.stages] == ["import", "cross-release"]
    assert result.options["path"] == "cross-release"
    assert result.options["saved_by"] == INSTALLED
    assert known_issues.judge(result).status == "pass"


def _groups(node):
    if node["type"] == "relax.attrs.Conv2DAttrs":
        node["data"]["groups"] = 2


def _no_padding(node):
    if node["type"] == "relax.attrs.Conv2DAttrs":
        del node["data"]["padding"]


def _lose_a_workload(folder):
    path = os.path.join(folder, TUNING_LOG, "database_workload.json")
    with open(path) as handle:
        lines = handle.read().splitlines()
    with open(path, "w") as handle:
        handle.write("\n".join(lines[1:]) + "\n")


# (an edit between save and load, the access paths of what B then reports, a detail word)
EDITS = {
    "a field changed: loads, not the module, other tasks": (
        lambda folder: _edit_module(folder, _groups),
        ["<root>.functions[I.GlobalVar(\"main\")].body.blocks[0].bindings[0].value.attrs.groups",
         "tasks"], "not structurally equal"),
    "a field lost: does not load": (
        lambda folder: _edit_module(folder, _no_padding), ["(load_json)"],
        "Required field `padding`"),
    "a workload lost from the tuning log": (
        _lose_a_workload, ["(tuning log)"], "1 of 3 tasks"),
}


@SAVED_ONCE
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_between_save_and_load_is_caught(saved, tmp_path, edit):
    """The seeded faults only this oracle sees: the module (or the log) changed between
    the release that saved it and the one that loads it."""
    change, access_paths, word = EDITS[edit]
    folder = _copy(saved, tmp_path)
    change(folder)
    result = cross_release.load_in(SMALL_CASE, Options(), sys.executable, folder)
    assert result.verdict == "lossy-roundtrip"
    assert [v.access_path for v in result.violations] == access_paths, result.violations
    first = result.violations[0]
    assert (first.stage, first.phase, first.copier) == (
        "cross-release", "copy", f"json@{INSTALLED['tvm_version']}")
    assert word in first.detail
    assert known_issues.judge(result).status == "new"


# What apache-tvm 0.26.0 wrote for save_json(IntImm("int64", 2)): 0.27 reads the value 2 as
# a reference to node 2, the IntImm itself, and dies (reproducers/load_json_saved_by_0_26.py).
SAVED_BY_0_26 = json.dumps({"root_index": 2, "nodes": [
    {"type": "None"}, {"type": "ir.PrimType", "data": {"span": 0, "dtype": "int64"}},
    {"type": "ir.IntImm", "data": {"span": 0, "ty": 1, "value": 2}}],
    "metadata": {"tvm_version": "0.26.0"}})


def _registered_here(entry_id: str) -> bool:
    entry = next(e for e in known_issues.registry() if e.id == entry_id)
    return entry.on_stack(INSTALLED)


@SAVED_ONCE
@pytest.mark.skipif(not _registered_here("load-json-saved-by-0.26-module"),
                    reason="the installed TVM reads 0.26's IntImm as it was written")
def test_a_signal_while_loading_is_a_crash_at_the_cross_release_stage(saved, tmp_path):
    folder = _copy(saved, tmp_path)
    with open(os.path.join(folder, MODULE), "w") as handle:
        handle.write(SAVED_BY_0_26)
    result = cross_release.load_in(SMALL_CASE, Options(), sys.executable, folder)
    assert result.verdict == "crash"
    crash = result.violations[-1]
    assert (crash.stage, crash.phase, crash.copier) == (
        "cross-release", "copy", f"json@{INSTALLED['tvm_version']}")
    assert "SIGSEGV" in crash.detail
    assert [stage.name for stage in result.stages] == ["import"]   # what finished before
    assert result.options["path"] == "cross-release"


def _previous_release():
    """The release set before the installed one (None when it is the oldest)."""
    sets = list(release_sets().values())
    here = [i for i, pins in enumerate(sets) if pins["apache-tvm"] == INSTALLED["tvm_version"]]
    return sets[here[0] - 1] if here and here[0] > 0 else None


@pytest.mark.needs_env   # the previous release set's cached environment (~20 s to build)
@pytest.mark.nightly     # a fresh clone's default run builds no environment
@pytest.mark.skipif(_previous_release() is None, reason="no release set before the installed")
def test_the_previous_release_saves_and_the_installed_one_loads():
    """A real pair, each half in its own release's child: what the registry says about it."""
    pins = _previous_release()
    python_a = envs.python_of(envs.ensure(pins))
    result = cross_release.run_pair(SMALL_CASE, Options(), python_a, sys.executable)
    assert result.tvm_version == INSTALLED["tvm_version"]
    assert result.options["saved_by"] == {"tvm_version": pins["apache-tvm"],
                                          "tvm_ffi_version": pins["apache-tvm-ffi"]}
    assert result.stages[0].name == f"import ({pins['apache-tvm']})"   # A's half in front
    judgement = known_issues.judge(result)
    assert judgement.status in ("pass", "known") and not judgement.stale, (
        result.violations, judgement.lines())
    if judgement.known:   # measured: neither the module nor the tuning log loads
        assert {v.access_path for v in result.violations} == {"(load_json)", "(tuning log)"}


def test_cross_release_needs_two_sets():
    code, _, err = cli_here("matrix", SMALL_CASE, "--cross-release", "--set",
                            "apache-tvm==0.27.0.post1,apache-tvm-ffi==0.1.14.post1")
    assert code == 2 and "--cross-release needs at least two --set" in err


@pytest.mark.nightly
@pytest.mark.needs_env   # every release set's environment
def test_matrix_has_a_json_column_per_adjacent_pair_of_sets(tmp_path):
    sets = [",".join(f"{name}=={version}" for name, version in pins.items())
            for pins in release_sets().values()]
    args = ["matrix", SMALL_CASE, "--out", str(tmp_path), "--cross-release"]
    for pins in sets:
        args += ["--set", pins]
    code, out, err = cli_here(*args)
    assert code == 0, err   # every cross-release failure is registered
    data = json.loads((tmp_path / "matrix.json").read_text())
    assert len(data["cross_release"]) == len(sets) - 1
    assert all(" -> " in label and label.endswith(" json") for label in data["cross_release"])
    header = out.strip().splitlines()[0]
    assert header.count(" -> ") == len(sets) - 1
    cells = [cell for cell in data["cells"] if cell["set"] in data["cross_release"]]
    assert len(cells) == len(sets) - 1
    assert all(cell["path"] == "cross-release" and "--cross-release" in cell["reproduce"]
               for cell in cells if cell["verdict"] != "pass")
    page = html.unescape((tmp_path / "matrix.html").read_text())
    assert all(f"<th>{label}</th>" in page for label in data["cross_release"])

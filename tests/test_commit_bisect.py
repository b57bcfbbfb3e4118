"""The commit bisect's driver (`bisect CASE --source CHECKOUT`): suspects first, the
binary search when none flips, skips, `--fixed`, the journal, the build reuse key.

A real git history in a temporary folder stands in for apache/tvm and a toy probe for
the build-and-check of one commit (the test is about the driver itself; the build and
check of a real commit are bisect-step's, tests/test_commit_step.py)."""
from __future__ import annotations

import argparse
import os
import subprocess

import pytest

from harness.cli import commit_bisect as cli
from harness.signature import Pattern
from harness.verdict import BadInput
from harness.versions import bisect
from harness.versions import commit_bisect as search

FAILURE = "error:import:-:ValueError: The channel size of the data should equal"


def _git(folder, *args):
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def history(tmp_path):
    """20 commits; #12 changes grid_sample's C++ (the culprit), #5 and #16 only Python."""
    repo = tmp_path / "tvm"
    (repo / "src").mkdir(parents=True)
    (repo / "python").mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@t")
    _git(repo, "config", "user.name", "t")
    commits = []
    for index in range(20):
        if index == 12:
            (repo / "src" / "resize.cc").write_text("grid_sample reads [N, 2, H, W]\n")
        elif index in (5, 16):
            (repo / "python" / f"p{index}.py").write_text(f"# python only {index}\n")
        else:
            (repo / "src" / f"f{index}.cc").write_text(f"int f{index};\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"commit {index}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    return repo, commits


class ToyProbe:
    """The failure shows from commit `first_bad` on (or, `fixed_at`, stops there); commits
    in `broken` do not compile (skip)."""

    def __init__(self, commits, first_bad=12, fixed_at=None, broken=()):
        self.commits, self.first_bad, self.fixed_at = commits, first_bad, fixed_at
        self.broken, self.seen = set(broken), []

    def __call__(self, commit):
        self.seen.append(commit)
        index = self.commits.index(commit)
        if index in self.broken:
            return bisect.Step(commit, 125, 1.0, True, "it does not compile", [],
                               {"seconds": 60.0, "recompiled": 3})
        failing = index >= self.first_bad and (self.fixed_at is None or index < self.fixed_at)
        signatures = [FAILURE + " 2 while ..."] if failing else []
        return bisect.Step(commit, 1 if failing else 0, 1.0, True,
                           "error" if failing else "pass", signatures,
                           {"seconds": 60.0, "recompiled": 5})


def _args(**kw):
    defaults = dict(match=None, fixed=False, no_suspects=False, suspect=None)
    return argparse.Namespace(**{**defaults, **kw})


def _run(repo, tmp_path, probe, old, new, **kw):
    journal = bisect.State(str(tmp_path / "journal.json"))
    run = cli.CommitSearch(str(repo), journal, probe)
    return run, run.bisect("gs.py", old, new, _args(**kw))


def test_a_suspect_whose_parent_is_good_is_the_answer_in_two_checks(history, tmp_path, capsys):
    repo, commits = history
    probe = ToyProbe(commits)
    run, code = _run(repo, tmp_path, probe, commits[0], commits[-1], suspect=["grid_sample"])
    out = capsys.readouterr().out
    assert code == 0 and f"first bad: {commits[12][:10]} commit 12" in out, out
    assert "proven by its parent" in out
    assert probe.seen == [commits[0], commits[-1], commits[11], commits[12]]   # ends + 2


def test_without_a_suspect_the_binary_search_finds_it_and_skips_what_does_not_compile(
        history, tmp_path, capsys):
    repo, commits = history
    probe = ToyProbe(commits, broken={10})
    run, code = _run(repo, tmp_path, probe, commits[0], commits[-1], no_suspects=True)
    out = capsys.readouterr().out
    assert code == 0 and f"first bad: {commits[12][:10]}" in out, out
    assert len(probe.seen) <= 2 + 6


def test_fixed_finds_the_commit_where_the_failure_is_gone(history, tmp_path, capsys):
    repo, commits = history
    probe = ToyProbe(commits, first_bad=0, fixed_at=12)
    run, code = _run(repo, tmp_path, probe, commits[0], commits[-1], fixed=True,
                     suspect=["grid_sample"])
    out = capsys.readouterr().out
    assert code == 0 and f"fixed: {commits[12][:10]}" in out, out


def test_ends_that_are_not_as_claimed_are_refused(history, tmp_path, capsys):
    repo, commits = history
    run, code = _run(repo, tmp_path, ToyProbe(commits, first_bad=0), commits[0], commits[-1])
    assert code == 2 and "the ends are not as claimed" in capsys.readouterr().out


def test_the_journal_keeps_every_decided_step_and_a_rerun_builds_none_again(
        history, tmp_path, capsys):
    repo, commits = history
    first = ToyProbe(commits)
    _run(repo, tmp_path, first, commits[0], commits[-1], no_suspects=True)
    again = ToyProbe(commits)
    run, code = _run(repo, tmp_path, again, commits[0], commits[-1], no_suspects=True)
    assert code == 0 and again.seen == []   # every step read back from the journal
    assert "first bad" in capsys.readouterr().out


def test_a_python_only_commit_has_its_parents_compiled_inputs(history):
    repo, commits = history
    keys = [search.compiled_key(str(repo), commit) for commit in commits]
    assert keys[5] == keys[4] and keys[16] == keys[15]   # no build needed
    assert keys[12] != keys[11] and len(set(keys)) == 18


def test_suspects_are_the_commits_whose_diff_mentions_the_failure(history):
    repo, commits = history
    words = search.keywords(Pattern.parse("error:convert-layout:ConvertLayout"), ["grid_sample"])
    assert words == ["grid_sample", "ConvertLayout"]
    found = search.suspects(str(repo), commits[0], commits[1:], words)
    assert found == [commits[12]]


def test_refs_resolve_and_bad_ones_are_named(history):
    repo, commits = history
    _git(repo, "tag", "v1", commits[3])
    assert search.resolve(str(repo), "v1") == commits[3]
    with pytest.raises(BadInput, match="is not a commit, tag or branch"):
        search.resolve(str(repo), "v9")
    with pytest.raises(BadInput, match="nothing to bisect"):
        search.range_of(str(repo), commits[5], commits[5])


def test_the_command_line_refuses_release_options_and_a_non_checkout(tmp_path):
    from helpers import cli_here
    code, out, err = cli_here("bisect", "conv-reshape-concat", "--source", tmp_path,
                              "--good", "a", "--bad", "b")
    assert code == 2 and "is not a git checkout" in err, err
    code, out, err = cli_here("bisect", "conv-reshape-concat", "--source", tmp_path,
                              "--good", "a", "--bad", "b", "--with", "x==1")
    assert code == 2 and "--with is for bisecting releases" in err, err
    assert os.listdir(tmp_path) == []


def test_with_match_the_ends_are_taken_as_given_and_the_answer_proven_by_its_parent(
        history, tmp_path, capsys):
    """As git bisect trusts good and bad: with the failure named, the two checks of a
    flipping suspect are all it costs (two builds where they differ, none for the ends)."""
    repo, commits = history
    probe = ToyProbe(commits)
    run, code = _run(repo, tmp_path, probe, commits[0], commits[-1], match="error:import:*",
                     suspect=["grid_sample"])
    assert code == 0 and f"first bad: {commits[12][:10]}" in capsys.readouterr().out
    assert probe.seen == [commits[11], commits[12]]
    # the binary search's answer is checked against its parent too, even at an end
    late = ToyProbe(commits, first_bad=19)
    journal = bisect.State(str(tmp_path / "late.json"))
    code = cli.CommitSearch(str(repo), journal, late).bisect(
        "gs.py", commits[0], commits[-1], _args(match="error:import:*", no_suspects=True))
    assert code == 0 and commits[18] in late.seen and commits[19] in late.seen
    # ends that were wrong show: the answer does not stand on its parent
    wrong = ToyProbe(commits, first_bad=0)
    journal = bisect.State(str(tmp_path / "wrong.json"))
    code = cli.CommitSearch(str(repo), journal, wrong).bisect(
        "gs.py", commits[0], commits[-1], _args(match="error:import:*", no_suspects=True))
    assert code == 2 and "not proven" in capsys.readouterr().out


def test_stored_builds_narrow_the_range_before_anything_is_compiled(history, tmp_path):
    """With builds stored for commits 4, 8 and 16, the search decides among them first (no
    compile), then only between the two they leave: 8 and 16."""
    repo, commits = history
    probe = ToyProbe(commits, first_bad=12)
    journal = bisect.State(str(tmp_path / "journal.json"))
    search_run = cli.CommitSearch(str(repo), journal, probe)
    stored = {commits[4], commits[8], commits[16]}
    terms = search.Terms(bisect.Judge(Pattern.parse(FAILURE + "*")))
    culprit, skipped = search_run.locate(commits[0], commits[1:], terms, [], use_suspects=False,
                                         built=stored.__contains__)
    assert culprit == commits[12] and not skipped
    first = [commit for commit in probe.seen if commit in stored]
    assert probe.seen[:len(first)] == first            # the stored ones first
    rest = [commits.index(commit) for commit in probe.seen[len(first):]]
    assert rest and all(8 < index < 16 for index in rest)

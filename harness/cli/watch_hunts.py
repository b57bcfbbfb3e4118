"""From a night's news to the commit behind it: check again, then search, within a budget.

Every news is first checked again on the same build (a change that does not repeat is
marked flaky and never searched: PyTorch's HUD found that its false culprits all came
from signals that did not repeat). What repeats opens a *hunt*: the commit search of
`bisect --source` (suspects first, builds reused by compiled inputs and from the build
store, ccache) over the night's range, for that one signature: `--fixed` for a failure
gone. A hunt whose budget runs out keeps its journal and resumes the next night; a
found culprit is proven by its parent's check and comes with the text of a report.
"""
from __future__ import annotations

import os
import time
from typing import Callable

from harness.cli.commit_bisect import CommitSearch, OutOfBudget
from harness.signature import Pattern
from harness.verdict import EXIT_CANNOT_TEST, BadInput
from harness.versions import bisect, commit_bisect, nights
from harness.versions.source_checkout import EnvironmentProblem

BY_SIGNATURE = ("case", "test", "suite_tests")   # rechecks judged by what they show


def recheck_of(state: nights.WatchState, news: nights.News) -> dict:
    """How to check a news' row: the failing night's (a failure gone is checked as the
    night that showed it checked it: its test, its script)."""
    night = state.night_at(news.since) if news.change == nights.GONE else None
    row = (night.rows if night else {}).get(news.row) or state.nights[-1].rows.get(news.row, {})
    return row.get("recheck", {})


def recheck(night: nights.Night, state: nights.WatchState,
            shows: Callable[[dict, str], bool | None], log: Callable[[str], None]) -> None:
    """Each unchecked news of tonight checked again alone on the same build (`shows`:
    whether a row's recheck shows a signature there, None when it cannot run). A build
    failure was built twice already (the bench's build)."""
    for news in night.news:
        if news.state or news.change == nights.BROKE:
            news.state = news.state or nights.CONFIRMED
            continue
        how = recheck_of(state, news)
        signature = news.signature if set(BY_SIGNATURE) & set(how) else nights.REPRODUCES
        shows_now = shows(how, signature)
        expected = news.change == nights.NEW
        news.state = nights.UNCHECKED if shows_now is None else \
            nights.CONFIRMED if shows_now is expected else nights.FLAKY
        log(f"watch: checked again: {news.change} {news.row}: {news.signature[:90]} -> "
            f"{news.state}" + ("" if shows_now is not None else " (the check could not run)"))


def _same_question(hunt: nights.Hunt, news: nights.News, how: dict, old: str, new: str) -> bool:
    """A hunt already asks this: the same change of the same signature over the same range
    (by exit code, only of the same reproducer: each is its own question)."""
    if (hunt.old, hunt.new, hunt.change, hunt.signature) != (old, new, news.change,
                                                             news.signature):
        return False
    return bool(set(BY_SIGNATURE) & set(how)) or hunt.recheck == how


def open_hunts(state: nights.WatchState, night: nights.Night, previous: nights.Night,
               source: str) -> None:
    """One hunt per confirmed change and signature (the first row showing it is its
    check): a bug that shows on ten models is one culprit to find. Over a range that is
    not history (the branch was moved back or rewritten) nothing is hunted, said so."""
    for news in night.news:
        if news.state != nights.CONFIRMED or news.hunt:
            continue
        old = news.since or previous.commit
        if not commit_bisect.is_ancestor(source, old, night.commit):
            news.note = f"not hunted: {old[:10]} is not in {night.commit[:10]}'s history"
            continue
        how = recheck_of(state, news)
        same = next((hunt for hunt in state.hunts.values()
                     if _same_question(hunt, news, how, old, night.commit)), None)
        if same is None:
            # judged by exit code, each reproducer is its own question: its check in the id
            by_code = "" if set(BY_SIGNATURE) & set(how) else str(sorted(how.items()))
            same = nights.Hunt(nights.hunt_id(news, old, night.commit, by_code),
                               news.change, news.row, news.signature, how, old, night.commit,
                               opened=time.strftime("%Y-%m-%d %H:%M"))
            state.hunts[same.id] = same
        news.hunt = same.id


class _BuildProbe:
    """A build hunt's step: bad (exit 1) when the commit does not compile."""

    def __init__(self, probe: commit_bisect.CommitProbe):
        self.probe = probe

    def __call__(self, commit: str) -> bisect.Step:
        import dataclasses
        started = time.monotonic()
        commit_bisect.source_checkout.git(self.probe.source, "checkout", "--quiet",
                                          "--detach", commit)
        stats, failure, _ = self.probe.build(commit)
        return bisect.Step(commit, 1 if failure else 0, round(time.monotonic() - started, 1),
                           not stats.reused, failure or "it compiles", [],
                           dataclasses.asdict(stats))


def _terms(hunt: nights.Hunt) -> commit_bisect.Terms:
    if hunt.change == nights.BROKE or not set(BY_SIGNATURE) & set(hunt.recheck):
        return commit_bisect.Terms(bisect.Judge(), hunt.fixed)   # by exit code
    return commit_bisect.Terms(bisect.Judge(Pattern.parse(hunt.signature)), hunt.fixed)


def run_hunt(hunt: nights.Hunt, source: str, state_folder: str, bench, deadline: float,
             log: Callable[[str], None]) -> None:
    """Search for the hunt's commit until found or the deadline; the journal keeps steps."""
    journal = bisect.State(os.path.join(state_folder, "hunts", f"{hunt.id}.json"))
    os.makedirs(os.path.dirname(journal.path), exist_ok=True)
    try:
        terms = _terms(hunt)
        base, commits = commit_bisect.range_of(source, hunt.old, hunt.new)
    except (BadInput, EnvironmentProblem) as exc:   # this hunt's range or signature, not all
        hunt.state, hunt.progress = "gave-up", f"cannot search: {exc}"
        return
    probe = bench.probe_for(hunt)
    search = CommitSearch(source, journal, probe, deadline)
    candidates = [base] + commits
    log(f"watch: hunt {hunt.id}: {hunt.change} {hunt.signature[:80]} over {len(commits)} "
        f"commits {base[:10]}..{hunt.new[:10]} ({terms.describe()})")
    started = time.monotonic()
    try:
        culprit, skipped = search.locate(base, commits, terms, [], built=bench.stored)
        culprit_state, parent_state = search.proof(culprit, skipped, candidates, terms)
    except OutOfBudget:
        hunt.progress = _progress(journal, candidates, terms)
        log(f"watch: hunt {hunt.id}: out of time tonight; {hunt.progress} (resumes next run)")
        return
    except bisect.StepBroken as exc:
        step = exc.args[0]
        hunt.state, hunt.progress = "gave-up", (f"the check at {step.version[:10]} is broken "
                                                f"(exit {step.code}): {step.summary[:160]}")
        return
    finally:
        hunt.minutes = round(hunt.minutes + (time.monotonic() - started) / 60, 1)
        hunt.steps = len(journal.steps)
        hunt.builds = sum(1 for step in journal.steps.values()
                          if step.build and not step.build.get("reused"))
    parent = candidates[candidates.index(culprit) - 1]
    if culprit_state != "new" or parent_state not in ("old", "skip"):
        hunt.state = "not-proven"
        hunt.progress = (f"{culprit[:10]} is {culprit_state} and its parent {parent[:10]} "
                         f"{parent_state}: the night's ends disagree with their checks")
        return
    hunt.culprit, hunt.parent = culprit, parent
    hunt.culprit_title = commit_bisect.title(source, culprit)
    hunt.pr = nights.pr_number(hunt.culprit_title)
    hunt.said = journal.steps[culprit].summary
    hunt.parent_said = journal.steps[parent].summary if parent in journal.steps else \
        "skipped (could not be tested)"
    if skipped:   # no proof: an untested commit may be it; no report, nothing recorded
        hunt.state = "narrowed"
        hunt.progress = (f"{len(skipped)} commits before it could not be tested "
                         f"({', '.join(commit[:10] for commit in skipped)}): the culprit is "
                         "among them or this one")
        return
    hunt.state = "found"
    hunt.report = report_text(hunt)
    log(f"watch: hunt {hunt.id}: {'fixed by' if hunt.fixed else 'introduced by'} "
        f"{culprit[:10]} {hunt.culprit_title} ({hunt.steps} checks, {hunt.builds} builds)")


def _progress(journal: bisect.State, candidates: list[str], terms) -> str:
    """How far a search got: the bracket its decided steps leave."""
    low, high = 0, len(candidates) - 1
    for index, commit in enumerate(candidates):
        step = journal.steps.get(commit)
        if step is None or step.code == EXIT_CANNOT_TEST:
            continue
        state = terms.state(step)
        if state == "old" and index > low:
            low = index
        elif state == "new" and index < high:
            high = index
    count = len(journal.steps)
    return (f"{count} check{'' if count == 1 else 's'} so far; the culprit is one of the "
            f"{high - low} commits after {candidates[low][:10]} up to {candidates[high][:10]}")


def report_text(hunt: nights.Hunt) -> str:
    """What to paste into an upstream issue (or the PR's thread) about this commit."""
    pr = f" (apache/tvm#{hunt.pr})" if hunt.pr else ""
    if hunt.change == nights.BROKE:
        return (f"apache/tvm {hunt.culprit[:12]}{pr}, \"{hunt.culprit_title}\", does not build "
                f"on CPU (LLVM, gcc) where its parent {hunt.parent[:12]} does: {hunt.said}")
    how = _how(hunt.recheck)
    entry = hunt.row.removeprefix("reproducer ") if hunt.row.startswith("reproducer ") else ""
    registered = f"\n\nThe registered issue's own report: `python -m harness upstream {entry}`" \
        " (`watch --record` writes this commit into its entry)." if entry else ""
    if hunt.fixed:
        # a failure gone may be masked, not fixed: what the commit shows instead is said
        instead = f" It shows instead: {hunt.said}." if hunt.said and \
            hunt.said not in ("pass", "does not reproduce") else ""
        return (f"Fixed by apache/tvm {hunt.culprit[:12]}{pr}, \"{hunt.culprit_title}\": "
                f"{how} no longer shows `{hunt.signature}`; its parent {hunt.parent[:12]} "
                f"still does ({hunt.parent_said}).{instead}{registered}")
    return (f"Since apache/tvm {hunt.culprit[:12]}{pr}, \"{hunt.culprit_title}\", {how} shows\n\n"
            f"    {hunt.signature}\n\nIts parent {hunt.parent[:12]} does not "
            f"({hunt.parent_said}). Found by the harness watching main (night "
            f"{hunt.old[:10]}..{hunt.new[:10]}, {hunt.steps} checks, {hunt.builds} builds)."
            f"{registered}")


def _how(recheck: dict) -> str:
    if "test" in recheck:
        return f"TVM's test `{recheck['test']}` under `python -m harness guard-suite`"
    if "script" in recheck:
        return f"the standalone reproducer `{os.path.basename(recheck['script'])}`"
    return "`" + " ".join(["python -m harness check", recheck.get("case", ""),
                           *recheck.get("args", [])]) + "`"


def run_pending(state: nights.WatchState, source: str, bench, deadline: float,
                log: Callable[[str], None]) -> None:
    """Every pending hunt, oldest first, until the budget runs out (saved after each);
    the first always takes a step, so a budget too small for any still makes progress."""
    for number, hunt in enumerate(sorted(state.pending(), key=lambda hunt: hunt.opened)):
        if number and time.monotonic() > deadline:
            hunt.progress = hunt.progress or "not started: no time left in this run's budget"
            log(f"watch: no time left for hunt {hunt.id} ({hunt.progress})")
            state.save()
            continue
        try:
            run_hunt(hunt, source, state.folder, bench, deadline, log)
        except EnvironmentProblem as exc:   # the machine, not the commit: stop for tonight
            log(f"watch: hunts stop tonight: {exc}")
            state.save()
            return
        state.save()


def build_probe(probe: commit_bisect.CommitProbe) -> _BuildProbe:
    return _BuildProbe(probe)

"""`python -m harness bisect CASE --source TVM_CHECKOUT --good REF --bad REF`: which
apache/tvm commit introduced a failure (or with `--fixed`, which one fixed it).

The options, the run and what it prints; the search, the builds and the journal live
in harness.versions.commit_bisect (each step in versions.commit_step, the build in
versions.source_build).
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable

from harness.catalog import cases as catalog
from harness.signature import Pattern
from harness.verdict import EXIT_INTERRUPTED, EXIT_USAGE, BadInput
from harness.versions import bisect, build_store, commit_step, envs
from harness.versions import commit_bisect as search

RELEASE_ONLY = ("package", "with_", "pre", "step_command", "bare_env")


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _validate(args) -> tuple[str, str, str]:
    """(checkout, old commit, new commit); everything else the user typed, checked."""
    given = [name for name in RELEASE_ONLY if getattr(args, name, None)
             and not (name == "package" and args.package == "apache-tvm")]
    if given:
        raise BadInput(f"--{given[0].rstrip('_').replace('_', '-')} is for bisecting releases; "
                       "with --source the bisect is over the checkout's commits")
    if args.any:
        raise BadInput("--any has no meaning over commits (registered bugs show on every "
                       "one); name the failure with --match, or let the ends decide it")
    source = os.path.abspath(args.source)
    if not os.path.exists(os.path.join(source, ".git")):
        raise BadInput(f"--source {args.source} is not a git checkout of apache/tvm")
    if args.match:
        Pattern.parse(args.match)
    return source, search.resolve(source, args.good), search.resolve(source, args.bad)


def cmd_commit_bisect(args) -> int:
    source, old, new = _validate(args)
    case = catalog.resolve(args.case)
    check_args = (["--layout", args.layout] if args.layout else []) + ["--path", args.path]
    journal_file = search.journal_path(source, case.id, old, new, check_args, args.fixed,
                                       args.match)
    if os.path.exists(journal_file) and not args.resume:
        if not args.fresh:
            raise BadInput(f"an earlier bisect of the same range and check is in "
                           f"{journal_file}: --resume continues it, --fresh starts over")
        os.remove(journal_file)
    journal = bisect.State(journal_file)
    build_dir = os.path.abspath(args.build_dir or os.path.join(source, "build"))
    probe = search.CommitProbe(
        source, build_dir, case.id, check_args, args.jobs, not args.no_ccache,
        envs.door_packages(case), args.timeout, _log,
        store=args.store)
    run = CommitSearch(source, journal, probe)
    try:
        return run.bisect(case.id, old, new, args)
    except KeyboardInterrupt:
        _log(f"bisect: interrupted; {len(journal.steps)} decided steps kept in {journal_file} "
             "(--resume continues; the build folder keeps what was compiled)")
        return EXIT_INTERRUPTED
    except (bisect.StepBroken, commit_step.EnvironmentProblem) as exc:
        step = exc.args[0]
        what = f"the step at {step.version[:10]} is broken (exit {step.code}): {step.summary}" \
            if isinstance(step, bisect.Step) else str(step)
        print(f"bisect: stopped: {what}; decided steps are kept (--resume)")
        return EXIT_USAGE


class OutOfBudget(Exception):
    """The search's time is up before its next step: the journal keeps what was decided."""


class CommitSearch:
    """One bisect's steps: observing a commit (journal first), progress, the summary.
    `deadline` (time.monotonic()): no new step starts after it (OutOfBudget), but the
    first of this run, so that a search with a night's budget always gets further, stops
    between steps and resumes from its journal."""

    def __init__(self, source: str, journal: bisect.State, probe,
                 deadline: float | None = None):
        self.source, self.journal, self.probe = source, journal, probe
        self.started = time.monotonic()
        self.estimate_left = 0
        self.deadline = deadline
        self.probed = 0

    def observe(self, commit: str) -> bisect.Step:
        if commit in self.journal.steps:
            return self.journal.steps[commit]
        if self.deadline is not None and self.probed and time.monotonic() > self.deadline:
            raise OutOfBudget(commit)
        self.probed += 1
        measured = [step.seconds for step in self.journal.steps.values()]
        left = search.estimate(self.estimate_left, measured)
        _log(f"bisect: [{len(self.journal.steps) + 1}] {commit[:10]} "
             f"{search.title(self.source, commit)[:70]} ({left})")
        step = self.probe(commit)
        stats = search.BuildStats(**step.build) if step.build else search.BuildStats()
        _log(f"bisect:     exit {step.code}: {step.summary[:160]} ({stats.text()}, "
             f"{step.seconds:.0f} s in all)")
        if bisect.Judge()(step) == bisect.BROKEN:
            raise bisect.StepBroken(step)
        self.journal.record(step)
        return step

    def bisect(self, case: str, old: str, new: str, args) -> int:
        base, commits = search.range_of(self.source, old, new)
        if base != old:
            _log(f"bisect: {old[:10]} is not on {new[:10]}'s history (a release branch): "
                 f"starting from their merge base {base[:10]}, as git bisect does")
        _log(f"bisect: {case}: {len(commits)} commits after {base[:10]} up to {new[:10]}")
        candidates = [base] + commits
        if args.match:   # the failure is named: the ends are taken as given, as git does
            terms = search.Terms(bisect.Judge(Pattern.parse(args.match)), args.fixed)
            _log("bisect: the ends are taken as given (--match names the failure); the "
                 "answer is proven by its parent")
        else:            # the ends are checked, and say which failure to follow
            self.estimate_left = 2 + search.steps_left(0, len(commits))
            old_end, new_end = self.observe(base), self.observe(new)
            pattern = search.the_failure(old_end, new_end, args.fixed)
            terms = search.Terms(bisect.Judge(pattern), args.fixed)
            if pattern is None or terms.state(old_end) != "old" \
                    or terms.state(new_end) != "new":
                print(f"bisect: the ends are not as claimed ({terms.describe()}"
                      + ("; the failing end shows no failure the other does not"
                         if not pattern else "") + ")")
                print("\n".join(self._table(candidates, terms)))
                return EXIT_USAGE
        _log(f"bisect: {terms.describe()}")
        culprit, skipped = self.locate(base, commits, terms, args.suspect or [],
                                       not args.no_suspects, self.stored)
        return self._report(culprit, skipped, candidates, terms)

    def stored(self, commit: str) -> bool:
        store = getattr(self.probe, "store", None)
        return bool(store) and build_store.lookup(
            store, search.compiled_key(self.source, commit)) is not None

    def locate(self, base: str, commits: list[str], terms: search.Terms,
               suspect_words: list[str], use_suspects: bool = True,
               built: Callable[[str], bool] | None = None) -> tuple[str, list[str]]:
        """(the first new commit after `base`, the commits skipped around it): suspects
        first, then the binary search; the ends are old and new as given. `built` names
        the commits whose build is stored: the search narrows among them first, compiling
        nothing (Chromium's bisect-builds), then searches only between the two it left."""
        culprit = self._suspects(base, commits, terms, terms.judge.pattern, suspect_words) \
            if use_suspects else None
        if culprit is not None:
            return culprit, []
        candidates = [base] + commits
        decide = lambda commit: terms.as_search(self.observe(commit))  # noqa: E731
        stored = [commit for commit in commits[:-1] if built and built(commit)]
        if stored:
            _log(f"bisect: first among the {len(stored)} stored builds in range")
            upper, _ = bisect.search([base] + stored + [commits[-1]], decide)
            before = [commit for commit in stored
                      if candidates.index(commit) < candidates.index(upper)
                      and commit in self.journal.steps
                      and terms.state(self.journal.steps[commit]) == "old"]
            lower = before[-1] if before else base
            candidates = candidates[candidates.index(lower):candidates.index(upper) + 1]
        self.estimate_left = search.steps_left(0, len(candidates) - 1)
        return bisect.search(candidates, decide, lambda text: None)

    def proof(self, culprit: str, skipped: list[str], candidates: list[str],
              terms: search.Terms) -> tuple[str, str]:
        """(the culprit's state, its parent's): a search's answer stands only on its own
        check and its parent's (an end taken as given is checked now)."""
        parent = candidates[candidates.index(culprit) - 1]
        parent_state = terms.state(self.observe(parent)) if not skipped else "skip"
        return terms.state(self.observe(culprit)), parent_state

    def _suspects(self, base, commits, terms, pattern, extra) -> str | None:
        """A suspect whose parent is old and which is itself new, or None."""
        words = search.keywords(pattern, extra)
        found = search.suspects(self.source, base, commits, words)[:search.MAX_SUSPECTS]
        if not found:
            _log(f"bisect: no commit in range mentions {', '.join(words) or 'a word of it'}: "
                 "binary search")
            return None
        _log(f"bisect: suspects first (their diffs mention {', '.join(words)}): "
             + ", ".join(f"{commit[:10]}" for commit in found))
        for commit in found:
            parent = commits[commits.index(commit) - 1] if commits.index(commit) else base
            self.estimate_left = 2
            if terms.state(self.observe(parent)) != "old":
                continue
            if terms.state(self.observe(commit)) == "new":
                return commit
        _log("bisect: no suspect flips: binary search")
        return None

    def _report(self, culprit, skipped, candidates, terms) -> int:
        parent = candidates[candidates.index(culprit) - 1]
        culprit_state, parent_state = self.proof(culprit, skipped, candidates, terms)
        if culprit_state != "new" or parent_state not in ("old", "skip"):
            print(f"bisect: not proven: {culprit[:10]} is {culprit_state} and its parent "
                  f"{parent[:10]} {parent_state} ({terms.describe()}); were the ends right?")
            print("\n".join(self._table(candidates, terms)))
            return EXIT_USAGE
        parent_step = self.journal.steps[parent] if not skipped else None
        print(f"{'fixed' if terms.fixed else 'first bad'}: {culprit[:10]} "
              f"{search.title(self.source, culprit)}")
        if parent_step is not None:
            print(f"  proven by its parent {parent[:10]} "
                  f"({parent_state}: {parent_step.summary[:120]})")
        if skipped:
            print(f"  could not test (skipped): {', '.join(c[:10] for c in skipped)}; the "
                  "commit is among them or the one above")
        print("\n".join(self._table(candidates, terms)))
        print(self._costs(len(candidates) - 1))
        return 0

    def _table(self, candidates, terms) -> list[str]:
        lines = []
        for commit in candidates:
            step = self.journal.steps.get(commit)
            if step is None:
                continue
            stats = search.BuildStats(**step.build) if step.build else search.BuildStats()
            state = terms.state(step) if bisect.Judge()(step) != bisect.BROKEN else "broken"
            lines.append(f"  {commit[:10]} {state:<4} {stats.text():<58} "
                         f"{search.title(self.source, commit)[:50]}")
        return lines

    def _costs(self, commits: int) -> str:
        steps = list(self.journal.steps.values())
        builds = [search.BuildStats(**step.build) for step in steps if step.build]
        built = [stats for stats in builds if not stats.reused]
        minutes = sum(stats.seconds for stats in built) / 60
        plain = 2 + search.steps_left(0, commits)
        # a plain bisect's steps jump across the range: each about the longest build here
        longest = max((stats.seconds for stats in built), default=0.0) / 60
        return (f"bisect: {len(steps)} steps, {len(built)} builds ({minutes:.1f} build min), "
                f"{(time.monotonic() - self.started) / 60:.0f} min this run; a plain "
                f"`git bisect run` over these {commits} commits: about {plain} steps, each a "
                f"build of a commit far from the last (~{plain * longest:.0f} build min at "
                f"this run's longest build, {longest:.1f} min; a whole TVM build takes 50-95 "
                "min here)")

"""A whole bisect of apache/tvm commits, driven here: `bisect CASE --source CHECKOUT`.

`bisect-step` is one step for `git bisect run`; this drives the search itself so that
it can be cheap and survive interruptions:

* **Suspects first.** Commits in range whose diff mentions a word of the failure (its
  pass, an identifier in its message, `--suspect WORD`) are tried first, each by its
  parent and itself: a suspect whose parent is old-state and itself new-state is the
  answer, proven by its parent, in two checks. Only when none flips does the full
  binary search run (the same `versions.bisect.search` the release bisect uses).
* **A build only when the compiled inputs change.** A commit's compiled inputs (src/,
  include/, cmake/, CMakeLists.txt, 3rdparty/) are keyed by their git trees; the build
  folder remembers the key it was built from, so a Python-only commit reuses it. One
  build folder, incremental (ninja), ccache on by default.
* **A journal.** Every decided step is written at once (commit, verdict, what it
  showed, build seconds, files recompiled, ccache hits): Ctrl-C, a killed shell or a
  restarted machine loses at most the step in flight; `--resume` takes it up.
* **Skip, never blame.** A commit that does not compile, whose check cannot run there
  (API drift inside the range: the check exits 2 or 125) is skipped with its reason.

Terms are git's old/new: a regression bisect looks for the first commit showing the
failure (old = good), `--fixed` for the first commit where it is gone (old = bad).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import subprocess
import time
from typing import Callable

from harness import paths
from harness.signature import Pattern
from harness.verdict import EXIT_CANNOT_TEST, BadInput
from harness.versions import (
    bisect,
    build_store,
    envs,
    source_build,
    source_checkout,
    suite_test,
)

COMPILED_INPUTS = ("src", "include", "cmake", "CMakeLists.txt", "3rdparty")
BUILD_KEY = "harness-build-key"   # in the build folder: the compiled inputs it holds
JOURNAL_FORMAT = 1
MAX_SUSPECTS = 4    # suspects tried before the full search (each costs two checks)
# A word of a failure worth searching the history for: an identifier with an underscore
# or a dot (grid_sample, relax.nn.conv2d), or a CamelCase name (ConvertLayout).
_WORD = re.compile(r"\b(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+\.[A-Za-z0-9_.]+|[A-Z][a-z]+[A-Z]\w+)\b")


def resolve(source: str, ref: str) -> str:
    """A ref of the checkout (tag, branch, hash) as a full commit hash (tags win)."""
    for candidate in (f"refs/tags/{ref}", ref):
        proc = subprocess.run(["git", "-C", source, "rev-parse", "--verify", "--quiet",
                               candidate + "^{commit}"], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.strip()
    raise BadInput(f"{ref!r} is not a commit, tag or branch of {source}; "
                   "`git -C SOURCE log --oneline` lists them")


def is_ancestor(source: str, ancestor: str, commit: str) -> bool:
    """Whether `ancestor` is in `commit`'s history (False too when git knows neither)."""
    return subprocess.run(["git", "-C", source, "merge-base", "--is-ancestor", ancestor,
                           commit], capture_output=True).returncode == 0


def title(source: str, commit: str) -> str:
    return source_checkout.git(source, "log", "-1", "--format=%s", commit)


def range_of(source: str, old: str, new: str) -> tuple[str, list[str]]:
    """(the old end, the first-parent commits after it up to `new`, oldest first). An old
    end off the new end's history (a release branch) is replaced by their merge base,
    as git bisect tests it first."""
    base = source_checkout.git(source, "merge-base", old, new)
    if not base:
        raise BadInput(f"{old[:10]} and {new[:10]} share no history")
    commits = source_checkout.git(source, "rev-list", "--first-parent", "--reverse",
                                  f"{base}..{new}").split()
    if not commits:
        raise BadInput(f"{new[:10]} is not after {old[:10]}: nothing to bisect")
    return base, commits


def compiled_key(source: str, commit: str) -> str:
    """What a build of `commit` depends on: the git trees of its compiled inputs."""
    trees = []
    for path in COMPILED_INPUTS:
        proc = subprocess.run(["git", "-C", source, "rev-parse", "--verify", "--quiet",
                               f"{commit}:{path}"], capture_output=True, text=True)
        trees.append(proc.stdout.strip() or "-")
    return hashlib.sha256(" ".join(trees).encode()).hexdigest()[:20]


def keywords(pattern: Pattern | None, extra: list[str]) -> list[str]:
    """Words of the failure to look for in the history: the user's, then the pass, then
    identifiers of the message (masked parts are not words)."""
    words = list(extra)
    if pattern is not None:
        pass_name = pattern.pass_name
        if pass_name and not any(ch in pass_name for ch in "*?[-"):
            words.append(pass_name.rsplit(".", 1)[-1])
        words += _WORD.findall(pattern.message.replace("name?", ""))
    return list(dict.fromkeys(word for word in words if len(word) > 3))


def suspects(source: str, base: str, commits: list[str], words: list[str]) -> list[str]:
    """Commits in range whose diff adds or removes a line holding one of `words`
    (`git log -G`), those naming more words first, then newest first."""
    in_range, score = set(commits), {}
    for word in words:
        found = source_checkout.git(source, "log", "--first-parent", "--format=%H",
                                    f"-G{re.escape(word)}", f"{base}..{commits[-1]}", "--",
                                    "python", "src", "include").split()
        for commit in found:
            if commit in in_range:
                score[commit] = score.get(commit, 0) + 1
    order = {commit: index for index, commit in enumerate(commits)}
    return sorted(score, key=lambda commit: (-score[commit], -order[commit]))


# ---- one commit: build when needed, check ------------------------------------------

@dataclasses.dataclass
class BuildStats:
    seconds: float = 0.0
    recompiled: int = 0      # ninja steps run (0: the build folder was up to date)
    cache_hits: int = 0
    cache_misses: int = 0
    reused: bool = False     # the compiled inputs were those the folder held: no build

    def text(self) -> str:
        if self.reused:
            return "build reused (same compiled inputs)"
        cache = f", ccache {self.cache_hits} hits / {self.cache_misses} misses" \
            if self.cache_hits or self.cache_misses else ""
        return f"build {self.seconds:.0f} s, {self.recompiled} steps recompiled{cache}"


def ccache_counts() -> tuple[int, int]:
    """(hits, misses) so far, from `ccache --print-stats` (0, 0 without ccache)."""
    try:
        out = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0, 0
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)

    def count(*names):
        return sum(int(stats.get(name, "0")) for name in names)
    return (count("direct_cache_hit", "preprocessed_cache_hit"),
            count("cache_miss"))


class CommitProbe:
    """Checks out a commit, builds it if its compiled inputs differ from the build
    folder's and no stored build has them (`store`: versions.build_store), and runs the
    check against exactly that build: a bisect.Step.

    The check is `harness check CASE` (judged by the signatures it shows), or with
    `script` a standalone reproducer run with the build's python (exit 1 reproduces,
    0 does not, anything else cannot run here: skip), or with `test` one test of the
    checkout's own suite under the guard (judged by the signatures of its findings)."""

    def __init__(self, source: str, build_dir: str, case: str, check_args: list[str],
                 jobs: int, ccache: bool, extra_packages: tuple[str, ...], timeout: float,
                 log: Callable[[str], None], store: str | None = None,
                 script: str | None = None, test: str | None = None):
        self.source, self.build_dir, self.case = source, build_dir, case
        self.check_args, self.jobs, self.ccache = check_args, jobs, ccache
        self.extra_packages, self.timeout, self.log = extra_packages, timeout, log
        self.store, self.script, self.test = store, script, test
        self.build_log_tail = ""   # the last build's failing lines, for a page

    def __call__(self, commit: str) -> bisect.Step:
        started = time.monotonic()
        source_checkout.git(self.source, "checkout", "--quiet", "--detach", commit)
        stats, failure, built_in = self.build(commit)
        if failure:
            return self._step(commit, EXIT_CANNOT_TEST, started, failure, stats)
        try:
            python = self.python()
        except BadInput as exc:
            return self._step(commit, EXIT_CANNOT_TEST, started,
                              f"its tvm-ffi package does not build: {exc}", stats)
        return self._check(commit, python, built_in, started, stats)

    def python(self) -> str:
        """The checked-out commit's own tvm-ffi package's environment (cached per commit)."""
        return envs.python_of(source_build.ffi_environment(
            os.path.join(self.source, source_checkout.FFI_DIR), self.extra_packages))

    def build(self, commit: str) -> tuple[BuildStats, str, str]:
        """(what the build cost, why it failed or "", the folder whose lib/ holds it)."""
        key = compiled_key(self.source, commit)
        stored = build_store.lookup(self.store, key)
        marker = os.path.join(self.build_dir, BUILD_KEY)
        source_checkout.update_submodules(self.source, source_checkout.TVM_SUBMODULES,
                                          source_checkout.FFI_SUBMODULES)
        if stored:
            return BuildStats(reused=True), "", stored
        if os.path.exists(marker):
            with open(marker) as handle:
                if handle.read().strip() == key:
                    return BuildStats(reused=True), "", self.build_dir
        tools = (source_build.find_cmake(), source_build.find_ninja(),
                 source_build.find_llvm_config())
        source_build.configure(self.source, self.build_dir, *tools, self.ccache)
        hits, misses = ccache_counts()
        built_at = time.monotonic()
        if os.path.exists(marker):
            os.remove(marker)   # a build cut short leaves no key: the next step rebuilds
        ok, steps, self.build_log_tail = source_build.build(self.build_dir, tools[1], self.jobs)
        after = ccache_counts()
        stats = BuildStats(round(time.monotonic() - built_at, 1), steps,
                           after[0] - hits, after[1] - misses)
        if not ok:
            return stats, "it does not compile", self.build_dir
        with open(marker, "w") as handle:
            handle.write(key)
        if self.store:
            build_store.keep(self.store, key, self.build_dir, commit, title(self.source, commit))
        return stats, "", self.build_dir

    def _check(self, commit: str, python: str, built_in: str, started: float,
               stats: BuildStats) -> bisect.Step:
        env = source_build.checkout_env(self.source, built_in, commit)
        if self.test:
            return self._run_test(commit, python, env, started, stats)
        if self.script:
            return self._run_script(commit, python, env, started, stats)
        argv = [python, "-m", "harness", "check", self.case, "--quiet", "--json",
                "--ignore-known", *self.check_args]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                                  timeout=self.timeout, cwd=paths.REPO_ROOT)
        except subprocess.TimeoutExpired:
            return self._step(commit, 1, started, "the check timed out", stats)
        summary, signatures, reached = bisect.read_check(proc.stdout)
        code = proc.returncode
        if code == 2:   # the check cannot run on this commit (API drift): skip, not bad
            reason = (proc.stderr.strip().splitlines() or ["?"])[-1]
            return self._step(commit, EXIT_CANNOT_TEST, started,
                              f"the check cannot run on this commit: {reason}", stats)
        if code not in (0, 1, EXIT_CANNOT_TEST):
            summary = (proc.stderr.strip().splitlines() or [summary])[-1]
        return self._step(commit, code, started, summary, stats, signatures, reached)

    def _run_test(self, commit, python, env, started, stats) -> bisect.Step:
        found = suite_test.signatures(python, env, self.source, self.test, self.timeout)
        if found is None:
            return self._step(commit, EXIT_CANNOT_TEST, started,
                              f"{self.test} cannot run under the guard here", stats)
        return self._step(commit, 1 if found else 0, started,
                          "; ".join(found) or f"{self.test}: no finding", stats, found)

    def _run_script(self, commit, python, env, started, stats) -> bisect.Step:
        try:
            proc = subprocess.run([python, self.script], capture_output=True, text=True,
                                  env=env, timeout=self.timeout,
                                  cwd=os.path.dirname(os.path.abspath(self.script)))
        except subprocess.TimeoutExpired:
            return self._step(commit, EXIT_CANNOT_TEST, started, "the reproducer timed out",
                              stats)
        said = (proc.stdout.strip().splitlines() or proc.stderr.strip().splitlines()
                or [""])[-1]
        code = proc.returncode if proc.returncode in (0, 1) else EXIT_CANNOT_TEST
        what = {0: "does not reproduce", 1: "reproduces"}.get(code, "cannot run here")
        return self._step(commit, code, started, f"{what}: {said}", stats)

    def _step(self, commit, code, started, summary, stats, signatures=(),
              reached=None) -> bisect.Step:
        return bisect.Step(commit, code, round(time.monotonic() - started, 1),
                           not stats.reused, summary[:300], list(signatures),
                           dataclasses.asdict(stats), reached)


# ---- the journal -------------------------------------------------------------------

def journal_path(source: str, case: str, old: str, new: str, check_args: list[str],
                 fixed: bool, match: str | None) -> str:
    ident = json.dumps([JOURNAL_FORMAT, os.path.realpath(source), case, old, new, check_args,
                        fixed, match])
    folder = os.path.join(paths.cache_dir(), "commit-bisect")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, hashlib.sha256(ident.encode()).hexdigest()[:16] + ".json")


# ---- deciding ----------------------------------------------------------------------

@dataclasses.dataclass
class Terms:
    """Old and new as bisect.search's good and bad: a regression's old state is good (no
    failure), a fix's is the failure itself (`fixed`)."""
    judge: bisect.Judge
    fixed: bool = False

    def state(self, step: bisect.Step) -> str:
        """old | new | skip | masked (bisect.StepBroken when the step says nothing)."""
        verdict = bisect.decided(self.judge, step)
        if verdict in (bisect.SKIP, bisect.MASKED):
            return verdict
        failing = verdict == bisect.BAD
        return "new" if failing != self.fixed else "old"

    def as_search(self, step: bisect.Step) -> str:
        return {"old": bisect.GOOD, "new": bisect.BAD, "skip": bisect.SKIP,
                "masked": bisect.MASKED}[self.state(step)]

    def describe(self) -> str:
        what = self.judge.describe()
        return f"new means no longer {what}" if self.fixed else f"new means {what}"


def the_failure(old_end: bisect.Step, new_end: bisect.Step, fixed: bool) -> Pattern | None:
    """The failure the search follows: the one the failing end shows and the other does
    not (the new end's for a regression, the old end's for a fix)."""
    return bisect.the_new_failure(new_end, old_end) if fixed else \
        bisect.the_new_failure(old_end, new_end)


def estimate(steps_left: int, seconds: list[float]) -> str:
    if not seconds:
        return f"about {steps_left} steps left (a first build of TVM takes 50-95 min here)"
    per_step = sorted(seconds)[len(seconds) // 2]
    return f"about {steps_left} steps left, ~{steps_left * per_step / 60:.0f} min " \
        f"at the measured {per_step / 60:.1f} min a step"


def steps_left(low: int, high: int) -> int:
    return max(0, math.ceil(math.log2(max(1, high - low))))


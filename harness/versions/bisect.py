"""Bisect which release of a package broke an invariant: `python -m harness bisect`.

Candidates come from the package registry through pip's own index query. Each
step builds (or reuses) a cached environment with that exact version set and runs
the step command there (by default `python -m harness check CASE --json`). What
a step showed (its exit code and the signature of every violation) is written to a
state file at once, so an interrupted bisect resumes where it stopped; whether it
is good or bad is decided from that record:

  * by default a step is bad when it shows *the failure in front of you*: the
    failure the bad end shows and the good end does not (the most severe one), by
    its signature (harness.signature). A step that shows other failures (a known
    bug elsewhere in the pipeline) is good, and the table says what it showed;
  * `--match SIG`: bad when it shows a failure matching SIG;
  * `--any`: bad on any violation, registered ones included (exit 1 of the check);
    also what a `--step-command` of your own is judged by, from its exit code.
A step judged by a signature that does not show it, and whose run ended in another
failure (error, crash, timeout) before the point where it would show (its pass never ran;
for one naming no pass, its stage never ended), is *masked*: neither good nor bad, said
in the table and searched around like a skip (git bisect skip). `--fixed` turns the
terms round (the old end's failure, old = showing it: git's old/new).
Exit 125 of a step is "cannot test here" (skipped around); any other code means
the step itself is broken and the bisect stops rather than blame a release.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from typing import Callable

from packaging.version import InvalidVersion, Version

from harness import paths
from harness.paths import REPO_ROOT
from harness.signature import NO_PASS, Pattern, part_matches, split
from harness.verdict import EXIT_CANNOT_TEST, VERDICTS, BadInput, Outcome
from harness.versions import envs

GOOD, BAD, SKIP, BROKEN, MASKED = "good", "bad", "skip", "broken", "masked"
# A failure that ends a check's run where it happened: nothing after it ran.
ENDS_THE_RUN = (Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT)
STATE_FORMAT = 3   # 3: each release with its companion tvm-ffi; another format is not read


def list_versions(package: str, pre: bool = False) -> list[str]:
    """Every version the registry serves, oldest first (pip index versions; PIP_* env applies)."""
    argv = [sys.executable, "-m", "pip", "index", "versions", package,
            "--disable-pip-version-check", *(["--pre"] if pre else [])]
    proc = subprocess.run(argv, capture_output=True, text=True)
    match = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if proc.returncode != 0 or not match:
        last = (proc.stderr.strip().splitlines() or ["no versions listed"])[-1]
        raise BadInput(f"cannot list versions of {package}: {last}")
    return sorted((v.strip() for v in match.group(1).split(",")), key=Version)


def between(versions: list[str], good: str, bad: str) -> list[str]:
    try:
        lo, hi = Version(good), Version(bad)
    except InvalidVersion as exc:
        raise BadInput(str(exc)) from None
    if lo >= hi:
        raise BadInput(f"--good {good} must be older than --bad {bad}")
    picked = [v for v in versions if lo <= Version(v) <= hi]
    for end in (good, bad):
        if end not in picked:
            raise BadInput(f"{end} is not a released version (known: {', '.join(versions[-8:])})")
    return picked


class StepBroken(Exception):
    """A step exited with a code that is neither good, bad nor skip."""


@dataclasses.dataclass
class Step:
    """What one step showed: its exit code and the signatures of its violations."""
    version: str
    code: int
    seconds: float
    built_env: bool
    summary: str = ""
    signatures: list[str] = dataclasses.field(default_factory=list)
    build: dict = dataclasses.field(default_factory=dict)   # a commit's build (commit_bisect)
    # where its run got: [STAGE, "-"] for each stage that ran, [STAGE, PASS] for each pass
    # run (`check --json`'s stages and passes); None: not recorded (never masked)
    reached: list | None = None


@dataclasses.dataclass
class Judge:
    """Good or bad, from what a step showed: by signature (`pattern`), or by exit code."""
    pattern: Pattern | None = None

    def __call__(self, step: Step) -> str:
        if step.code == EXIT_CANNOT_TEST:
            return SKIP
        if step.code not in (0, 1):
            return BROKEN
        if self.pattern is None:
            return BAD if step.code == 1 else GOOD
        if step.code == 1 and not step.signatures:
            return BROKEN   # a failure without a result (the step timed out): nothing to match
        if any(self.pattern.matches(text) for text in step.signatures):
            return BAD
        return MASKED if stopped_before(step, self.pattern) else GOOD

    def describe(self) -> str:
        return f"showing {self.pattern}" if self.pattern else "any violation (exit 1)"


def stopped_before(step: Step, pattern: Pattern) -> bool:
    """Whether `step`'s run ended in another failure before the point where `pattern`
    would show: the pattern's pass never ran in its stage or, for a pattern naming no
    pass, its stage never ran or the run ended in it (what came first there is unknown)."""
    if step.reached is None:
        return False
    ended = [parts for parts in map(split, step.signatures) if parts[0] in ENDS_THE_RUN]
    if not ended:
        return False
    stage = pattern.stage.rsplit("/", 1)[0]   # its phase (checks, answer) comes after
    if pattern.pass_name not in (NO_PASS, "*"):
        return not any(part_matches(name, stage) and part_matches(pass_name, pattern.pass_name)
                       for name, pass_name in step.reached if pass_name != NO_PASS)
    ran = any(part_matches(name, stage) for name, pass_name in step.reached
              if pass_name == NO_PASS)
    return not ran or any(len(parts) > 1 and part_matches(parts[1].rsplit("/", 1)[0], stage)
                          for parts in ended)


def the_new_failure(good: Step, bad: Step) -> Pattern | None:
    """The failure the bad end shows and the good end does not, the most severe first
    (by its kind in the outcome table; the first shown among equals)."""
    new = [Pattern.parse(text) for text in bad.signatures if text not in good.signatures]
    return min(new, key=lambda pattern: VERDICTS.index(Outcome.of(pattern.kind)), default=None)


class State:
    """What each step showed, on disk, keyed by everything that defines the bisect."""

    def __init__(self, path: str):
        self.path = path
        self.steps: dict[str, Step] = {}
        if os.path.exists(path):
            with open(path) as handle:
                self.steps = {k: Step(**v) for k, v in json.load(handle)["steps"].items()}

    def record(self, step: Step) -> None:
        self.steps[step.version] = step
        tmp = self.path + ".tmp"
        with open(tmp, "w") as handle:
            json.dump({"steps": {k: dataclasses.asdict(v) for k, v in self.steps.items()}},
                      handle, indent=1)
        os.replace(tmp, self.path)   # never a half-written state file


def observe(version: str, probe: Callable[[str], Step], state: State,
            log: Callable[[str], None]) -> Step:
    """The step for `version`, probed now or read from the state file."""
    if version in state.steps:
        step = state.steps[version]
        log(f"  {version}: exit {step.code} (decided earlier) - {step.summary}")
        return step
    step = probe(version)
    log(f"  {version}: exit {step.code} - {step.summary}")
    # A broken step (harness bug, index unreachable) says nothing about the release:
    # never stored, so a rerun after the fix probes it again.
    if Judge()(step) == BROKEN:
        raise StepBroken(step)
    state.record(step)
    return step


def search(candidates: list[str], decide: Callable[[str], str],
           log: Callable[[str], None] = lambda s: None) -> tuple[str, list[str]]:
    """First bad candidate, given candidates[0] good and candidates[-1] bad: (the first bad,
    the versions that could not be told apart because of skips)."""
    lo, hi = 0, len(candidates) - 1
    skipped: set[int] = set()
    while True:
        open_ = [i for i in range(lo + 1, hi) if i not in skipped]
        if not open_:
            return candidates[hi], [candidates[i] for i in sorted(skipped) if lo < i < hi]
        mid = open_[len(open_) // 2]
        log(f"bisect: {hi - lo - 1} candidates left between {candidates[lo]} and {candidates[hi]}")
        result = decide(candidates[mid])
        if result == GOOD:
            lo = mid
        elif result == BAD:
            hi = mid
        else:
            skipped.add(mid)


def default_step_command(case: str, options_args: list[str]) -> list[str]:
    # --ignore-known: the bisect decides what counts, from every violation's signature
    return ["{python}", "-m", "harness", "check", case, "--quiet", "--json", "--ignore-known",
            *options_args]


def read_check(stdout: str) -> tuple[str, list[str], list | None]:
    """(summary, signatures, reached: Step.reached) of a step's output: `check --json`,
    else its first line."""
    try:
        data = json.loads(stdout)
        signatures = [v["signature"] for v in data["violations"]]
        reached = None if "stages" not in data else list(map(list, dict.fromkeys(
            [(s["name"], NO_PASS) for s in data["stages"]]
            + [(p["stage"], p["name"]) for p in data.get("passes", [])])))
        return data["verdict"] + (f": {signatures[0]}" if signatures else ""), signatures, \
            reached
    except (ValueError, KeyError, TypeError):
        return next((line.strip() for line in stdout.splitlines() if line.strip()), ""), [], \
            None


def make_probe(package: str, pins: dict[str, str], command: list[str], timeout: float,
               extra_packages: tuple[str, ...], log) -> Callable[[str], Step]:
    def probe(version: str) -> Step:
        started = time.monotonic()
        # each release with the tvm-ffi it needs (setup.cfg's extras), unless --with says
        packages = {**envs.companion_pins(package, version), **pins, package.lower(): version}
        built = envs.lookup(packages, extra_packages) is None
        try:
            path = envs.ensure(packages, log=log, extra=extra_packages)
        except envs.TransientFailure as exc:   # the index, not the release: stop, keep nothing
            return Step(version, -1, round(time.monotonic() - started, 1), built, str(exc))
        except BadInput as exc:   # pip cannot install this set: untestable, not bad
            return Step(version, EXIT_CANNOT_TEST, round(time.monotonic() - started, 1),
                        built, str(exc))
        envs.touch(path)
        argv = [part.replace("{python}", envs.python_of(path)) for part in command]
        env = dict(os.environ, PYTHONPATH=REPO_ROOT)
        stderr = ""
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  cwd=REPO_ROOT, env=env)
            code, out, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired:
            code, out = 1, "step timed out"
        summary, signatures, reached = read_check(out)
        if code not in (0, 1, EXIT_CANNOT_TEST):
            summary = (stderr.strip().splitlines() or [summary])[-1]
        return Step(version, code, round(time.monotonic() - started, 1), built, summary[:300],
                    signatures, reached=reached)
    return probe


def state_path(package, good, bad, pins, command) -> str:
    ident = json.dumps([STATE_FORMAT, package, good, bad, sorted(pins.items()), command])
    folder = os.path.join(paths.cache_dir(), "bisect")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, hashlib.sha256(ident.encode()).hexdigest()[:16] + ".json")


def table(candidates: list[str], state: State, judge: Judge, fixed: bool = False) -> list[str]:
    """One line per decided step, in version order: its result (`fixed`: old, still
    showing the failure, or new) and what it showed."""
    lines = []
    for version in candidates:
        step = state.steps.get(version)
        if step is None:
            continue
        shown = "; ".join(("* " if judge.pattern and judge.pattern.matches(text) else "")
                          + text for text in step.signatures) or step.summary or "nothing"
        result = judge(step)
        result = {GOOD: "new", BAD: "old"}.get(result, result) if fixed else result
        lines.append(f"  {version:<16} {result:<6} exit {step.code:<3} {shown}")
    return lines


def decided(judge: Judge, step: Step) -> str:
    result = judge(step)
    if result == BROKEN:
        raise StepBroken(step)
    return result

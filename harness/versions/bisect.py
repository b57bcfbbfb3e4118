"""Bisect which release of a package broke an invariant: `python -m harness bisect`.

Candidates come from the package registry through pip's own index query. Each
step builds (or reuses) a cached environment with that exact version set, runs
the step command there (by default `python -m harness check CASE` in the
isolated runner) and classifies the exit code like `git bisect run`: 0 good,
125 skip, anything else bad. Decided steps are written to a state file at once,
so an interrupted bisect resumes where it stopped.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from typing import Callable

from packaging.version import InvalidVersion, Version

from harness.versions import envs
from harness import REPO_ROOT
from harness.verdict import EXIT_CANNOT_TEST, BadInput

GOOD, BAD, SKIP, BROKEN = "good", "bad", "skip", "broken"


def classify(code: int) -> str:
    """0 good, 125 skip, 1 bad (a violation, crash included); anything else means the
    step itself is broken (usage error, harness failure): never blame the release."""
    return {0: GOOD, EXIT_CANNOT_TEST: SKIP, 1: BAD}.get(code, BROKEN)


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
        raise BadInput(str(exc))
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
    version: str
    result: str          # good | bad | skip
    code: int
    seconds: float
    built_env: bool
    summary: str = ""


class State:
    """Decided steps on disk, keyed by everything that defines the bisect."""

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


def search(candidates: list[str], probe: Callable[[str], Step], state: State,
           log: Callable[[str], None] = lambda s: None) -> tuple[str | None, list[str]]:
    """First bad candidate, assuming candidates[0] good and candidates[-1] bad.

    Returns (first bad or None if the ends are not as claimed, the versions that
    could not be told apart because of skips).
    """
    def decide(version: str) -> str:
        cached = version in state.steps
        if cached:
            step = state.steps[version]
        else:
            step = probe(version)
            # A broken step (harness bug, index unreachable) says nothing about the
            # release: never stored, so a rerun after the fix probes it again.
            if step.result != BROKEN:
                state.record(step)
        log(f"  {version}: {step.result}{' (decided earlier)' if cached else ''}"
            f"{' - ' + step.summary if step.summary else ''}")
        if step.result == BROKEN:
            raise StepBroken(step)
        return step.result

    ends = decide(candidates[0]), decide(candidates[-1])
    if ends != (GOOD, BAD):
        return None, []
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
    # A bisect asks when a violation began: a registered known issue counts as bad.
    return ["{python}", "-m", "harness", "check", case, "--quiet", "--json", "--ignore-known",
            *options_args]


def summarize(stdout: str) -> str:
    """The verdict and the violation that marked a step (JSON from `check`), else line one."""
    try:
        data = json.loads(stdout)
        first = data["violations"][0] if data["violations"] else None
        return data["verdict"] + (f": {first['stage']}: {first['detail']}" if first else "")
    except (ValueError, KeyError, TypeError, IndexError):
        return next((line.strip() for line in stdout.splitlines() if line.strip()), "")


def make_probe(package: str, pins: dict[str, str], command: list[str], timeout: float,
               extra_packages: tuple[str, ...], log) -> Callable[[str], Step]:
    def probe(version: str) -> Step:
        started = time.monotonic()
        packages = {**pins, package.lower(): version}
        built = envs.lookup(packages) is None
        try:
            path = envs.ensure(packages, log=log, extra=extra_packages)
        except envs.TransientFailure as exc:   # the index, not the release: stop, keep nothing
            return Step(version, BROKEN, EXIT_CANNOT_TEST, round(time.monotonic() - started, 1),
                        built, str(exc))
        except BadInput as exc:   # pip cannot install this set: untestable, not bad
            return Step(version, SKIP, EXIT_CANNOT_TEST, round(time.monotonic() - started, 1),
                        built, str(exc))
        envs.touch(path)
        argv = [part.replace("{python}", envs.python_of(path)) for part in command]
        env = dict(os.environ, PYTHONPATH=REPO_ROOT)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  cwd=REPO_ROOT, env=env)
            code, out = proc.returncode, proc.stdout
        except subprocess.TimeoutExpired:
            code, out = 1, "step timed out"
        summary = summarize(out)
        if classify(code) == BROKEN:
            summary = (proc.stderr.strip().splitlines() or [summary])[-1] if code != 1 else summary
        return Step(version, classify(code), code, round(time.monotonic() - started, 1),
                    built, summary[:300])
    return probe


def state_path(package, good, bad, pins, command) -> str:
    ident = json.dumps([package, good, bad, sorted(pins.items()), command])
    folder = os.path.join(envs.cache_dir(), "bisect")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, hashlib.sha256(ident.encode()).hexdigest()[:16] + ".json")


def cmd_bisect(args) -> int:
    log = (lambda text: None) if args.quiet else \
        (lambda text: print(text, file=sys.stderr, flush=True))
    pins = envs.parse_requirements(args.with_ or [])
    candidates = between(list_versions(args.package, args.pre), args.good, args.bad)
    options = ["--layout", args.layout] if args.layout else []
    command = shlex.split(args.step_command) if args.step_command else \
        default_step_command(args.case, options + ["--timeout", str(args.timeout)])
    extra = () if args.bare_env else envs.BASE_PACKAGES
    state = State(state_path(args.package, args.good, args.bad, pins, command))
    log(f"bisect: {args.package} {len(candidates)} releases {candidates[0]} .. {candidates[-1]}"
        + (f" with {' '.join(args.with_)}" if args.with_ else "")
        + (f"; {len(state.steps)} steps already decided ({state.path})" if state.steps else ""))
    started = time.monotonic()
    probe = make_probe(args.package, pins, command, args.timeout + 600, extra, log)
    try:
        culprit, skipped = search(candidates, probe, state, log)
    except StepBroken as exc:
        step = exc.args[0]
        print(f"bisect: the step for {step.version} is broken (exit {step.code}): {step.summary}; "
              f"fix it and run again (decided steps are kept)")
        return 2
    wall = time.monotonic() - started
    if culprit is None:
        first, last = state.steps[candidates[0]], state.steps[candidates[-1]]
        print(f"bisect: the ends are not as claimed: {candidates[0]} is {first.result} "
              f"({first.summary}), {candidates[-1]} is {last.result} ({last.summary})")
        return 2
    step = state.steps[culprit]
    print(f"first bad: {args.package}=={culprit} ({step.summary or 'exit ' + str(step.code)})")
    if skipped:
        print(f"could not test (skipped): {', '.join(skipped)}; the first bad is among them or {culprit}")
    print(f"bisect: {len(state.steps)} steps, {wall:.0f} s this run")
    return 0


def register(sub) -> None:
    p = sub.add_parser("bisect", help="binary-search the releases of a package for the first bad one")
    p.add_argument("case", help="catalog case or ONNX path to check at each step")
    p.add_argument("--package", default="apache-tvm")
    p.add_argument("--good", required=True, help="a release where the check passes")
    p.add_argument("--bad", required=True, help="a later release where it does not")
    p.add_argument("--with", dest="with_", action="append", metavar="PKG==VER",
                   help="pin another package in every step (repeatable)")
    p.add_argument("--pre", action="store_true", help="include pre-releases")
    p.add_argument("--layout", choices=["nchw", "nhwc"], default=None)
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per check")
    p.add_argument("--step-command", default=None,
                   help="command run in each environment instead of `harness check`; "
                        "{python} is the environment's python")
    p.add_argument("--bare-env", action="store_true",
                   help="install only the pinned packages (a --step-command that needs no harness)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_bisect)

"""Run a check in a child process that a TVM crash or hang cannot take down.

A negative return code is a signal (SIGSEGV from tvm-ffi's ToJSONGraph, an abort):
that becomes a `crash` verdict carrying the signal and the tail of the native
stack that tvm-ffi and faulthandler print. Past the timeout the whole process
group is killed and the verdict is `timeout`. The stages that finished before
either are kept, read back from the child's event log.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable

from harness import paths
from harness.catalog import cases as catalog
from harness.options import Options
from harness.paths import REPO_ROOT
from harness.process import death, warm
from harness.process.child import CRASH_INPUT
from harness.process.clock import Clock
from harness.process.death import describe_death, native_tail, out_of_memory, signal_of
from harness.process.work import Work
from harness.result import PassRecord, Result, StageRecord
from harness.tvmapi import loading
from harness.verdict import BadInput, Outcome, Phase, Violation

DEFAULT_TIMEOUT = 900.0


class Cancelled(KeyboardInterrupt):
    """The run was interrupted (cancel_all): the check has no result, not a crash."""


_cancelled = threading.Event()
_live: set = set()
_live_lock = threading.Lock()


def cancel_all() -> None:
    """Ctrl-C: refuse new checks (every later run_isolated in this process raises Cancelled:
    the process is on its way out), kill every running child and the warm servers, so
    nothing is left behind."""
    _cancelled.set()
    kill_running()
    warm.stop_all()


def kill_running() -> None:
    """Kill the children of the checks running now (they return no result: Cancelled)."""
    with _live_lock:
        children = list(_live)
    for child in children:
        child.kill_group()


def _raise_if_cancelled() -> None:
    if _cancelled.is_set():
        raise Cancelled()


class _Events:
    """Reads the child's JSON-lines event log incrementally."""

    def __init__(self, path: str, on_event: Callable[[dict], None] | None):
        self.path, self.offset, self.events = path, 0, []
        self.on_event = on_event

    def poll(self) -> None:
        try:
            with open(self.path) as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return
        complete, _, _ = chunk.rpartition("\n")
        if not complete:
            return
        self.offset += len(complete) + 1
        for line in complete.splitlines():
            event = json.loads(line)
            self.events.append(event)
            if self.on_event:
                self.on_event(event)

    def find(self, kind: str) -> dict | None:
        return next((e for e in reversed(self.events) if e["event"] == kind), None)

    def running(self) -> tuple[str, str | None, int | None, str, str | None]:
        """(stage, pass, index, phase, copier) that was running when the log stopped."""
        stages, passes, after = [], [], None   # after: the phase-start of work after a stage
        for event in self.events:
            kind = event["event"]
            if kind == "stage-start":
                stages.append(event["name"])
                passes, after = [], None
            elif kind == "stage-end" and stages and stages[-1] == event["name"]:
                stages.pop()
                passes = []
            elif kind == "pass-start":
                passes.append((event["name"], event["index"]))
            elif kind == "pass-end" and passes:
                passes.pop()
            elif kind == "phase-start":
                after = event
            elif kind == "phase-end":
                after = None
        if stages:
            name, index = passes[-1] if passes else (None, None)
            return stages[-1], name, index, Phase.STAGE, None
        if after is not None:
            return after["stage"], None, None, after["phase"], after.get("copier")
        # Between stages the harness's own checks run (fingerprints, round trips).
        started = [e["name"] for e in self.events if e["event"] == "stage-start"]
        if not started:
            return "setup", None, None, Phase.PROCESS, None
        return started[-1], None, None, Phase.CHECKS, None

    def partial_result(self, case: str, options: Options) -> Result:
        start = self.find("start") or {}
        result = Result(case=case, options=options.to_json(),
                        tvm_version=start.get("tvm_version"),
                        tvm_ffi_version=start.get("tvm_ffi_version"))
        for event in self.events:
            fields = {k: v for k, v in event.items() if k != "event"}
            if event["event"] == "stage-end":
                result.stages.append(StageRecord(**fields))
            elif event["event"] == "pass-end":
                result.passes.append(PassRecord(**fields))
            elif event["event"] == "violation":
                result.add(Violation.from_json(fields))
        return result


class _ColdChild:
    """A fresh interpreter per check (another python, or HARNESS_WARM=0)."""

    def __init__(self, python, spec_path, events_path, stderr_path, env):
        self.stderr = open(stderr_path, "w")
        self.proc = subprocess.Popen(
            [python, "-m", "harness.process.child", spec_path, events_path],
            stdout=subprocess.DEVNULL, stderr=self.stderr, env=env, start_new_session=True)
        self.peak_rss_kib: int | None = None

    def poll(self):
        self._reap(os.WNOHANG)
        return self.proc.returncode

    @property
    def returncode(self):
        return self.proc.returncode

    def wait(self):
        self._reap(0)
        self.stderr.close()
        return self.proc.returncode

    def _reap(self, flags: int) -> None:
        """wait4, not Popen's waitpid: the child's peak memory comes with its status."""
        if self.proc.returncode is None:
            pid, status, usage = os.wait4(self.proc.pid, flags)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.peak_rss_kib = usage.ru_maxrss

    def kill_group(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def kill(self):
        self.kill_group()
        self.wait()


def _start(python, spec_path, events_path, stderr_path, env):
    if warm.enabled():
        server = warm.server_for(python, env)
        child = server.submit(spec_path, events_path, stderr_path) if server else None
        if child is not None:
            return child
    _raise_if_cancelled()   # the warm server went because of a Ctrl-C: start nothing new
    return _ColdChild(python, spec_path, events_path, stderr_path, env)


def _supervise(child, timeout: float, interval: float,
               on_poll: Callable[[], None] | None = None) -> tuple[int, bool]:
    """(return code, timed out) of `child`, registered for cancel_all while it runs and
    polling `on_poll`; past `timeout` of the child's time (Clock) its process group is
    killed. Raises Cancelled after cancel_all() (a child it killed has no result, not a
    crash)."""
    with _live_lock:
        _live.add(child)
    clock = Clock(longest=max(1.0, 10 * interval))
    timed_out = False
    try:
        while child.poll() is None:
            if on_poll is not None:
                on_poll()
            _raise_if_cancelled()
            if clock.tick() > timeout:
                timed_out = True
                child.kill()
                break
            time.sleep(interval)
        returncode = child.wait()
        _raise_if_cancelled()
        return returncode, timed_out
    except BaseException:  # Ctrl-C in the parent must not leave a child behind
        child.kill()
        raise
    finally:
        with _live_lock:
            _live.discard(child)


def validate(case: str, options: Options, python: str | None = None) -> None:
    """Build `options`'s path in a child (the target, the stages, an injected pass) without
    running it: a bad value raises BadInput here, before a batch starts its work."""
    run_isolated(case, options, timeout=300, python=python, work=Work.validate())


def run_isolated(case: str, options: Options, timeout: float = DEFAULT_TIMEOUT,
                 python: str | None = None, on_event: Callable[[dict], None] | None = None,
                 env: dict | None = None, work: Work | None = None) -> Result:
    """Check `case` in a child; always returns a Result, whatever the child did.
    Raises BadInput for input the child refused, Cancelled after cancel_all().
    `work` (process.work) asks the child for something besides the check, or instead of
    it: only validate, write repro.py too (`Result.reproducer`), one half of a
    cross-release step, a reducer's task (`Result.task_output`)."""
    with tempfile.TemporaryDirectory(prefix="harness-") as tmp:
        spec_path = os.path.join(tmp, "spec.json")
        events_path = os.path.join(tmp, "events.jsonl")
        stderr_path = os.path.join(tmp, "stderr.txt")
        with open(spec_path, "w") as handle:
            json.dump({"case": case, "options": options.to_json(),
                       "work": work.to_json() if work else None}, handle)
        child_env = dict(os.environ if env is None else env)
        child_env.setdefault("PYTHONFAULTHANDLER", "1")
        # The child imports this very package, wherever the caller's python is.
        child_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (REPO_ROOT, child_env.get("PYTHONPATH")) if p)
        if catalog.needs_torch(case):   # a warm server of its own, torch imported once
            child_env[warm.PRELOAD_TORCH] = "1"
            child_env.pop(loading.WITHOUT_TORCH, None)
        else:                           # and the others' import TVM without it (3 s less)
            child_env.setdefault(loading.WITHOUT_TORCH, "1")
        events = _Events(events_path, on_event)
        _raise_if_cancelled()
        child = _start(python or sys.executable, spec_path, events_path, stderr_path,
                       child_env)
        returncode, timed_out = _supervise(child, timeout, 0.05, events.poll)
        events.poll()
        with open(stderr_path, errors="replace") as handle:
            stderr_text = handle.read()
        result = _interpret(case, options, returncode, timed_out, timeout, events, stderr_text,
                            child.peak_rss_kib)
        crash_input = os.path.join(tmp, CRASH_INPUT)
        if result.verdict in (Outcome.CRASH, Outcome.TIMEOUT) and os.path.exists(crash_input):
            result.crash_input = _keep(crash_input, case, result)
    return result


def _keep(path: str, case: str, result: Result) -> str:
    """Move the crashing pass's input out of the temporary folder before it goes."""
    folder = os.path.join(paths.cache_dir(), "crash-inputs")
    os.makedirs(folder, exist_ok=True)
    violation = result.violations[-1]
    name = f"{os.path.basename(case)}-{violation.stage}-{violation.pass_name or 'stage'}"
    target = os.path.join(folder, f"{name}-{int(time.time())}.json".replace(os.sep, "_"))
    shutil.move(path, target)
    return target


def _interpret(case, options, returncode, timed_out, timeout, events: _Events,
               stderr_text: str, peak_rss_kib: int | None = None) -> Result:
    bad = events.find("bad-input")
    if bad:
        raise BadInput(bad["message"])
    final = events.find("result")
    if final and not timed_out:
        result = Result.from_json(final["result"])
        result.stderr_tail = native_tail(stderr_text) if result.verdict != Outcome.PASS else ""
        return result
    result = events.partial_result(case, options)
    stage, pass_name, index, phase, copier = events.running()
    # Where the child was when it stopped: the violation's site, said as any violation's.
    site = Violation(Outcome.CRASH, stage, "(process)", "", pass_name, index, phase=phase,
                     copier=copier)
    where = "in " + site.where()
    result.stderr_tail = native_tail(stderr_text)
    if timed_out:
        result.add(dataclasses.replace(site, kind=Outcome.TIMEOUT,
                                       detail=f"no result after {timeout:g} s; killed {where}"))
    elif out_of_memory(returncode, peak_rss_kib):
        result.add(dataclasses.replace(
            site, kind=Outcome.UNSUPPORTED,
            detail=f"out of memory {where}: SIGKILL at {peak_rss_kib / 2**20:.1f} GiB "
                   f"resident of {death.memory_kib() / 2**20:.1f} GiB on this machine (the "
                   "kernel out-of-memory killer, not TVM); it needs a machine with more memory"))
    else:
        result.add(dataclasses.replace(site, detail=describe_death(returncode, stderr_text, where),
                                       signal=signal_of(returncode)))
    return result


class _Command(_ColdChild):
    """Any command in its own process group, killable by cancel_all (guard-suite's pytest)."""

    def __init__(self, argv, output_path, env, cwd):
        self.stderr = open(output_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.stderr, stderr=subprocess.STDOUT,
                                     env=env, cwd=cwd, start_new_session=True)


def run_command(argv: list[str], output_path: str, timeout: float, env: dict | None = None,
                cwd: str | None = None) -> tuple[int | None, bool]:
    """(return code, timed out) of `argv`, its output in `output_path`; past `timeout` its
    whole process group is killed (None). Raises Cancelled after cancel_all()."""
    _raise_if_cancelled()
    returncode, timed_out = _supervise(_Command(argv, output_path, env, cwd), timeout, 0.1)
    return (None if timed_out else returncode), timed_out

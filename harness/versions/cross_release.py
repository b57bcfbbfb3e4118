"""A case across two releases: saved in one cached environment, loaded in the next.

Each half runs in its own isolated child (runner.cross_release), with the python of its
release's environment; a folder carries the saved module, tasks and tuning log from one
to the other. The answer is one Result for the pair: the save's, when release A could not
save (its own failure, judged on A's stack), else the load's, judged on B's, with A's
stages in front (named `STAGE (A's version)`) so the time is the pair's.
"""
from __future__ import annotations

import tempfile

from harness.options import Options
from harness.process.isolate import DEFAULT_TIMEOUT, run_isolated
from harness.process.work import Work
from harness.result import Result, StageRecord
from harness.runner.cross_release import result_options
from harness.verdict import Outcome


def _half(case: str, options: Options, python: str, step: dict, timeout: float) -> Result:
    result = run_isolated(case, options, timeout=timeout, python=python,
                          work=Work.cross_release(step))
    # A child that died wrote no result: its partial one would say the check's path.
    result.options = {**result.options, **result_options(options)}
    return result


def save_in(case: str, options: Options, python: str, folder: str,
            timeout: float = DEFAULT_TIMEOUT) -> Result:
    """Release A (`python`): the case's module, tasks and tuning log into `folder`."""
    return _half(case, options, python, {"save": folder}, timeout)


def load_in(case: str, options: Options, python: str, folder: str,
            timeout: float = DEFAULT_TIMEOUT) -> Result:
    """Release B (`python`): what `folder` holds, against B's own import of the case."""
    return _half(case, options, python, {"load": folder}, timeout)


def run_pair(case: str, options: Options, python_a: str, python_b: str,
             timeout: float = DEFAULT_TIMEOUT) -> Result:
    """Save in A, load in B: one Result for the pair."""
    with tempfile.TemporaryDirectory(prefix="harness-cross-") as folder:
        saved = save_in(case, options, python_a, folder, timeout)
        if saved.verdict != Outcome.PASS:
            return saved
        loaded = load_in(case, options, python_b, folder, timeout)
    loaded.options["saved_by"] = {"tvm_version": saved.tvm_version,
                                  "tvm_ffi_version": saved.tvm_ffi_version}
    loaded.stages = [StageRecord(f"{stage.name} ({saved.tvm_version})", stage.seconds)
                     for stage in saved.stages] + loaded.stages
    return loaded

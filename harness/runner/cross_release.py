"""One case across two releases, a child in each: `save` in release A, `load` in release B.

`save` (A's environment) imports the case as `check` does, writes its module with
save_json, runs the extract path (bare: the per-release checks are the matrix's other
columns) and commits every task's workload to a MetaSchedule tuning log, as tuning
does. `load` (B's environment) imports the same case itself, loads A's module with
load_json and compares it with that import, runs the extract path over both and
compares the tasks, and looks its own tasks up in A's tuning log
(oracles.cross_release judges each). The folder between the two children holds
module.json, saved.json (A's versions and tasks) and tuning-log/.

Stages recorded: A's `import`, `save-json`, `extract`, `tuning-log`; B's `import` and
`cross-release` (everything after: the load, the comparison, both extract paths, the
tuning log), bracketed as phase copy of stage cross-release, so a signal while B reads
A's JSON is a crash at stage cross-release, copier json@A.
"""
from __future__ import annotations

import contextlib
import json
import os
import time

from harness import classify
from harness.catalog import cases as catalog
from harness.catalog.known_issues import CROSS_RELEASE_PATH
from harness.classify import HarnessBug
from harness.options import Options
from harness.oracles import cross_release as oracle
from harness.oracles.recorder import Emit, Recorder
from harness.result import Result, StageRecord
from harness.runner.path_runner import PathRunner, import_model
from harness.tvmapi import calls, copiers, loading
from harness.tvmapi.pipelines import EXTRACT
from harness.verdict import Outcome, Phase, Violation

MODULE, SAVED, TUNING_LOG = "module.json", "saved.json", "tuning-log"


def result_options(options: Options) -> dict:
    """What a cross-release result says it ran: the registry scopes entries by this path."""
    return {**options.to_json(), "path": CROSS_RELEASE_PATH}


@contextlib.contextmanager
def _stage(result: Result, emit: Emit, name: str, opened: bool = True):
    """Time one stage into the result; `opened=False` emits only its end (work inside
    brackets itself as a phase, which a crash report then names)."""
    if opened:
        emit({"event": "stage-start", "name": name})
    started = time.perf_counter()
    try:
        yield
    finally:
        record = StageRecord(name, round(time.perf_counter() - started, 4))
        result.stages.append(record)
        emit({"event": "stage-end", **record.__dict__})


def _extract(module, options: Options) -> tuple[list, list, Result]:
    """(task signatures, tasks, the run's result) of the bare extract path over `module`."""
    tasks: list = []

    def keep(stage, _input, output):
        if stage == EXTRACT:
            tasks.extend(output)
    bare = Options(layout=options.layout, target=options.target, num_cores=options.num_cores,
                   path="extract", checks=False, pass_guard=False)
    run = PathRunner(bare, observe=keep).run(module, Result("extract"))
    return calls.task_signatures(tasks), tasks, run


def _tvm(function, *args) -> classify.Call:
    """One call into TVM at this stage: TVM's exception comes back, ours leaves as a
    HarnessBug (harness-error)."""
    return classify.Call.of(oracle.STAGE, function, *args)


def _import(case_id: str, result: Result, recorder: Recorder, emit: Emit):
    with _stage(result, emit, "import"):
        module, failure = import_model(catalog.resolve(case_id).model())
    if failure:
        recorder.violate(failure)
    return module


def save(case_id: str, options: Options, folder: str, emit: Emit) -> Result:
    """Release A: the module, the tasks and the tuning log into `folder`."""
    versions = loading.versions()
    result = Result(case=case_id, options=result_options(options), **versions)
    recorder = Recorder(result, emit)
    try:
        module = _import(case_id, result, recorder, emit)
        if module is None:
            return result
        with _stage(result, emit, "save-json", opened=False), \
                recorder.phase(Phase.COPY, oracle.STAGE, oracle.copier_of(versions)):
            saved = _tvm(copiers.save_json, module)
            if not saved.ok:   # A cannot save
                recorder.violate(oracle.save_failed(saved.detail, versions))
                return result
        with open(os.path.join(folder, MODULE), "w") as handle:
            handle.write(saved.value)
        with _stage(result, emit, "extract"):
            outcome, tasks, run = _extract(module, options)
        if run.violations:   # A's own failure: its column shows it; nothing to carry over
            for violation in run.violations:
                recorder.violate(violation)
            return result
        with _stage(result, emit, "tuning-log"):
            os.makedirs(os.path.join(folder, TUNING_LOG))
            written = _tvm(calls.write_tuning_log, os.path.join(folder, TUNING_LOG), tasks)
            if not written.ok:
                recorder.violate(Violation(Outcome.ERROR, oracle.STAGE, oracle.TUNING_LOG,
                                           f"writing the tuning log failed: {written.detail}",
                                           phase=Phase.COPY))
                return result
        result.set_outcome(outcome)
        with open(os.path.join(folder, SAVED), "w") as handle:
            json.dump({"versions": versions, "outcome": result.outcome}, handle)
    except HarnessBug as bug:
        recorder.violate(Violation(Outcome.HARNESS_ERROR, bug.stage, "(harness)", str(bug)))
    return result


def load(case_id: str, options: Options, folder: str, emit: Emit) -> Result:
    """Release B: A's module and tuning log against B's own import of the case."""
    with open(os.path.join(folder, SAVED)) as handle:
        saved_by = json.load(handle)["versions"]
    result = Result(case=case_id, options={**result_options(options), "saved_by": saved_by},
                    **loading.versions())
    recorder = Recorder(result, emit)
    try:
        own = _import(case_id, result, recorder, emit)
        if own is None:
            return result
        with _stage(result, emit, oracle.STAGE, opened=False), \
                recorder.phase(Phase.COPY, oracle.STAGE, oracle.copier_of(saved_by)):
            _compare(own, options, folder, saved_by, result, recorder)
    except HarnessBug as bug:
        recorder.violate(Violation(Outcome.HARNESS_ERROR, bug.stage, "(harness)", str(bug)))
    return result


def _compare(own, options: Options, folder: str, saved_by: dict, result: Result,
             recorder: Recorder) -> None:
    """The load and the comparisons, in the order that leaves both modules untouched
    until they are compared (the path runs after)."""
    with open(os.path.join(folder, MODULE)) as handle:
        text = handle.read()
    load = _tvm(copiers.load_json, text)
    if not load.ok:   # the finding
        recorder.violate(oracle.load_failed(load.detail, saved_by))
    loaded = load.value
    if loaded is not None:
        compared = _tvm(oracle.structural_difference, own, loaded, saved_by)
        difference = compared.value if compared.ok else oracle.load_failed(
            f"it loads, but comparing it raises {compared.detail}", saved_by)
        if difference:
            recorder.violate(difference)
    own_outcome, own_tasks, run = _extract(own, options)
    if run.violations:   # B's own path fails: its column says so; nothing to compare with
        for violation in run.violations:
            recorder.violate(violation)
        return
    if loaded is not None:
        loaded_outcome, _, loaded_run = _extract(loaded, options)
        ours = [v for v in loaded_run.violations if v.kind == Outcome.HARNESS_ERROR]
        if ours:
            recorder.violate(ours[0])
        elif loaded_run.violations:
            recorder.violate(oracle.path_failed(loaded_run.violations[0].one_line(), saved_by))
        else:
            result.set_outcome(loaded_outcome)
            difference = oracle.tasks_difference(own_outcome, loaded_outcome, saved_by)
            if difference:
                recorder.violate(difference)
    looked_up = _tvm(calls.tasks_missing_from_tuning_log, os.path.join(folder, TUNING_LOG),
                     own_tasks)
    if not looked_up.ok:   # the log is lost
        recorder.violate(oracle.tuning_log_unreadable(looked_up.detail, saved_by))
        return
    missing_found = oracle.tuning_log_missing(looked_up.value, len(own_tasks), saved_by)
    if missing_found:
        recorder.violate(missing_found)


def run(step: dict, case_id: str, options: Options, emit: Emit) -> Result:
    """The child's entry: `{"save": FOLDER}` or `{"load": FOLDER}`."""
    if "save" in step:
        return save(case_id, options, step["save"], emit)
    return load(case_id, options, step["load"], emit)

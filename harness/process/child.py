"""The child side of an isolated check: run one case, write events as JSON lines.

Invoked as `python -m harness.process.child SPEC.json EVENTS.jsonl`, or forked
from a warm server (`harness.process.warm`) that imported TVM once. Every event
is flushed as it happens, so a crash loses nothing but the pass that crashed,
and that pass's name is already in the log.

Whatever happens in here ends as one `result` event: TVM's failures are
violations (the runner classifies them), an exception from the harness's own
code is a `harness-error` result (exit 4), never a traceback that a parent
could mistake for TVM dying.
"""
from __future__ import annotations

import faulthandler
import json
import os
import sys
import time

from harness import classify, doors
from harness.catalog import cases as catalog
from harness.options import Options
from harness.process.work import CROSS_RELEASE, IMPORT, REPRODUCER, TASK, VALIDATE, Work
from harness.result import Result, StageRecord
from harness.runner import cross_release, reproducer, reproducer_spec, sweep_input
from harness.signature import Signature
from harness.tvmapi import loading
from harness.verdict import BadInput, Outcome, Phase, Violation

CRASH_INPUT = "crash-input.json"


def event_writer(path: str):
    """One write(2) per event, straight to the file (no Python buffer to flush): a line is
    in the log before the work it announces starts, so a SIGKILL loses nothing written.
    A guarded stage writes two lines per pass application (light_resnet50: 44,000)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def emit(event: dict) -> None:
        line = memoryview((_encode(event) + "\n").encode())
        while line:
            line = line[os.write(descriptor, line):]
    return emit


def _json_encoder():
    """json.dumps, made once: dumps builds its C encoder again at every call, half of
    the time of a small event's line. Plain JSON either way (events are plain data)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:   # no C accelerator: the standard call
        return json.dumps
    # dumps's own arguments to it, but no circular-reference bookkeeping
    chunks = make(None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii,
                  None, ": ", ", ", False, False, True)
    probe = {"event": "probe", "index": 1, "seconds": 0.5, "name": "é\"", "raised": False}
    if "".join(chunks(probe, 0)) != json.dumps(probe):   # another CPython's encoder
        return json.dumps
    return lambda event: "".join(chunks(event, 0))


_encode = _json_encoder()


def run_spec(spec: dict, emit, workdir: str) -> Result:
    """Check the spec's case, or do the spec's other work (process.work): validate only
    builds its path (the target, the stages, an injected pass), so that bad options are
    refused before any work."""
    options = Options(**spec["options"])
    work = Work.from_json(spec.get("work"))
    kind = work.kind if work else None
    case = catalog.resolve(spec["case"])
    loading.tvm()  # TVMUnavailable here means "cannot test" (exit 125), not a verdict on TVM
    result = Result(case=spec["case"], options=options.to_json(), **loading.versions())
    if kind == CROSS_RELEASE:   # one half of a case across two releases
        return cross_release.run(work.request, spec["case"], options, emit)
    if kind == TASK:   # the Relax-level reducer's work, not a check
        from harness.runner import relax_task
        result.task_output = relax_task.run(work.request, case)
        return result
    crash_input = os.path.join(workdir, CRASH_INPUT) if options.keep_crash_input else None
    runner = sweep_input.runner(options, emit, crash_input)   # BadInput: exit 2
    if kind == VALIDATE:
        return result
    started = time.perf_counter()
    try:
        model = case.model()
    except doors.ExportRefused as exc:   # the framework's refusal: the case's verdict
        result.add(Violation(Outcome.UNSUPPORTED, "import", "(export)", str(exc)))
        return result
    finally:
        if case.needs_torch:   # torch.export (or its cached program), before TVM's import
            result.stages.append(StageRecord("export", round(time.perf_counter() - started, 4)))
    request = work.request if kind == REPRODUCER else None
    if request and request.get("violation"):
        # Write only: the check itself crashed or hung in an earlier child.
        violation = Violation.from_json(request["violation"])
    else:
        result = runner.run_model(model, result, import_only=kind == IMPORT)
        violation = Signature.from_json(request["signature"]).first_in(result) \
            if request else None
    if violation is not None:
        _reproduce(request, model, options, result, violation)
    return result


def _reproduce(request: dict, model, options: Options, result: Result,
               violation: Violation) -> None:
    """repro.py into the result. TVM failing it (a fresh import) leaves the check's verdict
    standing, said in `reproducer_error`; our own exception says so too, and is a
    harness-error beside the check's findings (never swallowed)."""
    try:
        written = classify.Call.of("reproducer", write_reproducer, request, model, options,
                                   result, violation, reraise=(BadInput,))
    except BadInput as refused:   # the user's hook file cannot be embedded: said, not ours
        result.reproducer_error = str(refused)
        return
    except classify.HarnessBug as bug:
        result.reproducer_error = str(bug)
        result.add(Violation(Outcome.HARNESS_ERROR, bug.stage, "(harness)", str(bug),
                             phase=Phase.PROCESS))
        return
    if written.ok:
        result.reproducer = written.value
    else:
        result.reproducer_error = classify.summary(written.error)


def write_reproducer(request: dict, model, options: Options, result: Result,
                     violation: Violation) -> str:
    """repro.py for `violation`. The module embedded is a fresh import of the model: the
    run may have mutated its own."""
    frontend = reproducer_spec.template_of(violation) == "import"
    return reproducer.write(
        request["out_dir"], violation=violation, options=options, versions=result.versions,
        command=request["command"], sizes=request["sizes"], deadline=request["deadline"],
        module=None if frontend else doors.to_relax(model), model=model)


def run(spec_path: str, events_path: str) -> int:
    with open(spec_path) as handle:
        spec = json.load(handle)
    emit = event_writer(events_path)
    # First, so that a parent reading the log of a crashed child knows what crashed.
    emit({"event": "start", **loading.versions()})
    try:
        result = run_spec(spec, emit, os.path.dirname(events_path))
    except BadInput as exc:
        emit({"event": "bad-input", "message": str(exc)})
        return 2
    except (loading.TVMUnavailable, doors.ExtraUnavailable) as exc:
        result = Result(case=spec["case"], options=spec["options"], **loading.versions())
        what = f"({exc.extra})" if isinstance(exc, doors.ExtraUnavailable) else "(tvm)"
        result.add(Violation(Outcome.UNSUPPORTED, "setup", what, str(exc), phase=Phase.PROCESS))
    except Exception as exc:  # noqa: BLE001 - outside any stage nothing is TVM's finding:
        # whatever raised is harness-error (exit 4), so a bisect stops, never blames TVM
        result = Result(case=spec["case"], options=spec["options"], **loading.versions())
        result.add(Violation(Outcome.HARNESS_ERROR, "setup", "(harness)", classify.summary(exc),
                             phase=Phase.PROCESS))
    emit({"event": "result", "result": result.to_json()})
    return 0


def main(argv=None) -> int:
    faulthandler.enable()  # Python frames on SIGSEGV/SIGABRT, next to TVM's native ones
    spec_path, events_path = (argv or sys.argv[1:])[:2]
    return run(spec_path, events_path)


if __name__ == "__main__":
    sys.exit(main())

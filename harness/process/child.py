"""The child side of an isolated check: run one case, write events as JSON lines.

Invoked as `python -m harness.process.child SPEC.json EVENTS.jsonl`. Every event is
flushed as it happens, so a crash loses nothing but the stage that crashed.
"""
from __future__ import annotations

import faulthandler
import json
import sys

from harness.catalog import cases as catalog
from harness.tvmapi import compat
from harness.runner.path_runner import PathRunner
from harness.tvmapi.pipelines import Options
from harness.verdict import BadInput, Result, Violation


def _writer(path: str):
    handle = open(path, "a", buffering=1)

    def emit(event: dict) -> None:
        handle.write(json.dumps(event) + "\n")
        handle.flush()
    return emit


def run_spec(spec: dict, emit) -> Result:
    options = Options(**spec["options"])
    case = catalog.resolve(spec["case"])
    model = case.model()
    compat.tvm()  # TVMUnavailable here means "cannot test" (exit 125), not a verdict on TVM
    result = Result(case=spec["case"], options=options.to_json(), **compat.versions())
    return PathRunner(options, emit).run_model(model, result)


def main(argv=None) -> int:
    faulthandler.enable()  # Python frames on SIGSEGV/SIGABRT, next to TVM's native ones
    spec_path, events_path = (argv or sys.argv[1:])[:2]
    with open(spec_path) as handle:
        spec = json.load(handle)
    emit = _writer(events_path)
    # First, so that a parent reading the log of a crashed child knows what crashed.
    emit({"event": "start", **compat.versions()})
    try:
        result = run_spec(spec, emit)
    except BadInput as exc:
        emit({"event": "bad-input", "message": str(exc)})
        return 2
    except compat.TVMUnavailable as exc:
        result = Result(case=spec["case"], **compat.versions())
        result.add(Violation("unsupported", "setup", "(tvm)", str(exc)))
    emit({"event": "result", "result": result.to_json()})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run the extraction path over one module and check both invariants at every stage.

In-process and unguarded: `isolate` runs this in a child so that a TVM crash
becomes a verdict. Events go to `emit` as they happen, so a parent that sees
the child die still knows which stages finished and which one was running.
"""
from __future__ import annotations

import time
from typing import Callable

from . import compat, roundtrip
from .fingerprint import Fingerprint
from .stages import EXTRACT, Options, Stage, build
from .verdict import Result, StageRecord, Violation

Emit = Callable[[dict], None]


def _no_emit(event: dict) -> None:
    pass


def import_onnx(model, shape_dict=None):
    """ONNX -> IRModule; an operator without a converter makes the case untestable."""
    try:
        return compat.from_onnx(model, shape_dict), None
    except Exception as exc:  # noqa: BLE001
        kind = "unsupported" if compat.is_unsupported_op_error(exc) else "error"
        return None, Violation(kind, "import", "(frontend)", f"{type(exc).__name__}: {exc}")


def _task_diff(expected: list, got: list, name: str) -> Violation | None:
    if expected == got:
        return None
    names_a, names_b = [t[0] for t in expected], [t[0] for t in got]
    if names_a != names_b:
        detail = f"task names differ: {sorted(set(names_a) ^ set(names_b)) or names_b}"
    else:
        index = next(i for i, (a, b) in enumerate(zip(expected, got)) if a != b)
        detail = f"task {names_a[index]} differs (name, hash, weight): {expected[index]} vs {got[index]}"
    return Violation("lossy-roundtrip", EXTRACT, "tasks", f"extraction on the {name} copy: {detail}")


def _signatures(tasks) -> list:
    return [compat.task_signature(t) for t in tasks]


class PathRunner:
    """Runs the stages over a source module, recording stages and violations."""

    def __init__(self, options: Options, emit: Emit = _no_emit,
                 copiers: dict[str, roundtrip.Copier] | None = None):
        self.options = options
        self.emit = emit
        self.copiers = dict(roundtrip.COPIERS if copiers is None else copiers)
        self.stages: list[Stage] = build(options)

    def _violate(self, result: Result, violation: Violation) -> None:
        result.add(violation)
        self.emit({"event": "violation", **violation.__dict__})

    def _roundtrip(self, result: Result, mod, stage: str) -> None:
        if self.options.checks:
            for violation in roundtrip.check(mod, stage, self.copiers):
                self._violate(result, violation)

    def run_model(self, model, result: Result) -> Result:
        """Import an ONNX model (the "import" stage), then check the path over it."""
        self.emit({"event": "stage-start", "name": "import"})
        started = time.perf_counter()
        source, failure = import_onnx(model)
        record = StageRecord("import", round(time.perf_counter() - started, 4))
        result.stages.append(record)
        self.emit({"event": "stage-end", **record.__dict__})
        if failure:
            self._violate(result, failure)
            return result
        return self.run(source, result)

    def run(self, source, result: Result) -> Result:
        """Check the whole path over `source`, the module the caller handed in."""
        self._roundtrip(result, source, "import")
        checks = self.options.checks
        source_fp = Fingerprint.of(source) if checks else None
        current, before_extract = source, None
        for stage in self.stages:
            input_fp = None
            if checks and current is not source:
                input_fp = Fingerprint.of(current)
            if stage.name == EXTRACT:
                before_extract = current
            self.emit({"event": "stage-start", "name": stage.name})
            started = time.perf_counter()
            try:
                output = stage.run(current)
            except Exception as exc:  # noqa: BLE001 - a failing stage is a verdict
                output, failure = None, exc
            else:
                failure = None
            record = StageRecord(stage.name, round(time.perf_counter() - started, 4))
            if checks:
                source_fp = self._check_mutation(result, record, source, source_fp,
                                                 current, input_fp)
            result.stages.append(record)
            self.emit({"event": "stage-end", **record.__dict__})
            if failure is not None:
                self._violate(result, Violation("error", stage.name, "(exception)",
                                                f"{type(failure).__name__}: {failure}"))
                return result
            if stage.name != EXTRACT and output is not current:
                self._roundtrip(result, output, stage.name)
            current = output
        result.tasks = len(current)
        if checks:
            self._check_copies_extract(result, source, before_extract, _signatures(current))
        return result

    def _check_mutation(self, result, record, source, source_fp, current, input_fp):
        """Re-fingerprint the source (and the stage's own input); return the new baseline."""
        path = source_fp.changed_path(source)
        if path is not None:
            record.mutated_source = True
            self._violate(result, Violation(
                "mutated", record.name, path, "the stage mutated the source IRModule in place"))
            # Move the baseline so a later stage is blamed only for its own mutation.
            source_fp = Fingerprint.of(source)
        if input_fp is not None:
            path = input_fp.changed_path(current)
            if path is not None:
                self._violate(result, Violation(
                    "mutated", record.name, path, "the stage mutated its input IRModule in place"))
        return source_fp

    def _check_copies_extract(self, result, source, before_extract, expected) -> None:
        """Copies extract the same tasks: the final module always, the source if asked."""
        extract = self.stages[-1]
        for name, copier in self.copiers.items():
            inputs = [("final module", before_extract)]
            if self.options.full_copies:
                inputs.append(("source", source))
            for label, mod in inputs:
                copy, failure = roundtrip.copy_with(name, copier, mod, EXTRACT)
                if failure:
                    self._violate(result, failure)
                    continue
                if label == "source":
                    copy = self._run_quietly(copy)
                    if copy is None:
                        self._violate(result, Violation(
                            "error", EXTRACT, "(copy)", f"the path failed on the {name} copy"))
                        continue
                    got = _signatures(copy)
                else:
                    got = _signatures(extract.run(copy))
                violation = _task_diff(expected, got, f"{name} ({label})")
                if violation:
                    self._violate(result, violation)

    def _run_quietly(self, mod):
        """The bare path over a copy: its tasks, or None if a stage raised."""
        try:
            for stage in self.stages:
                mod = stage.run(mod)
        except Exception:  # noqa: BLE001
            return None
        return mod

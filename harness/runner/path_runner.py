"""Run the extraction path over one module and check both invariants at every stage.

In-process and unguarded: `isolate` runs this in a child so that a TVM crash
becomes a verdict. Events go to `emit` as they happen, so a parent that sees
the child die still knows which stages finished and which one was running.

Cost model (see bench/): per stage one structural hash of the source and of the
stage's input; both round trips of the source; a deepcopy of the module handed
to extract_tasks, which is extracted again; one JSON comparison of the source at
the end. `full_copies` adds round trips of every stage output and the
whole path over each copy of the source.
"""
from __future__ import annotations

import time
from typing import Callable

from harness.tvmapi import compat
from harness.oracles import roundtrip
from harness.oracles.fingerprint import Fingerprint
from harness.tvmapi.pipelines import EXTRACT, Options, Stage, build
from harness.verdict import Result, StageRecord, Violation

Emit = Callable[[dict], None]


def _no_emit(event: dict) -> None:
    pass


def import_onnx(model, shape_dict=None):
    """ONNX -> IRModule; an operator without a converter makes the case untestable."""
    try:
        return compat.from_onnx(model, shape_dict), None
    except compat.TVMUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001
        kind = "unsupported" if compat.is_unsupported_op_error(exc) else "error"
        return None, Violation(kind, "import", "(frontend)", f"{type(exc).__name__}: {exc}")


def signatures(tasks) -> list:
    return [compat.task_signature(t) for t in tasks]


def task_diff(expected: list, got: list, label: str) -> Violation | None:
    if expected == got:
        return None
    names_a, names_b = [t[0] for t in expected], [t[0] for t in got]
    if names_a != names_b:
        detail = f"task names differ: {sorted(set(names_a) ^ set(names_b)) or names_b}"
    else:
        index = next(i for i, (a, b) in enumerate(zip(expected, got)) if a != b)
        detail = (f"task {names_a[index]} differs (name, hash, weight): "
                  f"{expected[index]} vs {got[index]}")
    return Violation("lossy-roundtrip", EXTRACT, "tasks", f"extraction on the {label}: {detail}")


class PathRunner:
    """Runs the stages over a source module, recording stages and violations."""

    def __init__(self, options: Options, emit: Emit = _no_emit,
                 copiers: dict[str, roundtrip.Copier] | None = None, fail_fast: bool = False):
        self.options = options
        self.fail_fast = fail_fast   # fuzzing: the first violation decides, skip the rest
        self.emit = emit
        self.copiers = dict(roundtrip.COPIERS if copiers is None else copiers)
        self.stages: list[Stage] = build(options)
        self.task_signatures: list = []   # of the last run, for determinism checks

    def _violate(self, result: Result, violation: Violation) -> None:
        result.add(violation)
        self.emit({"event": "violation", **violation.__dict__})

    def _copies(self, result: Result, mod, stage: str, json_text: str | None = None,
                only: tuple[str, ...] | None = None) -> dict:
        """Copy `mod` with every copier and compare; the good copies, by copier name.

        `json_text`, when the caller already serialized `mod`, spares the default
        JSON copier a second save_json (the costliest call on weight-heavy models).
        """
        copies = {}
        for name, copier in self.copiers.items():
            if only is not None and name not in only:
                continue
            if json_text is not None and copier is roundtrip.json_roundtrip:
                copier = lambda _mod: compat.load_json(json_text)  # noqa: E731
            copy, failure = roundtrip.copy_with(name, copier, mod, stage)
            violation = failure or roundtrip.compare(mod, copy, name, stage)
            if violation:
                self._violate(result, violation)
            if copy is not None:
                copies[name] = copy
        return copies

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
        checks, full = self.options.checks, self.options.full_copies
        source_fp = Fingerprint.of(source, with_json=True) if checks else None
        if checks:
            self._copies(result, source, "import", source_fp.json_text)
            if self.fail_fast and result.violations:
                return result
        current = source
        for index, stage in enumerate(self.stages):
            input_fp = Fingerprint.of(current) if checks and current is not source else None
            self.emit({"event": "stage-start", "name": stage.name})
            started = time.perf_counter()
            try:
                output, failure = stage.run(current), None
            except Exception as exc:  # noqa: BLE001 - a failing stage is a verdict
                output, failure = None, exc
            record = StageRecord(stage.name, round(time.perf_counter() - started, 4))
            if checks:
                source_fp = self._check_source(result, record, source, source_fp)
                if input_fp is not None and input_fp.hash_changed(current):
                    self._violate(result, Violation(
                        "mutated", stage.name, self._input_path(source_fp, index, current),
                        "the stage mutated its input IRModule in place"))
            result.stages.append(record)
            self.emit({"event": "stage-end", **record.__dict__})
            if self.fail_fast and result.violations and failure is None:
                return result
            if failure is not None:
                self._violate(result, Violation("error", stage.name, "(exception)",
                                                f"{type(failure).__name__}: {failure}"))
                return result
            if stage.name == EXTRACT:
                break
            if checks and full and output is not current:
                self._copies(result, output, stage.name)
            current = output
        result.tasks = len(output)
        self.task_signatures = signatures(output)
        if checks:
            self._check_final(result, current, self.task_signatures)
            if full:
                self._check_source_copies(result, source, self.task_signatures)
            path = source_fp.changed_path(source)
            if path is not None:
                self._violate(result, Violation(
                    "mutated", "(whole path)", path, "the source changed outside structure"))
        return result

    def _check_source(self, result, record, source, source_fp) -> Fingerprint:
        """Blame the stage if the source's hash moved; return the baseline for the next."""
        if not source_fp.hash_changed(source):
            return source_fp
        record.mutated_source = True
        self._violate(result, Violation("mutated", record.name, source_fp.changed_path(source),
                                        "the stage mutated the source IRModule in place"))
        # Move the baseline so a later stage is blamed only for its own mutation.
        return Fingerprint.of(source, with_json=True)

    def _input_path(self, source_fp: Fingerprint, index: int, mutated) -> str:
        """Where the stage's input changed: replay the earlier stages over a pristine copy."""
        try:
            pristine = source_fp.snapshot()
            for stage in self.stages[:index]:
                pristine = stage.run(pristine)
            return compat.first_mismatch(pristine, mutated) or "(structural hash changed)"
        except Exception as exc:  # noqa: BLE001 - the path is a courtesy, the verdict stands
            return f"(structural hash changed; replay failed: {type(exc).__name__})"

    def _check_final(self, result, final, expected) -> None:
        """The module handed to extract_tasks round-trips, and its copies give the same tasks.

        By default only through deepcopy, the user's workaround, which TVM implements
        as save_json + load_json: the explicit JSON copy would repeat the same
        serialization of folded weights (seconds on resnet50). --full-copies adds it.
        """
        extract = self.stages[-1]
        only = None if self.options.full_copies else ("deepcopy",)
        for name, copy in self._copies(result, final, EXTRACT, only=only).items():
            violation = task_diff(expected, signatures(extract.run(copy)),
                                  f"{name} copy of its input")
            if violation:
                self._violate(result, violation)

    def _check_source_copies(self, result, source, expected) -> None:
        """The whole path over each copy of the source gives the same tasks."""
        for name, copier in self.copiers.items():
            copy, failure = roundtrip.copy_with(name, copier, source, "import")
            if failure:
                continue  # already reported by the source round trip
            try:
                for stage in self.stages:
                    copy = stage.run(copy)
            except Exception as exc:  # noqa: BLE001
                self._violate(result, Violation(
                    "error", stage.name, f"({name} copy)",
                    f"the path failed on the {name} copy of the source: {type(exc).__name__}: {exc}"))
                continue
            violation = task_diff(expected, signatures(copy), f"{name} copy of the source")
            if violation:
                self._violate(result, violation)

"""The one runner: a path of stages over a module, every oracle, one verdict.

`check`, `report`, `matrix`, `fuzz`, the pytest plugin, the pass sweep and the
reducer all run a path through `PathRunner`; nothing runs the path a second way.
In-process and unguarded against crashes: `harness.process` runs it in a child,
and events go to `emit` as they happen so a parent that sees the child die still
knows the stage and the pass that were running.

Its one job is the order of things: the source's copies, each stage under the
per-pass guard (PassGuard: it records, never raises, so the guarded run makes exactly
the calls a plain run makes; tests/test_faithful_guard.py), the mutation blame after
each stage and at the end (runner.mutations), the outcome, and the copy checks
(oracles.copies). Every violation says in which phase it was seen (verdict.PHASES).
`stop` (the fuzzer's) ends a run early once a result is decided.
"""
from __future__ import annotations

import time
from typing import Callable

from harness import classify, doors
from harness.classify import HarnessBug
from harness.options import Options
from harness.oracles import roundtrip
from harness.oracles.answers import AnswerChecks, References
from harness.oracles.copies import CopyChecks
from harness.oracles.fingerprint import Fingerprint
from harness.oracles.recorder import Emit, Recorder, no_emit
from harness.result import ConverterRecord, Result, StageRecord
from harness.runner.mutations import MutationBlame
from harness.tvmapi import (
    calls,
    compile_prefix,
    copiers,
    errors,
    frontend_reach,
    loading,
    structure,
)
from harness.tvmapi.guard_records import Watched
from harness.tvmapi.pass_guard import PassGuard
from harness.tvmapi.pipelines import Pipeline, build, runs_here
from harness.verdict import Outcome, Phase, Violation

Stop = Callable[[Result], bool]   # True: the result is decided, skip the remaining checks


def import_model(model, converters: ConverterRecord | None = None):
    """The door's frontend -> IRModule; an operator without a converter makes the case
    untestable. Missing TVM or a door's extra: cannot test here (raised as it is).
    `converters`, when given, receives the frontend's converters the import looked up."""
    with frontend_reach.recording(doors.converter_map(model), converters):
        imported = classify.Call.of("import", doors.to_relax, model,
                                    reraise=(loading.TVMUnavailable, doors.ExtraUnavailable))
    if imported.ok:
        return imported.value, None
    kind = (Outcome.UNSUPPORTED if errors.is_unsupported_op_error(imported.error)
            else Outcome.ERROR)
    return None, Violation(kind, "import", "(frontend)", imported.detail)


class PathRunner:
    """Runs one path over a source module, recording stages, passes and violations."""

    def __init__(self, options: Options, emit: Emit = no_emit,
                 copier_table: dict[str, roundtrip.Copier] | None = None,
                 stop: Stop | None = None, crash_input_path: str | None = None,
                 observe: Callable[[str, object, object], None] | None = None):
        self.options = options
        # Called with (stage name, input, output) after each stage that succeeded: a
        # read-only window for measurements (the fuzzer's steering), never a check.
        self.observe = observe
        self.stop = stop
        self.emit = emit
        self.copiers = dict(roundtrip.COPIERS if copier_table is None else copier_table)
        self.pipeline: Pipeline = build(options)
        self.guard = PassGuard(emit, crash_input_path)

    def run_model(self, model, result: Result, import_only: bool = False) -> Result:
        """Import a model through its door (the "import" stage), then check the path;
        `import_only`: the import stage alone (the reach map's measurement)."""
        self.emit({"event": "stage-start", "name": "import"})
        started = time.perf_counter()
        result.converters = ConverterRecord("")
        try:
            source, failure = import_model(model, result.converters)
        except HarnessBug as bug:
            source, failure = None, Violation(Outcome.HARNESS_ERROR, "import", "(harness)",
                                              str(bug))
        record = StageRecord("import", round(time.perf_counter() - started, 4))
        result.stages.append(record)
        self.emit({"event": "stage-end", **record.__dict__})
        if failure:
            Recorder(result, self.emit).violate(failure)
            return result
        if import_only:
            return result
        return self.run(source, result, References(model))

    def run(self, source, result: Result, references: References | None = None) -> Result:
        """Check the whole path over `source`, the module the caller handed in;
        `references`: the frameworks' answers for the model it came from.

        The checks between stages are classified here: the stage of what they raised is
        the last one recorded (stage "" leaves it to this call)."""
        recorder = Recorder(result, self.emit)
        try:
            checked = classify.Call.of(
                "", lambda: _Run(self, source, recorder, references).all())
        except HarnessBug as bug:
            recorder.violate(Violation(Outcome.HARNESS_ERROR, bug.stage or _last_stage(result),
                                       "(harness)", str(bug)))
            return result
        if not checked.ok and errors.is_unhashable(checked.error) \
                and not classify.Call.of("import", structure.structural_hash, source).ok:
            # the guards' limit, not TVM's finding: they cannot fingerprint the module handed
            # in (its fingerprint is the first thing taken; a module a pass makes unhashable
            # is that pass's finding). Asked only on this failure, not on every check.
            recorder.violate(Violation(
                Outcome.UNSUPPORTED, "import", "(structural hash)",
                "the module holds an object tvm_ffi's structural hash does not cover, so the "
                f"guards cannot fingerprint it: {checked.detail}", phase=Phase.CHECKS))
        elif not checked.ok:   # TVM failing inside a check (a save_json, a structural hash)
            recorder.violate(Violation(Outcome.ERROR, _last_stage(result), "(exception)",
                                       checked.detail, phase=Phase.CHECKS))
        return result


def _last_stage(result: Result) -> str:
    return result.stages[-1].name if result.stages else "import"


class _Stopped(Exception):
    """The caller's `stop` said the run's result is decided: leave the checks there."""


class _Run:
    """One run of a PathRunner over one source: the order of the checks."""

    def __init__(self, runner: PathRunner, source, recorder: Recorder,
                 references: References | None = None):
        self.runner, self.source, self.recorder = runner, source, recorder
        self.references = references
        self.result = recorder.result
        self.pipeline, self.options = runner.pipeline, runner.options
        checks = self.options.checks
        self.blame = MutationBlame(self.pipeline, recorder, source) if checks else None
        self.copy_checks = CopyChecks(self.pipeline, self.options, runner.copiers, recorder)

    def checkpoint(self) -> None:
        """Leave the run here when the caller's `stop` says its result is decided (the
        fuzzer shrinking: a candidate that already fails differently needs no more)."""
        if self.runner.stop is not None and self.runner.stop(self.result):
            raise _Stopped

    def all(self) -> Result:
        refusal = self.pipeline.refusal(self.source)
        if refusal:   # the path's documented precondition: this module cannot be tested on it
            self.recorder.violate(Violation(Outcome.UNSUPPORTED, self.pipeline.final.name,
                                            "(path)", refusal))
            return self.result
        try:
            self._checks()
        except _Stopped:
            pass
        return self.result

    def _checks(self) -> None:
        """The source's copies, the stages, the final stage on copies, the answers and
        the blame at the end, in that order; with `stop` (fuzzing) the source's copies come
        after the stages: most shrink candidates stop there, and the source's round trips
        (TVMScript's parse the costliest) are then not paid."""
        checks, full = self.options.checks, self.options.full_copies
        copy_source = checks and not self.pipeline.round_trip_output
        copy_source_first = copy_source and self.runner.stop is None
        source_copies = self._source_copies(self.source) if copy_source_first else {}
        self.checkpoint()
        final_input, output, failed = self.source, None, False
        front = []   # (stage, its output) before the final stage: the answers oracle's
        for stage in self.pipeline.stages:
            output, failed = self.stage(stage, final_input)
            if failed:
                break
            self.checkpoint()
            if stage is self.pipeline.final:
                break
            front.append((stage, output))
            if checks and full and output is not final_input:
                self.copy_checks.copies(output, stage.name)
            final_input = output
        self.checkpoint()
        if copy_source and not copy_source_first:
            source_copies = self._source_copies(self.source)
            self.checkpoint()
        if not failed:
            self._after_final_stage(final_input, output, front, source_copies)
        if checks:
            self.blame.at_end()

    def _after_final_stage(self, final_input, output, front, source_copies) -> None:
        """The path's outcome, and what is checked against it: the output's round trip
        (the sweep), the final stage on copies, the whole path on the source's copies
        (--full-copies) and the answers."""
        checks = self.options.checks
        outcome = self.pipeline.summarize(output)
        self.result.set_outcome(outcome)
        if checks and self.pipeline.round_trip_output:
            self.copy_checks.copies(output, self.pipeline.final.name,
                                    copiers.save_json(output), memo=True, what="output",
                                    made_by=self.options.sweep_pass)
        if not checks:
            return
        self.checkpoint()
        copied = self.copy_checks.final_stage_on_copies(
            final_input, outcome, source_copies if final_input is self.source else {},
            earlier=[(None, self.source)] + front)
        if self.options.full_copies:
            self.copy_checks.whole_path_on_source_copies(self.source, outcome)
        if self.options.answers and runs_here(self.pipeline):
            self.checkpoint()
            self._answers(self.source, front, output, copied)
        self.checkpoint()

    def _answers(self, source, front, executable, copied) -> None:
        """The numbers oracle. Its TVM calls that can find something (compiling, running
        an executable) are classified inside it; anything else raising there (reading the
        entry's parameters, drawing inputs) is the oracle's own failure: harness-error,
        never a finding about TVM."""
        try:
            AnswerChecks(self.pipeline, self.recorder).check(
                source, front, executable, copied, self.references)
        except HarnessBug:
            raise
        except Exception as exc:
            raise HarnessBug(self.pipeline.final.name, exc) from exc

    def _source_copies(self, source):
        """The source's round trips, made once per module text and TVM build
        (roundtrip_memo): a model's rows (its layouts, both paths, the nights of a week)
        import the same module, and the copies are much of a row's cost (docs'
        benchmarks). The copies the final stage runs on, when it takes the source (the
        compile path), are loaded from its text even when remembered: a load, where a
        deepcopy would serialize the module again. The text is the source's fingerprint's,
        taken again when a stage was blamed for changing the source, so that copies made
        after the path (the fuzzer's order) are of the module as it is then."""
        fingerprint = self.blame.source_fp
        takes_source = self.pipeline.final is self.pipeline.stages[0]
        return self.copy_checks.copies(
            source, "import", fingerprint.json_text, memo=True,
            keep=self.copy_checks.final_copiers() if takes_source else ())

    def stage(self, stage, current):
        """Run one stage under the guards; (output, failed)."""
        checks, guard = self.options.checks, self.runner.guard
        input_json = self.pipeline.round_trip_output and stage is self.pipeline.final
        input_fp = (Fingerprint.of(current, with_json=input_json)
                    if checks and current is not self.source else None)
        watched = []
        if checks and self.options.pass_guard:
            watched.append(Watched("source", self.source))
            if current is not self.source:
                watched.append(Watched("stage input", current))
        guard.begin_stage(stage.name, watched)
        self.runner.emit({"event": "stage-start", "name": stage.name})
        started = time.perf_counter()
        ran, running = self._guarded(stage, current)
        end = guard.end_stage()
        record = StageRecord(stage.name, round(time.perf_counter() - started, 4),
                             passes=len(end.passes))
        self.result.passes += end.passes
        if checks:
            findings = end.findings
            if end.edited_in_place and not findings:   # seen at the stage's end only
                findings = self.blame.replay_naming_in_place_edit(stage, end.passes)
            self.blame.after_stage(record, stage, current, input_fp, findings,
                                   end.edited_in_place)
        self.result.stages.append(record)
        self.runner.emit({"event": "stage-end", **record.__dict__})
        if isinstance(ran, HarnessBug):
            raise ran   # ours: harness-error, once the stage is recorded as it ran
        if isinstance(ran, compile_prefix.PassNotReached):
            self.recorder.violate(Violation(Outcome.UNSUPPORTED, stage.name, "(point)",
                                            str(ran)))
            return None, True
        if end.tvm_error is not None:   # TVM failing in the guard's own calls: the stage ran
            error, at = end.tvm_error
            self.recorder.violate(Violation(Outcome.ERROR, stage.name, "(guard)",
                                            classify.first_line(error), *(at or (None, None)),
                                            phase=Phase.CHECKS))
        if not ran.ok:
            self.recorder.violate(Violation(Outcome.ERROR, stage.name, "(exception)", ran.detail,
                                            *(running or (None, None))))
            return None, True
        if self.runner.observe is not None:
            self.runner.observe(stage.name, current, ran.value)
        return ran.value, False

    def _guarded(self, stage, current):
        """(the stage's classified call, or our HarnessBug; (pass, index) running when it
        raised). The guard only records: the stage runs exactly as it would unguarded."""
        guard = self.runner.guard
        instruments = [guard.instrument()] if self.options.pass_guard else []
        try:
            ran = classify.Call.of(stage.name, _in_context, stage, current, instruments,
                                   reraise=(compile_prefix.PassNotReached,))
        except HarnessBug as bug:
            return bug, guard.running()
        except compile_prefix.PassNotReached as absent:   # no such point on this module
            return absent, None
        if guard.bug is not None:   # ours, kept inside TVM's callbacks
            return guard.bug, guard.running()
        return ran, None if ran.ok else guard.running()


def _in_context(stage, current, instruments):
    with calls.pass_context(instruments):
        return stage.run(current)

"""The one runner: a path of stages over a module, every oracle, one verdict.

`check`, `report`, `matrix`, `fuzz`, the pytest plugin and the reducer all run a
path through `PathRunner`; nothing runs the path a second way. In-process and
unguarded against crashes: `harness.process` runs it in a child, and events go
to `emit` as they happen so a parent that sees the child die still knows the
stage and the pass that were running.

What is checked (see bench/ for the cost):
  * every pass of every stage, by the harness's PassGuard: its input's structural
    hash and identity map before and after it, and the path's source; it records,
    never raises, so the guarded run makes exactly the calls a plain run makes
    (tests/test_faithful_guard.py compares their outcomes);
  * after every stage, the structural hash of the source and of the stage's input;
  * the source's copies (every copier) against the source; the final stage's
    input copied (deepcopy; every copier with `full_copies`) and run through the
    final stage again must give the same outcome (tasks, tuned workloads,
    executable); the pass sweep's path instead round-trips the final stage's
    output, runs the stage twice on the same input, and checks that input's JSON;
  * at the end, the source's JSON text, which sees fields outside structural
    equality; when it moved, the path is replayed over a pristine copy comparing
    JSON after each pass, to name the pass.
`full_copies` adds round trips of every stage output and the whole path over
each copy of the source. Every violation says in which phase it was seen
(verdict.PHASES): the stage's own call, the checks around it, a copy, the
determinism run.
"""
from __future__ import annotations

import contextlib
import time
from typing import Callable

from harness.oracles import roundtrip, roundtrip_memo
from harness.oracles import tasks as task_oracle
from harness.oracles.fingerprint import Fingerprint
from harness.runner import classify
from harness.tvmapi import compat
from harness.tvmapi.pass_guard import PassGuard, Watched
from harness.tvmapi.pipelines import Options, Path, build
from harness.verdict import CopierRecord, Result, StageRecord, Violation

Emit = Callable[[dict], None]


def _no_emit(event: dict) -> None:
    pass


class HarnessBug(Exception):
    """An exception from the harness's own code while running the path."""

    def __init__(self, stage: str, exc: BaseException):
        super().__init__(classify.summary(exc))
        self.stage = stage


def import_onnx(model, shape_dict=None):
    """ONNX -> IRModule; an operator without a converter makes the case untestable."""
    try:
        return compat.from_onnx(model, shape_dict), None
    except compat.TVMUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001
        if classify.origin(exc) == classify.HARNESS:
            raise HarnessBug("import", exc) from exc
        kind = "unsupported" if compat.is_unsupported_op_error(exc) else "error"
        return None, Violation(kind, "import", "(frontend)", classify.first_line(exc))


class PathRunner:
    """Runs one path over a source module, recording stages, passes and violations."""

    def __init__(self, options: Options, emit: Emit = _no_emit,
                 copiers: dict[str, roundtrip.Copier] | None = None, fail_fast: bool = False,
                 crash_input_path: str | None = None,
                 observe: Callable[[str, object, object], None] | None = None):
        self.options = options
        # Called with (stage name, input, output) after each stage that succeeded: a
        # read-only window for measurements (the fuzzer's steering), never a check.
        self.observe = observe
        # Fuzzing: the first violation decides, skip the rest. A callable decides which
        # results count (the fuzzer passes over registered known issues).
        self.fail_fast = fail_fast
        self.emit = emit
        self.copiers = dict(roundtrip.COPIERS if copiers is None else copiers)
        self.path: Path = build(options)
        self.guard = PassGuard(emit, crash_input_path)
        self.source_fp: Fingerprint | None = None
        self.pristine_source = None   # the source before a stage mutated it

    # ---- entry points ------------------------------------------------------

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
        try:
            return self._run(source, result)
        except HarnessBug as bug:
            self._violate(result, Violation("harness-error", bug.stage, "(harness)", str(bug)))
        except Exception as exc:  # noqa: BLE001 - raised by the checks between stages
            stage = result.stages[-1].name if result.stages else "import"
            if classify.origin(exc) == classify.HARNESS:
                self._violate(result, Violation("harness-error", stage, "(harness)",
                                                classify.summary(exc)))
            else:   # TVM failing inside a check (a save_json, a structural hash)
                self._violate(result, Violation("error", stage, "(exception)",
                                                classify.first_line(exc), phase="checks"))
        return result

    # ---- the path ------------------------------------------------------------

    def _run(self, source, result: Result) -> Result:
        checks, full = self.options.checks, self.options.full_copies
        self.source_fp = Fingerprint.of(source, with_json=True) if checks else None
        # Fuzzing (fail-fast) runs the cheap path first: most shrink candidates stop there,
        # and the source's round trips (TVMScript's parse the costliest) are then not paid.
        deferred = bool(self.fail_fast)
        source_copies = checks and not self.path.round_trip_output
        if source_copies and not deferred:
            self._copies(result, source, "import", self.source_fp.json_text)
            if self._stop(result):
                return result
        current, output, failed = source, None, False
        for stage in self.path.stages:
            output, failed = self._stage(result, stage, source, current)
            if failed or self._stop(result) or stage is self.path.final:
                break
            if checks and full and output is not current:
                self._copies(result, output, stage.name)
            current = output
        if source_copies and deferred and not self._stop(result):
            self._copies(result, source, "import", self.source_fp.json_text)
        if not failed and not self._stop(result):
            outcome = self.path.summarize(output)
            result.set_outcome(outcome)
            if checks and self.path.round_trip_output:
                self._copies(result, output, self.path.final.name, compat.save_json(output),
                             memo=True, what="output")
            if checks and not self._stop(result):
                self._check_final(result, current, outcome)
                if full:
                    self._check_source_copies(result, source, outcome)
        if checks and not self._stop(result):
            self._check_source_json(result, source)
        return result

    def _stage(self, result: Result, stage, source, current):
        """Run one stage under the guards; (output, failed)."""
        checks = self.options.checks
        input_json = self.path.round_trip_output and stage is self.path.final
        input_fp = (Fingerprint.of(current, with_json=input_json)
                    if checks and current is not source else None)
        watched = [Watched("source", source)] if checks else []
        if checks and current is not source:
            watched.append(Watched("stage input", current))
        self.guard.begin_stage(stage.name, watched if self.options.pass_guard else [])
        self.emit({"event": "stage-start", "name": stage.name})
        started = time.perf_counter()
        output, failure, running = self._guarded(stage, current)
        passes = self.guard.end_stage()
        record = StageRecord(stage.name, round(time.perf_counter() - started, 4),
                             passes=len(passes))
        result.passes += passes
        findings = self.guard.findings
        if checks:
            self._stage_mutations(result, record, stage, source, current, input_fp, findings)
        result.stages.append(record)
        self.emit({"event": "stage-end", **record.__dict__})
        if failure is not None:
            self._stage_error(result, stage.name, failure, running)
            return None, True
        if self.observe is not None:
            self.observe(stage.name, current, output)
        return output, False

    def _stage_mutations(self, result, record, stage, source, current, input_fp,
                         findings) -> None:
        """A `mutated` violation for what the stage mutated (the source, its input, or an
        intermediate module a pass received), with the pass when one is known."""
        blamed = (findings[0].record.name, findings[0].record.index) if findings else None
        pass_fields = blamed or (None, None)
        if self._check_source(result, record, source, blamed):
            return
        if input_fp is not None and input_fp.hash_changed(current):
            self._violate(result, Violation(
                "mutated", stage.name, self._input_path(stage, current),
                "the stage mutated its input IRModule in place", *pass_fields))
            return
        if input_fp is not None and input_fp.json_text is not None and not findings \
                and input_fp.changed_path(current):
            self._violate(result, Violation(
                "mutated", stage.name, "(outside structural equality)",
                "the stage changed its input IRModule's JSON text in place", *pass_fields))
            return
        if not findings:
            return
        # The most telling finding: the source, else the stage's input, else a pass's own
        # (intermediate) input; its pass is blamed and its `how` said.
        order = ("source", "stage input", "its input")
        finding = min(findings, key=lambda found: order.index(found.what))
        if finding.what == "source":
            record.mutated_source = True
            what, where = "the source IRModule", "(outside structural equality)"
            self.source_fp = Fingerprint.of(source, with_json=True)   # blamed here, not at the end
        elif finding.what == "stage input":
            what, where = "the stage's input IRModule", "(outside structural equality)"
        else:
            # Inside a Sequential the mutated module is an intermediate one that only a
            # per-pass check (the guard's hash or identity map of each pass's input) sees.
            what, where = "its input (an intermediate module of the stage)", "(pass input)"
        self._violate(result, Violation("mutated", stage.name, where,
                                        f"the pass mutated {what}: {finding.how}",
                                        finding.record.name, finding.record.index))

    def _guarded(self, stage, current):
        """(output, exception, (pass, index) running when it was raised).

        The guard only records: the stage runs exactly as it would unguarded."""
        instruments = [self.guard.instrument()] if self.options.pass_guard else []
        try:
            with compat.pass_context(instruments):
                return stage.run(current), None, None
        except Exception as exc:  # noqa: BLE001 - classified by the caller
            return None, exc, self.guard.running()

    def _stage_error(self, result: Result, stage: str, failure: BaseException,
                     running: tuple | None) -> None:
        if classify.origin(failure) == classify.HARNESS:
            raise HarnessBug(stage, failure) from failure
        self._violate(result, Violation("error", stage, "(exception)",
                                        classify.first_line(failure), *(running or (None, None))))

    # ---- oracles ---------------------------------------------------------------

    def _stop(self, result: Result) -> bool:
        if callable(self.fail_fast):
            return self.fail_fast(result)
        return bool(self.fail_fast and result.violations)

    def _violate(self, result: Result, violation: Violation) -> None:
        result.add(violation)
        self.emit({"event": "violation", **violation.to_json()})

    def _copies(self, result: Result, mod, stage: str, json_text: str | None = None,
                only: tuple[str, ...] | None = None, memo: bool = False,
                what: str = "input") -> dict:
        """Copy `mod` with every copier and compare; the good copies, by copier name.

        `json_text`, when the caller already serialized `mod`, spares the default
        JSON copier a second save_json (the costliest call on weight-heavy models).
        `memo` (the sweep, which wants verdicts, not copies): a round trip this build
        already made losslessly of the same text is not made again (roundtrip_memo).
        """
        copies = {}
        for name, copier in self.copiers.items():
            if only is not None and name not in only:
                continue
            memo_text = json_text if memo and copier is roundtrip.COPIERS.get(name) else None
            if memo_text is not None and roundtrip_memo.remembered(name, memo_text):
                result.copiers.append(CopierRecord(
                    name, "pass", 0.0, "remembered: this build copied this module text "
                    "losslessly before"))
                continue
            if json_text is not None and copier is roundtrip.json_roundtrip:
                copier = lambda _mod: compat.load_json(json_text)  # noqa: E731
            with self._phase("copy", stage, name):
                copy = self._copy_and_compare(result, name, copier, mod, stage, json_text,
                                              what, memo_text)
            if copy is not None:
                copies[name] = copy
        return copies

    def _copy_and_compare(self, result, name, copier, mod, stage, json_text, what, memo_text):
        """One copier's copy of `mod`, compared; None when it failed or was refused."""
        started = time.perf_counter()
        try:
            copy, failure = roundtrip.copy_with(name, copier, mod, stage, what)
        except roundtrip.Unsupported as exc:
            result.copiers.append(CopierRecord(
                name, "unsupported", round(time.perf_counter() - started, 4), str(exc)))
            return None
        violation = failure or roundtrip.compare(mod, copy, name, stage, json_text, what)
        result.copiers.append(CopierRecord(
            name, "lossy-roundtrip" if violation else "pass",
            round(time.perf_counter() - started, 4), violation.detail if violation else ""))
        if violation:
            self._violate(result, violation)
        elif memo_text is not None and copy is not None:
            roundtrip_memo.remember(name, memo_text)
        return copy

    @contextlib.contextmanager
    def _phase(self, phase: str, stage: str, copier: str | None = None):
        """Events around work after a stage (a copy, the determinism run): a crash or hang
        in it is reported in this phase, for this stage (and copier)."""
        self.emit({"event": "phase-start", "phase": phase, "stage": stage, "copier": copier})
        try:
            yield
        finally:
            self.emit({"event": "phase-end", "phase": phase})

    def _on_copy(self, result: Result, name: str, run, label: str):
        """Run the path (or its final stage) over a copy, unguarded; a TVM exception there
        is the seed's symptom ("cannot find field axis" while extracting from a copy)."""
        try:
            with compat.pass_context([]), self._phase("copy", self.path.final.name, name):
                return run()
        except Exception as exc:  # noqa: BLE001
            if classify.origin(exc) == classify.HARNESS:
                raise HarnessBug(self.path.final.name, exc) from exc
            self._violate(result, Violation(
                "lossy-roundtrip", self.path.final.name, f"({name} copy)",
                f"the path failed on the {label}: {classify.first_line(exc)}",
                phase="copy", copier=name))
            return None

    def _check_final(self, result: Result, final_input, expected) -> None:
        """The final stage's input round-trips, and its copies give the same outcome.

        By default only through deepcopy, the user's workaround, which TVM implements
        as save_json + load_json: the explicit JSON copy would repeat the same
        serialization of folded weights (seconds on resnet50). --full-copies adds it.
        """
        final = self.path.final
        if self.path.run_twice and not self._deterministic(result, final, final_input, expected):
            return
        only = None if self.options.full_copies else ("deepcopy",)
        for name, copy in self._copies(result, final_input, final.name, only=only).items():
            label = f"{name} copy of its input"
            outcome = self._on_copy(result, name, lambda copy=copy: final.run(copy), label)
            if outcome is None:
                continue
            violation = task_oracle.task_diff(expected, self.path.summarize(outcome), label,
                                              final.name, name)
            if violation:
                self._violate(result, violation)

    def _deterministic(self, result: Result, final, final_input, expected) -> bool:
        """The final stage run a second time on the same input gives the same outcome
        (a pass with hidden state answers differently the second time). Checked before
        the copies: a moving target would otherwise be blamed on the copy."""
        try:
            with compat.pass_context([]), self._phase("determinism", final.name):
                again = final.run(final_input)
        except Exception as exc:  # noqa: BLE001
            if classify.origin(exc) == classify.HARNESS:
                raise HarnessBug(final.name, exc) from exc
            self._violate(result, Violation(
                "error", final.name, "(second run)", "the stage failed when run a second "
                f"time on the same input: {classify.first_line(exc)}", phase="determinism"))
            return False
        if self.path.summarize(again) == expected:
            return True
        self._violate(result, Violation(
            "error", final.name, "(outcome)",
            "the stage is not deterministic: run a second time on the same input, "
            "it gave another outcome", phase="determinism"))
        return False

    def _check_source_copies(self, result: Result, source, expected) -> None:
        """The whole path over each copy of the source gives the same outcome."""
        def whole_path(copy):
            for stage in self.path.stages:
                copy = stage.run(copy)
            return copy
        for name, copier in self.copiers.items():
            try:
                with self._phase("copy", "import", name):
                    copy, failure = roundtrip.copy_with(name, copier, source, "import",
                                                        "input")
            except roundtrip.Unsupported:
                continue  # recorded by the source round trip
            if failure:
                continue  # already reported by the source round trip
            label = f"{name} copy of the source"
            outcome = self._on_copy(result, name, lambda copy=copy: whole_path(copy), label)
            if outcome is None:
                continue
            violation = task_oracle.task_diff(expected, self.path.summarize(outcome), label,
                                              self.path.final.name, name)
            if violation:
                self._violate(result, violation)

    def _check_source(self, result, record, source, blamed) -> bool:
        """Blame the stage (and the pass, when known) if the source's hash moved."""
        if not self.source_fp.hash_changed(source):
            return False
        record.mutated_source = True
        self._violate(result, Violation("mutated", record.name,
                                        self.source_fp.changed_path(source),
                                        "the stage mutated the source IRModule in place",
                                        *(blamed or (None, None))))
        # Move the baseline so a later stage is blamed only for its own mutation.
        self.pristine_source = self.source_fp.snapshot()
        self.source_fp = Fingerprint.of(source, with_json=True)
        return True

    def _input_path(self, stage, mutated) -> str:
        """Where the stage's input changed: replay the earlier stages over a pristine copy."""
        try:
            pristine = self.pristine_source or self.source_fp.snapshot()
            with compat.pass_context([]):
                for earlier in self.path.stages[:self.path.stages.index(stage)]:
                    pristine = earlier.run(pristine)
            return compat.first_mismatch(pristine, mutated) or "(structural hash changed)"
        except Exception as exc:  # noqa: BLE001 - the path is a courtesy, the verdict stands
            return f"(structural hash changed; replay failed: {type(exc).__name__})"

    def _check_source_json(self, result: Result, source) -> None:
        """The source's JSON text at the end: fields outside structural equality."""
        if self.source_fp.hash_changed(source):
            return   # already blamed on a stage by the hash
        path = self.source_fp.changed_path(source)
        if path is None:
            return
        stage, pass_name, index = self._replay_naming_json_change(self.source_fp)
        self._violate(result, Violation(
            "mutated", stage, path,
            "the source changed outside structural equality (its JSON text differs)",
            pass_name, index))

    def _replay_naming_json_change(self, source_fp: Fingerprint):
        """Replay the path over a pristine copy comparing JSON after every pass.

        Paid only when the final JSON check found a change: (stage, pass, index)
        of the first pass (or, for a stage that is no pass, the stage) that changed
        its input or the source outside structural equality.
        """
        pristine = source_fp.snapshot()
        replay = PassGuard(_no_emit, json_watch=True)
        current = pristine
        try:
            for stage in self.path.stages:
                watched = [Watched("source", pristine, by_json=True)]
                if current is not pristine:
                    watched.append(Watched("stage input", current, by_json=True))
                replay.begin_stage(stage.name, watched)
                with compat.pass_context([replay.instrument()]):
                    output = stage.run(current)
                replay.end_stage()
                if replay.findings:
                    record = replay.findings[0].record
                    return stage.name, record.name, record.index
                if any(w.moved() for w in watched):
                    return stage.name, None, None
                if stage is self.path.final:
                    break
                current = output
        except Exception:  # noqa: BLE001 - naming is a courtesy; the violation stands
            pass
        return "(whole path)", None, None

"""Invariant 1, blamed: which stage, and which pass, changed a module it was given.

After each stage: the source's structural hash (a stage that moved it is blamed with
the first pass the guard saw), the stage input's hash (and, for the sweep, its JSON
text), then the guard's per-pass findings. At the end: the source's JSON text, which
sees fields outside structural equality; when only it moved, the path is replayed over
a pristine copy comparing JSON after every pass, to name the pass (paid only then).
"""
from __future__ import annotations

from harness import classify
from harness.oracles.fingerprint import Fingerprint
from harness.oracles.recorder import Recorder, no_emit
from harness.result import StageRecord
from harness.tvmapi import calls, structure
from harness.tvmapi.guard_records import Watched
from harness.tvmapi.pass_guard import PassGuard
from harness.tvmapi.pipelines import Pipeline
from harness.verdict import Outcome, Violation

# The most telling finding first: the source, the stage's input, a pass's own input.
_ORDER = ("source", "stage input", "its input")


class MutationBlame:
    def __init__(self, pipeline: Pipeline, recorder: Recorder, source):
        self.pipeline, self.recorder, self.source = pipeline, recorder, source
        self.source_fp = Fingerprint.of(source, with_json=True)
        self.pristine_source = None   # the source before a stage mutated it

    def after_stage(self, record: StageRecord, stage, current, input_fp, findings,
                    edited_in_place=()) -> None:
        """A `mutated` violation for what the stage mutated (the source, its input, or an
        intermediate module a pass received), with the pass when one is known; and one for
        each other pass the guard saw mutate a module it was given, so a registered bug
        earlier in the stage cannot hide a new one after it (dlight's ApplyDefaultSchedule
        hid tirx.SplitHostDevice on every GPU compile).
        `edited_in_place`: pieces the guard found edited at the stage's end (seen_pieces)
        that no finding names (its replay did not repeat the edit)."""
        count = len(self.recorder.result.violations)
        self._blame_stage(record, stage, current, input_fp, findings, edited_in_place)
        named = {v.pass_name for v in self.recorder.result.violations[count:]}
        for position, finding in enumerate(findings):
            # findings come in the order passes end: an earlier one with a later start
            # ran inside this pass, whose input moved by that nested pass's doing
            nested = any(earlier.record.index > finding.record.index
                         for earlier in findings[:position])
            if finding.record.name not in named and not nested:
                named.add(finding.record.name)
                self.recorder.violate(Violation(
                    Outcome.MUTATED, stage.name, "(pass input)",
                    f"the pass mutated {finding.what}: {finding.how}",
                    finding.record.name, finding.record.index))

    def _blame_stage(self, record: StageRecord, stage, current, input_fp, findings,
                     edited_in_place) -> None:
        blamed = (findings[0].record.name, findings[0].record.index) if findings else None
        pass_fields = blamed or (None, None)
        if self._source_moved(record, blamed):
            return
        if input_fp is not None and input_fp.hash_changed(current):
            self.recorder.violate(Violation(
                "mutated", stage.name, self._input_path(stage, current),
                "the stage mutated its input IRModule in place", *pass_fields))
            return
        if input_fp is not None and input_fp.json_text is not None and not findings \
                and input_fp.changed_path(current):
            self.recorder.violate(Violation(
                "mutated", stage.name, "(outside structural equality)",
                "the stage changed its input IRModule's JSON text in place", *pass_fields))
            return
        if not findings:
            if edited_in_place:
                names = ", ".join(sorted({piece.label for piece in edited_in_place}))
                self.recorder.violate(Violation(
                    Outcome.MUTATED, stage.name, "(pass input)",
                    f"a pass of the stage edited IR it was handed in place ({names}: its "
                    "structural hash moved); replayed under the per-pass check, the stage "
                    "did not do it again, so no pass is named"))
            return
        finding = min(findings, key=lambda found: _ORDER.index(found.what))
        if finding.what == "source":
            record.mutated_source = True
            what, where = "the source IRModule", "(outside structural equality)"
            self.source_fp = Fingerprint.of(self.source, with_json=True)   # blamed here
        elif finding.what == "stage input":
            what, where = "the stage's input IRModule", "(outside structural equality)"
        else:
            # Inside a Sequential the mutated module is an intermediate one that only a
            # per-pass check (the guard's hash or identity map of each pass's input) sees.
            what, where = "its input (an intermediate module of the stage)", "(pass input)"
        self.recorder.violate(Violation(Outcome.MUTATED, stage.name, where,
                                        f"the pass mutated {what}: {finding.how}",
                                        finding.record.name, finding.record.index))

    def at_end(self) -> None:
        """The source's JSON text at the end: fields outside structural equality."""
        if self.source_fp.hash_changed(self.source):
            return   # already blamed on a stage by the hash
        path = self.source_fp.changed_path(self.source)
        if path is None:
            return
        stage, pass_name, index, note = self._replay_naming_json_change()
        self.recorder.violate(Violation(
            "mutated", stage, path,
            "the source changed outside structural equality (its JSON text differs)" + note,
            pass_name, index))

    def _source_moved(self, record: StageRecord, blamed) -> bool:
        """Blame the stage (and the pass, when known) if the source's hash moved."""
        if not self.source_fp.hash_changed(self.source):
            return False
        record.mutated_source = True
        self.recorder.violate(Violation(Outcome.MUTATED, record.name,
                                        self.source_fp.changed_path(self.source),
                                        "the stage mutated the source IRModule in place",
                                        *(blamed or (None, None))))
        # Move the baseline so a later stage is blamed only for its own mutation.
        self.pristine_source = self.source_fp.snapshot()
        self.source_fp = Fingerprint.of(self.source, with_json=True)
        return True

    def replay_naming_in_place_edit(self, stage, passes) -> list:
        """The guard saw, at the stage's end, a piece of IR edited in place: replay the path
        over a pristine copy of the source, this stage under the eager per-pass check (each
        pass's whole input hashed before and after it), for the findings that name the pass.
        The original run's record of that pass is marked. None found (TVM failing the
        replay, or the edit not repeating): the caller reports the edit unnamed."""
        replay = classify.Call.of(stage.name, self._replay_stage_eagerly, stage)
        findings = replay.value if replay.ok else []
        for finding in findings:
            for record in passes:
                if (record.index, record.name) == (finding.record.index, finding.record.name):
                    record.mutated_input = True
        return findings

    def _replay_stage_eagerly(self, stage) -> list:
        source = self.pristine_source or self.source_fp.snapshot()
        current = source
        with calls.pass_context([]):
            for earlier in self.pipeline.stages[:self.pipeline.stages.index(stage)]:
                current = earlier.run(current)
        guard = PassGuard(no_emit, eager=True)
        watched = [Watched("source", source)]
        if current is not source:
            watched.append(Watched("stage input", current))
        guard.begin_stage(stage.name, watched)
        try:
            with calls.pass_context([guard.instrument()]):
                stage.run(current)
        finally:
            end = guard.end_stage()
        if end.bug is not None:   # ours, kept inside TVM's callbacks
            raise end.bug
        return end.findings

    def _input_path(self, stage, mutated) -> str:
        """Where the stage's input changed: replay the earlier stages over a pristine copy.
        TVM failing the replay leaves the verdict standing (the path is a courtesy); our
        own exception is a harness error, as anywhere."""
        replay = classify.Call.of(stage.name, self._replayed_input_path, stage, mutated)
        if replay.ok:
            return replay.value
        return f"(structural hash changed; replay failed: {type(replay.error).__name__})"

    def _replayed_input_path(self, stage, mutated) -> str:
        pristine = self.pristine_source or self.source_fp.snapshot()
        with calls.pass_context([]):
            for earlier in self.pipeline.stages[:self.pipeline.stages.index(stage)]:
                pristine = earlier.run(pristine)
        return structure.first_mismatch(pristine, mutated) or "(structural hash changed)"

    def _replay_naming_json_change(self):
        """Replay the path over a pristine copy comparing JSON after every pass.

        (stage, pass, index, note) of the first pass (or, for a stage that is no pass,
        the stage) that changed its input or the source outside structural equality;
        the note says why no pass was named when TVM failed the replay (naming is a
        courtesy, the violation stands; our own exception is a harness error).
        """
        replay = classify.Call.of("", self._replay, self.source_fp.snapshot())
        if replay.ok:
            return replay.value
        return "(whole path)", None, None, \
            f"; the replay to name the pass failed: {type(replay.error).__name__}"

    def _replay(self, pristine):
        replay = PassGuard(no_emit, json_watch=True)
        current = pristine
        for stage in self.pipeline.stages:
            watched = [Watched("source", pristine, by_json=True)]
            if current is not pristine:
                watched.append(Watched("stage input", current, by_json=True))
            replay.begin_stage(stage.name, watched)
            with calls.pass_context([replay.instrument()]):
                output = stage.run(current)
            end = replay.end_stage()
            if end.bug is not None:   # ours, kept inside TVM's callbacks
                raise end.bug
            if end.findings:
                record = end.findings[0].record
                return stage.name, record.name, record.index, ""
            if any(w.moved() for w in watched):
                return stage.name, None, None, ""
            if stage is self.pipeline.final:
                break
            current = output
        return "(whole path)", None, None, ""

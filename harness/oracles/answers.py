"""Invariant 3: the compiled module computes the right numbers.

On the compile path for a CPU target, the executable runs on the Relax VM with seeded
inputs (oracles.numbers) and its answer is compared with
- each copy's executable (same code: bit for bit) — invariant 2 in numbers;
- the source's, when stages ran before the compile (the NHWC model's answer against the
  NCHW one's: the seed's layout pass family); a difference names the first stage whose
  output answers differently;
- the framework's own (ONNX Runtime, PyTorch), when the door has one; a difference is
  confirmed by a second implementation (onnx.reference for ONNX) and searched down to the
  pass of `tvm.compile` that made it (oracles.answer_bisect).
Each comparison is recorded (verdict.AnswerRecord), agreeing or not, with whether the
answer depends on the input at all; a mismatch is a `wrong-result` violation.
Nondeterministic ops (random sampling) leave the module uncompared, said so.
"""
from __future__ import annotations

import dataclasses

from harness import classify, doors
from harness.oracles import answer_bisect, numbers
from harness.oracles.recorder import Recorder
from harness.tvmapi import calls, execute, ir
from harness.verdict import AnswerRecord, Outcome, Phase, Violation

# Ops whose answer is drawn at random: excluded by rule. (Relax's nn.dropout is the
# identity once legalized, as ONNX Runtime's Dropout outside training mode: compared; an
# ONNX Dropout in training mode leaves the framework's answer out: onnx_door.)
NONDETERMINISTIC = ("random", "multinomial", "bernoulli")


@dataclasses.dataclass
class References:
    """The frameworks' answers for the model a source came from (its door's reference, and
    a second implementation to confirm a difference with)."""
    model: object

    def answers(self, inputs, second) -> tuple[str, list, list] | str:
        """(name, answer on `inputs`, on `second`) of the door's reference, else of its
        second one; why neither can answer, as text."""
        reasons = []
        for ask in (doors.answer, doors.second_answer):
            try:
                name, want = ask(self.model, inputs)
                return name, want, ask(self.model, second)[1]
            except doors.ReferenceUnavailable as reason:
                reasons.append(str(reason))
        return "; ".join(reasons)

    def second_opinion(self, first: str, inputs) -> tuple[str, list] | str:
        """The second reference's answer, unless it is the one that answered first."""
        try:
            name, other = doors.second_answer(self.model, inputs)
        except doors.ReferenceUnavailable as reason:
            return str(reason)
        return f"{name} was the only one to answer" if name == first else (name, other)


class AnswerChecks:
    def __init__(self, pipeline, recorder: Recorder):
        self.pipeline, self.recorder = pipeline, recorder
        self.final = pipeline.final.name

    def check(self, source, front: list, executable, copies: dict,
              references: References | None) -> None:
        """`front`: (stage, its output) of every stage before the compile, in order;
        `copies`: the executable of each copy of the compile's input, by copier."""
        self.entry = execute.entry_name(source)
        refusal = self._refusal(source)
        if refusal:
            self._record("every comparison", "not compared", refusal)
            return
        specs = execute.input_specs(source)
        positive = ir.count_calls(source, numbers.POSITIVE_DOMAIN_OPS) > 0
        inputs = numbers.draw(specs, 0, positive)
        second = numbers.draw(specs, 1, positive)
        answer = self._run(executable, inputs, second)
        if answer is None:
            return
        got, got_again = answer
        for name, copy in copies.items():
            self._copy(name, copy, inputs, got, got_again)
        source_answer = (got, got_again)
        if front:
            source_answer = self._front(source, front, inputs, second, answer)
        if references is not None and source_answer is not None:
            self._reference(source, references, inputs, second, source_answer[0])

    def _refusal(self, source) -> str:
        if self.entry is None:
            return f"no entry function ({' or '.join(execute.ENTRY_NAMES)}) to run"
        specs = execute.input_specs(source)
        unusable = [spec.name for spec in specs if not numbers.drawable(spec)]
        if unusable:
            return (f"inputs {', '.join(unusable)} have symbolic shapes or a type no input "
                    "is drawn for")
        random = sorted({name for name in ir.called_ops(source)
                         if any(word in name for word in NONDETERMINISTIC)})
        if random:
            return f"nondeterministic ops ({', '.join(random)}): excluded by rule"
        return ""

    def _run(self, executable, inputs, second):
        """(answer on `inputs`, answer on `second`); None when TVM failed running it (an
        `error` violation: a compiled module that cannot run its own inputs)."""
        with self.recorder.phase("answer", self.final):
            ran = classify.Call.of(self.final, lambda: (self._execute(executable, inputs),
                                                        self._execute(executable, second)))
        if ran.ok:
            return ran.value
        self.recorder.violate(Violation(
            Outcome.ERROR, self.final, "(run)", f"the compiled module failed to run on "
            f"drawn inputs: {ran.detail}", phase=Phase.ANSWER))
        return None

    def _copy(self, name, copy, inputs, got, got_again) -> None:
        with self.recorder.phase("answer", self.final, name):
            ran = classify.Call.of(self.final, self._execute, copy, inputs)
        label = f"{name} copy"
        if not ran.ok:
            self._record(label, "not compared", f"it failed to run: {ran.detail}")
            self.recorder.violate(Violation(
                Outcome.WRONG_RESULT, self.final, "(answer vs the source's)",
                f"the {name} copy's executable failed to run where the source's ran: "
                f"{ran.detail}", phase=Phase.COPY, copier=name))
            return
        difference = numbers.compare(got, ran.value, numbers.SAME_CODE)
        self._record(label, difference, sensitive=numbers.sensitive(got, got_again))
        if not difference.agree:
            self.recorder.violate(Violation(
                Outcome.WRONG_RESULT, self.final, "(answer vs the source's)",
                f"the {name} copy computes other numbers than the module it copies: "
                f"{difference.mismatch}", phase=Phase.COPY, copier=name))

    def _front(self, source, front, inputs, second, answer):
        """The source's own answer (compiled without the stages before the compile),
        compared with the path's; a difference names the stage. None: not compiled."""
        before = "the module before " + ", ".join(stage.name for stage, _ in front)
        with self.recorder.phase("answer", self.final):
            made = classify.Call.of(self.final, lambda: self._answers(source, inputs, second))
        if not made.ok:
            self._record(before, "not compared", f"it does not compile: {made.detail}")
            return None
        want, want_again = made.value
        difference = numbers.compare(want, answer[0], numbers.DIFFERENT_CODE)
        self._record(before, difference, sensitive=numbers.sensitive(want, want_again))
        if not difference.agree:
            stage = self._stage_that_changed(front, inputs, want)
            passes = [record.name for record in self.recorder.result.passes
                      if record.stage == stage.name]
            self.recorder.violate(Violation(
                Outcome.WRONG_RESULT, stage.name, "(answer vs the stage's input)",
                f"after {stage.name} the module computes other numbers than before it: "
                f"{difference.mismatch}", passes[-1] if passes else None,
                len(passes) or None, phase=Phase.ANSWER))
        return made.value

    def _stage_that_changed(self, front, inputs, want):
        """The first stage whose output answers differently from the source (the last
        one when every earlier output fails to compile or agrees)."""
        for stage, output in front[:-1]:
            ran = classify.Call.of(self.final, lambda output=output: self._execute(
                calls.compile_module(output, self.pipeline.target), inputs))
            if ran.ok and not numbers.compare(want, ran.value, numbers.DIFFERENT_CODE).agree:
                return stage
        return front[-1][0]

    def _answers(self, mod, inputs, second):
        executable = calls.compile_module(mod, self.pipeline.target)
        return self._execute(executable, inputs), self._execute(executable, second)

    def _execute(self, executable, inputs):
        return execute.run(executable, inputs, self.entry)

    def _reference(self, source, references, inputs, second, got) -> None:
        """TVM's answer against the framework's; before a difference is blamed on TVM, a
        second, independent implementation is asked: agreeing with TVM, the frameworks
        disagree and nothing is TVM's finding."""
        found = references.answers(inputs, second)
        if isinstance(found, str):
            self._record("framework", "not compared", found)
            return
        name, want, want_again = found
        difference = numbers.compare(want, got, numbers.DIFFERENT_CODE)
        self._record(name, difference, sensitive=numbers.sensitive(want, want_again))
        if difference.agree:
            return
        opinion = references.second_opinion(name, inputs)
        if isinstance(opinion, str):
            confirmed = f"; no second opinion: {opinion}"
        else:
            other_name, other = opinion
            with_tvm = numbers.compare(other, got, numbers.DIFFERENT_CODE)
            self._record(other_name, with_tvm)
            if with_tvm.agree:   # the first framework is the odd one out
                self.recorder.result.answers[-1].detail = (
                    f"agrees with TVM where {name} does not: the references disagree, "
                    "no finding")
                return
            confirmed = (f"; {other_name} agrees with {name}"
                         if numbers.compare(want, other, numbers.DIFFERENT_CODE).agree
                         else f"; {other_name} agrees with neither")
        with self.recorder.phase("answer", self.final):
            culprit = answer_bisect.first_wrong_pass(source, self.pipeline.target, inputs,
                                                     want, self.entry)
        named = (f"; the first pass application after which the answer is wrong: "
                 f"{culprit.pass_name} (#{culprit.index} of the optional ones; right "
                 f"without it, {culprit.probes} compiles)" if culprit.pass_name else
                 f"; no pass named: {culprit.why}")
        self.recorder.violate(Violation(
            Outcome.WRONG_RESULT, self.final, f"(answer vs {name})",
            f"TVM's answer is not {name}'s: {difference.mismatch}{confirmed}{named}",
            culprit.pass_name, culprit.index or None, phase=Phase.ANSWER))

    def _record(self, comparison: str, found, detail: str = "",
                sensitive: bool | None = None) -> None:
        if isinstance(found, numbers.Difference):
            record = AnswerRecord(comparison, "agree" if found.agree else "differ",
                                  found.mismatch, found.max_abs, found.max_rel,
                                  found.headroom, sensitive)
        else:
            record = AnswerRecord(comparison, found, detail)
        self.recorder.result.answers.append(record)

"""Invariant 3: the compiled module computes the right numbers.

On the compile path for a CPU target, the executable runs on the Relax VM with seeded
inputs (oracles.numbers) and its answer is compared with
- each copy's executable (same code: bit for bit) — invariant 2 in numbers — where the
  copy was seen lossy or compiled to other code (else its answer is the source's: said);
- the source's, when stages ran before the compile (the NHWC model's answer against the
  NCHW one's: the seed's layout pass family); a difference names the first stage whose
  output answers differently;
- the framework's own (ONNX Runtime, PyTorch), when the door has one; a difference is
  confirmed by a second implementation (onnx.reference for ONNX) and searched down to the
  pass of `tvm.compile` that made it (oracles.answer_bisect).
Each comparison is recorded (result.AnswerRecord), agreeing or not, with whether the
answer depends on the input at all; a mismatch is a `wrong-result` violation.
Nondeterministic ops (random sampling) and ops a lone VM cannot run on drawn inputs (Disco's
collectives, assertions) leave the module uncompared, said so. A run that raises is an
`error` finding only when every input was drawn in its domain (floats, booleans): an
integer input may be an index the draw put out of range.
"""
from __future__ import annotations

import dataclasses

from harness import classify, doors, signature
from harness.classify import HarnessBug
from harness.oracles import answer_bisect, answer_localize, forked, numbers
from harness.oracles.recorder import Recorder
from harness.result import AnswerRecord
from harness.tvmapi import calls, execute, ir
from harness.verdict import Outcome, Phase, Violation

# Ops whose answer is drawn at random: excluded by rule. (Relax's nn.dropout is the
# identity once legalized, as ONNX Runtime's Dropout outside training mode: compared; an
# ONNX Dropout in training mode leaves the framework's answer out: onnx_door.)
NONDETERMINISTIC = ("random", "multinomial", "bernoulli")
# Ops whose run needs what a lone VM on drawn inputs is not: Disco's workers (the
# collectives), or data an assertion accepts. Excluded by rule, said.
NEEDS_A_RUNTIME = ("relax.ccl.", "disco", "relax.assert_op")


@dataclasses.dataclass
class References:
    """The frameworks' answers for the model a source came from (its door's reference, and
    a second implementation to confirm a difference with)."""
    model: object

    def answers(self, inputs, second=None) -> tuple[str, list, list | None] | str:
        """(name, answer on `inputs`, on `second` (None when not asked)) of the door's
        reference, else of its second one; why neither can answer, as text."""
        reasons = []
        for ask in (doors.answer, doors.second_answer):
            try:
                name, want = ask(self.model, inputs)
                return name, want, None if second is None else ask(self.model, second)[1]
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
        # an integer input may be an index or a divisor: its run failing may be the draw's
        self.indexing = any(numbers.is_integer(spec.dtype) for spec in specs)
        positive = ir.count_calls(source, numbers.POSITIVE_DOMAIN_OPS) > 0
        inputs = numbers.draw(specs, 0, positive)
        second = numbers.draw(specs, 1, positive)
        got = self._run(executable, inputs)
        if got is None:
            return
        # The framework answers first (it is cheap; TVM's untuned code is not): its two
        # draws say whether the answer depends on the input at all. Without one, TVM's
        # executable runs the second draw.
        framework = references.answers(inputs, second) if references is not None else \
            "the door has no framework to compare with"
        if isinstance(framework, str):
            rerun = self._run(executable, second)
            self.sensitive = None if rerun is None else numbers.sensitive(got, rerun)
        else:
            self.sensitive = numbers.sensitive(framework[1], framework[2])
        for name, copy in copies.items():
            self._copy(name, copy, inputs, got)
        source_answer = self._front(source, front, inputs, got) if front else got
        if source_answer is None:
            return
        if isinstance(framework, str):
            if references is not None:
                self._record("framework", "not compared", framework)
            return
        # said in its line: with stages before the compile (a layout, an injected pass) the
        # framework is compared with the module before them, not with what was compiled
        before = (" (the module before " + ", ".join(stage.name for stage, _ in front) + ")"
                  if front else "")
        self._reference(source, references, inputs, framework[:2], source_answer, before)

    def _refusal(self, source) -> str:
        if self.entry is None:
            return f"no entry function ({' or '.join(execute.ENTRY_NAMES)}) to run"
        specs = execute.input_specs(source)
        unusable = [spec.name for spec in specs if not numbers.drawable(spec)]
        if unusable:
            return (f"inputs {', '.join(unusable)} have symbolic shapes or a type no input "
                    "is drawn for")
        called = set(ir.called_ops(source))
        random = sorted(name for name in called
                        if any(word in name for word in NONDETERMINISTIC))
        if random:
            return f"nondeterministic ops ({', '.join(random)}): excluded by rule"
        needing = sorted(name for name in called
                         if any(word in name for word in NEEDS_A_RUNTIME))
        if needing:
            return (f"ops that need more than a lone VM on drawn inputs ({', '.join(needing)}: "
                    "Disco's workers, or data an assertion accepts): excluded by rule")
        return ""

    def _run(self, executable, inputs, copier: str | None = None):
        """The executable's answer on `inputs`, run in a forked child; None when it raised
        or died. That is a finding (`error`, or `crash` with its signal) only when every
        input was drawn in its domain: an integer input may be an index the draw put out
        of range, or a divisor it made zero (said, not compared)."""
        with self.recorder.phase(Phase.ANSWER, self.final, copier):
            ran = forked.call(lambda: self._execute(executable, inputs))
        if ran.ok:
            return ran.value
        if ran.ours:
            raise HarnessBug(self.final, RuntimeError(ran.ours))
        what = ran.error or f"killed by {ran.signal}"
        if self.indexing:
            self._record(f"{copier} copy" if copier else "every comparison", "not compared",
                         f"it failed on drawn integer inputs, which may index out of range "
                         f"or divide by zero: {what}")
            return None
        self.recorder.violate(Violation(
            Outcome.CRASH if ran.signal else Outcome.ERROR, self.final, "(run)",
            f"the compiled {f'{copier} copy' if copier else 'module'} failed to run on "
            f"drawn inputs: {what}", phase=Phase.COPY if copier else Phase.ANSWER,
            copier=copier, signal=ran.signal or None))
        return None

    def _copy(self, name, copy, inputs, got) -> None:
        label = f"{name} copy"
        if not any(v.copier == name for v in self.recorder.result.violations):
            # A lossless copy (structurally equal, constants by value) that compiled to the
            # same code as the source's (the outcome's signatures): its answer is the
            # source's. Running untuned code again costs seconds (yolov3-tiny: 2.5 s).
            self._record(label, "not run", "a lossless copy compiled to the source's code: "
                         "its answer is the source's")
            return
        answer = self._run(copy, inputs, copier=name)
        if answer is None:
            return
        difference = numbers.compare(got, answer, numbers.SAME_CODE)
        self._record(label, difference, sensitive=self.sensitive)
        if not difference.agree:
            self.recorder.violate(Violation(
                Outcome.WRONG_RESULT, self.final, "(answer vs the source's)",
                f"the {name} copy computes other numbers than the module it copies: "
                f"{difference.mismatch}", phase=Phase.COPY, copier=name))

    def _front(self, source, front, inputs, got):
        """The source's own answer (compiled without the stages before the compile),
        compared with the path's; a difference names the stage. None: not compiled."""
        before = "the module before " + ", ".join(stage.name for stage, _ in front)
        with self.recorder.phase(Phase.ANSWER, self.final):
            compiled = classify.Call.of(self.final, calls.compile_module, source,
                                    self.pipeline.target)
        if not compiled.ok:
            self._record(before, "not compared", f"it does not compile: {compiled.detail}")
            return None
        want = self._run(compiled.value, inputs)
        if want is None:
            return None
        difference = numbers.compare(want, got, numbers.DIFFERENT_CODE)
        self._record(before, difference, sensitive=self.sensitive)
        if not difference.agree:
            stage = self._stage_that_changed(front, inputs, want)
            passes = [record.name for record in self.recorder.result.passes
                      if record.stage == stage.name]
            self.recorder.violate(Violation(
                Outcome.WRONG_RESULT, stage.name, "(answer vs the stage's input)",
                f"after {stage.name} the module computes other numbers than before it: "
                f"{difference.mismatch}", passes[-1] if passes else None,
                len(passes) or None, phase=Phase.ANSWER))
        return want

    def _stage_that_changed(self, front, inputs, want):
        """The first stage whose output answers differently from the source (the last
        one when every earlier output fails to compile or agrees)."""
        for stage, output in front[:-1]:
            ran = forked.call(lambda output=output: self._execute(
                calls.compile_module(output, self.pipeline.target), inputs))
            if ran.ok and not numbers.compare(want, ran.value, numbers.DIFFERENT_CODE).agree:
                return stage
        return front[-1][0]

    def _execute(self, executable, inputs):
        return execute.run(executable, inputs, self.entry)

    def _reference(self, source, references, inputs, framework, got, before: str = "") -> None:
        """TVM's answer against the framework's; before a difference is blamed on TVM, a
        second, independent implementation is asked: agreeing with TVM, the frameworks
        disagree and nothing is TVM's finding."""
        name, want = framework
        difference = numbers.compare(want, got, numbers.DIFFERENT_CODE)
        self._record(name + before, difference, sensitive=self.sensitive)
        if difference.agree:
            return
        opinion = references.second_opinion(name, inputs)
        if isinstance(opinion, str):
            confirmed = f"; no second opinion: {opinion}"
        else:
            other_name, other = opinion
            with_tvm = numbers.compare(other, got, numbers.DIFFERENT_CODE)
            self._record(other_name + before, with_tvm)
            if with_tvm.agree:   # the first framework is the odd one out
                self.recorder.result.answers[-1].detail = (
                    f"agrees with TVM where {name} does not: the references disagree, "
                    "no finding")
                return
            confirmed = (f"; {other_name} agrees with {name}"
                         if numbers.compare(want, other, numbers.DIFFERENT_CODE).agree
                         else f"; {other_name} agrees with neither")
        with self.recorder.phase(Phase.ANSWER, self.final):
            culprit = answer_bisect.first_wrong_pass(source, self.pipeline.target, inputs,
                                                     want, self.entry)
        named = (f"; the first pass application after which the answer is wrong: "
                 f"{culprit.pass_name} (#{culprit.index} of the optional ones; right "
                 f"without it, {culprit.probes} compiles)" if culprit.pass_name else
                 f"; no pass named: {culprit.why}")
        where = f"(answer vs {name})"
        if not culprit.pass_name:   # the frontend's or a required lowering's: which node?
            with self.recorder.phase(Phase.ANSWER, self.final):
                found = answer_localize.first_wrong_node(references.model,
                                                         self.pipeline.target, inputs,
                                                         self.entry)
            if found.cut is not None:
                # the operator (and the attributes given) names the cause: a registry
                # entry matches it on any model that meets the same converter
                where = signature.localized(name, found.cut.cause())
                named += (f"; the first node whose output differs: {found.cut.describe()}: "
                          f"{found.mismatch} ({found.probes} compiles)")
            else:
                named += f"; no node named: {found.why}"
        self.recorder.violate(Violation(
            Outcome.WRONG_RESULT, self.final, where,
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

"""Invariant 2 over a run: copies of a module are the module, and give the same outcome.

Each copier copies the module and the copy is compared (oracles.roundtrip); the final
stage's input is copied (deepcopy by default, the user's workaround; every copier with
`full_copies`) and the final stage run on each copy must give the same outcome as on
the original (the seed's symptom was extraction failing on a copy). For the pass sweep
the final stage also runs a second time on the same input first (hidden state), so a
moving target is not blamed on a copy. With `full_copies` the whole path runs over
each copy of the source. Copies run in a plain PassContext, without the guard.
"""
from __future__ import annotations

import time

from harness import classify
from harness.options import Options
from harness.oracles import outcomes, roundtrip, roundtrip_memo
from harness.oracles.recorder import Recorder
from harness.result import CopierRecord
from harness.tvmapi import calls, structure
from harness.tvmapi.pipelines import Pipeline
from harness.verdict import Outcome, Phase, Violation


class CopyChecks:
    def __init__(self, pipeline: Pipeline, options: Options,
                 copier_table: dict[str, roundtrip.Copier], recorder: Recorder):
        self.pipeline, self.options, self.copiers = pipeline, options, copier_table
        self.recorder = recorder

    def copies(self, mod, stage: str, json_text: str | None = None,
               only: tuple[str, ...] | None = None, memo: bool = False,
               what: str = "input", keep: tuple[str, ...] = (),
               made_by: str | None = None) -> dict:
        """Copy `mod` with every copier and compare; the good copies, by copier name.

        `json_text`, when the caller already serialized `mod`, spares the JSON copiers
        (deepcopy's save and the explicit one) a second save_json, the costliest call on
        weight-heavy models: they load the text.
        `memo`: a round trip this build already made losslessly of the same text is not
        made again (roundtrip_memo). `keep`: the copiers whose copy the caller runs on
        (the compile path's one stage takes the source): a remembered one is still loaded
        from the text, not compared again. `made_by`: the pass whose output `mod` is (the
        sweep's), named in a violation as the suite guard names it.
        """
        good_copies = {}
        memo_key = roundtrip_memo.module_key(json_text, mod) \
            if memo and json_text is not None else None
        for name, copier in self.copiers.items():
            if only is not None and name not in only:
                continue
            copier_key = memo_key if copier is roundtrip.COPIERS.get(name) else None
            from_text = roundtrip.from_text(copier, json_text)
            before = roundtrip_memo.remembered(name, copier_key) if copier_key else None
            if before is not None and not before.lossless:   # refused, in its own words
                self.recorder.result.copiers.append(CopierRecord(
                    name, Outcome.UNSUPPORTED, 0.0, before.refusal))
                continue
            if before is not None and name in keep and from_text is not copier:
                with self.recorder.phase(Phase.COPY, stage, name):
                    copy, failure = roundtrip.copy_with(name, from_text, mod, stage, what)
                if failure is None:
                    good_copies[name] = copy
                else:   # failing now: checked in full below
                    before = None
            if before is not None:
                self.recorder.result.copiers.append(CopierRecord(
                    name, Outcome.PASS, 0.0, "remembered: this build copied this module text "
                    "losslessly before" + ("; the copy loaded again to run on"
                                           if name in good_copies else "")))
                continue
            with self.recorder.phase(Phase.COPY, stage, name):
                copy = self._copy_and_compare(name, from_text, mod, stage, json_text, what,
                                              copier_key, made_by)
            if copy is not None:
                good_copies[name] = copy
        return good_copies

    def _copy_and_compare(self, name, copier, mod, stage, json_text, what, memo_key,
                          made_by=None):
        """One copier's copy of `mod`, compared; None when it failed or was refused."""
        records = self.recorder.result.copiers
        started = time.perf_counter()
        def unsupported(exc):
            records.append(CopierRecord(
                name, Outcome.UNSUPPORTED, round(time.perf_counter() - started, 4), str(exc)))
            if memo_key is not None:
                roundtrip_memo.remember(name, memo_key, unsupported=str(exc))

        try:
            copy, failure = roundtrip.copy_with(name, copier, mod, stage, what)
        except roundtrip.Unsupported as exc:
            return unsupported(exc)
        violation = failure or roundtrip.compare(mod, copy, name, stage, json_text, what)
        confirm = getattr(copier, "confirm", None)
        if violation and confirm is not None:
            # A fast copier's difference stands only if its exact form shows it too (the
            # TVMScript copier binds constants outside the text; repro.py prints them).
            try:
                copy, failure = roundtrip.copy_with(name, confirm, mod, stage, what)
            except roundtrip.Unsupported as exc:
                return unsupported(exc)
            violation = failure or roundtrip.compare(mod, copy, name, stage, json_text, what)
        records.append(CopierRecord(
            name, Outcome.LOSSY_ROUNDTRIP if violation else Outcome.PASS,
            round(time.perf_counter() - started, 4), violation.detail if violation else ""))
        if violation:
            violation.copied = what   # a fact the reproducer reads, not a word of the detail
            violation.pass_name = violation.pass_name or made_by
            self.recorder.violate(violation)
        elif memo_key is not None and copy is not None:
            roundtrip_memo.remember(name, memo_key)
        return copy

    def final_copiers(self) -> tuple[str, ...]:
        """The copiers whose copies of its input the final stage runs on."""
        return tuple(self.copiers) if self.options.full_copies else ("deepcopy",)

    def final_stage_on_copies(self, final_input, expected, made: dict | None = None,
                              earlier: list | None = None) -> dict:
        """The final stage's input round-trips, and its copies give the same outcome.

        By default only through deepcopy, the user's workaround, which TVM implements
        as save_json + load_json: the explicit JSON copy would repeat the same
        serialization of folded weights (seconds on resnet50). --full-copies adds it.
        `made`: good copies of this very input made before the path ran (the compile
        path's one stage takes the source): used again, so no copier copies one module
        twice, unless a mutation has been seen since (they would be of another module).
        `earlier`: the path's modules before the final stage ((None, the source), then
        (stage, its output) each), where an outcome that follows object identity is traced
        back to the pass that left an address-hashed object in the module.
        The final stage's output on each copy that ran, by copier (the answers oracle runs
        the executables).
        """
        final = self.pipeline.final
        if self.pipeline.run_twice and not self._deterministic(final_input, expected):
            return {}
        only = self.final_copiers()
        mutated = any(v.kind == Outcome.MUTATED for v in self.recorder.result.violations)
        reused = {name: copy for name, copy in (made or {}).items()
                  if not mutated and name in only}
        missing = tuple(name for name in only if name not in reused)
        copies = {**reused, **(self.copies(final_input, final.name, only=missing)
                               if missing else {})}
        outputs = {}
        for name, copy in copies.items():
            label = f"{name} copy of its input"
            output = self._same_outcome(
                name, label, expected, lambda copy=copy: final.run(copy),
                on_another_copy=lambda name=name: self._on_another_copy(name, final_input),
                find_first_pass_apart=lambda name=name: self._first_pass_apart(
                    name, final_input),
                earlier=lambda name=name: self._pass_leaving_address_hashed(name,
                                                                            earlier or []))
            if output is not None:
                outputs[name] = output
        return outputs

    def whole_path_on_source_copies(self, source, expected) -> None:
        """The whole path over each copy of the source gives the same outcome."""
        def whole_path(copy):
            for stage in self.pipeline.stages:
                copy = stage.run(copy)
            return copy
        for name, copier in self.copiers.items():
            try:
                with self.recorder.phase(Phase.COPY, "import", name):
                    copy, failure = roundtrip.copy_with(name, copier, source, "import",
                                                        "input")
            except roundtrip.Unsupported:
                continue  # recorded by the source round trip
            if failure:
                continue  # already reported by the source round trip
            self._same_outcome(name, f"{name} copy of the source", expected,
                               lambda copy=copy: whole_path(copy))

    def _same_outcome(self, name: str, label: str, expected, run, on_another_copy=None,
                      find_first_pass_apart=None, earlier=None):
        """Run the path (or its final stage) over a copy, unguarded, and compare outcomes;
        a TVM exception there is the seed's symptom ("cannot find field axis"). The
        output, None when the run failed.

        `on_another_copy`: the outcome over a second copy made the same way, asked only when
        the first differs: two copies disagreeing with each other say the outcome follows
        object identity (an address-ordered map in a pass), not what a copy lost.
        `find_first_pass_apart` then names the pass: the violation's pass, so the registry
        can recognize it on any model (the message alone names no pass); where no pass of
        the final stage parts them, `earlier` looks for the pass before it that left an
        address-hashed object."""
        final = self.pipeline.final.name
        with self.recorder.phase(Phase.COPY, final, name):
            ran = classify.Call.of(final, _unguarded, run)
        if not ran.ok:
            self.recorder.violate(Violation(
                Outcome.LOSSY_ROUNDTRIP, final, f"({name} copy)",
                f"the path failed on the {label}: {ran.detail}", phase=Phase.COPY, copier=name))
            return None
        got = self.pipeline.summarize(ran.value)
        violation = outcomes.difference(expected, got, label, final, name)
        if violation and on_another_copy is not None:
            with self.recorder.phase(Phase.COPY, final, name):
                second = classify.Call.of(final, _unguarded, on_another_copy)
            if (second.ok and second.value is not _NO_COPY
                    and self.pipeline.summarize(second.value) != got):
                violation.detail += ("; a second copy made the same way gives another "
                                     "outcome again: it follows object identity, not what "
                                     "the copy carries")
                if find_first_pass_apart is not None:
                    with self.recorder.phase(Phase.COPY, final, name):
                        found = classify.Call.of(final, _unguarded, find_first_pass_apart)
                    if found.ok and found.value:
                        violation.pass_name = found.value
                        violation.detail += ("; the first pass whose output differs between "
                                             f"two such copies: {found.value}")
                if violation.pass_name is None and earlier is not None:
                    with self.recorder.phase(Phase.COPY, final, name):
                        found = classify.Call.of(final, _unguarded, earlier)
                    if found.ok and found.value:
                        violation.pass_name = found.value
                        violation.detail += (
                            "; the pass that left an object hashed by its address in the "
                            "module (a copy of its output hashes otherwise, of its input "
                            f"not): {found.value}")
        if violation:
            self.recorder.violate(violation)
        return ran.value

    def _on_another_copy(self, name: str, final_input):
        """The final stage over one more copy of its input by copier `name` (_NO_COPY when
        TVM fails the copy: reported with the first one, here it only means "cannot tell")."""
        copy = self._another_copy(name, final_input)
        return _NO_COPY if copy is None else self.pipeline.final.run(copy)

    def _another_copy(self, name: str, final_input):
        """One more copy of the final stage's input by copier `name`; None when TVM fails
        it (reported with the first copy)."""
        copy, failure = roundtrip.copy_with(name, self.copiers[name], final_input,
                                            self.pipeline.final.name)
        return None if failure is not None else copy

    def _first_pass_apart(self, name: str, final_input, attempts: int = 3) -> str | None:
        """The pass of the final stage that makes two fresh copies of its input by copier
        `name` part (structurally equal copies: the runs part for which objects they are):
        equal inputs, unequal outputs. The addresses decide whether two copies part at all,
        so up to `attempts` pairs; None when none parted in a pass, or a copy failed."""
        def applications():
            copy = self._another_copy(name, final_input)
            if copy is None:
                return None
            return calls.pass_applications(lambda: self.pipeline.final.run(copy))
        for _ in range(attempts):
            first, other = applications(), applications()
            if first is None or other is None:
                return None
            found = structure.first_pass_apart(first, other)
            if found:
                return found
        return None

    def _pass_leaving_address_hashed(self, name: str, earlier: list) -> str | None:
        """The pass of an earlier stage whose output holds an object hashed by its address
        (a free buffer or var: a copy hashes otherwise, structure.holds_address_hashed)
        where its input held none: the final stage follows that object's identity, and that
        pass left it there (AttachAttrLayoutFreeBuffers' dangling annotation). None when
        the path's input holds one already, or no stage's output does."""
        copier = self.copiers[name]

        def address_hashed(mod) -> bool:
            return structure.holds_address_hashed(mod, copier(mod))
        if not earlier or address_hashed(earlier[0][1]):
            return None
        for (_, before), (stage, output) in zip(earlier, earlier[1:], strict=False):
            if not address_hashed(output):
                continue
            applications = calls.pass_applications(lambda stage=stage, before=before:
                                                   stage.run(copier(before)))
            for pass_name, pass_input, pass_output in applications:
                if not address_hashed(pass_input) and address_hashed(pass_output):
                    return pass_name
            return None
        return None

    def _deterministic(self, final_input, expected) -> bool:
        """The final stage run a second time on the same input gives the same outcome
        (a pass with hidden state answers differently the second time)."""
        final = self.pipeline.final
        with self.recorder.phase(Phase.DETERMINISM, final.name):
            second_run = classify.Call.of(final.name, _unguarded, final.run, final_input)
        if not second_run.ok:
            self.recorder.violate(Violation(
                Outcome.ERROR, final.name, "(second run)", "the stage failed when run a second "
                f"time on the same input: {second_run.detail}", phase=Phase.DETERMINISM))
            return False
        if self.pipeline.summarize(second_run.value) == expected:
            return True
        self.recorder.violate(Violation(
            Outcome.ERROR, final.name, "(outcome)",
            "the stage is not deterministic: run a second time on the same input, "
            "it gave another outcome", phase=Phase.DETERMINISM))
        return False


_NO_COPY = object()


def _unguarded(run, *args):
    """`run(*args)` in a plain PassContext: copies run without the guard."""
    with calls.pass_context([]):
        return run(*args)

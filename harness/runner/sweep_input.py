"""The pass sweep's input key: what the swept pass is about to receive, said by the child
with the input's TIR facts (tvmapi.tir_phase), against which a refusal is read.

The sweep answers a (pass, input) it has already checked from memory (cli.sweep_memo);
only the child holds the input, so it reports its key as an event before the pass runs:
after the last stage of the prefix (the runner's `observe` window), or, when the point
has no prefix, from the source itself before the run begins. Neither is inside a stage
or its timing, and nothing here changes what the runner runs. A probe (`sweep_probe`)
runs the prefix alone, guarded as in a check, and stops once the key is said: the sweep
learns a point's input without checking any pass on it. Each check keys its own input
too, rather than trusting its point's probe: a row is remembered under the input it really
had, and a prefix whose output moves between runs is noticed (cli.sweep_schedule).

The key is the structural hash and a digest of the JSON text. The hash alone would merge
inputs the sweep tells apart today: spans, and fields outside structural equality, are
invisible to it (bench/sweep_inputs.py on the default catalog, 0.27: 15 of 168 pass inputs
share their hash with another input whose JSON text differs, e.g. node-concat_2d_axis_1
imported, where ConvertLayout leaves the GlobalVar's FuncType filled in; a span-only edit
likewise, tests/test_sweep_memo.py). The JSON text alone sees those, but a field it loses
(a lossy round trip, the bug class this harness hunts) would merge two inputs the hash
tells apart: both are kept. What each costs (bench/sweep_inputs.py, 2 cores, idle / busy):
hash, save_json and sha256 under 5 ms together on the small modules; 5, 65 and 5 ms on
light_squeezenet fused (7 MB of JSON); on yolov3-tiny (48 MB) 25-50 ms, 0.4-1.8 s and
35-240 ms. The hash alone would be nearly free; the text is what sees spans. Measured
side by side, a check costs 2% more on small cases (probes included), 3% on
light_squeezenet, about 10% on yolov3-tiny: the runner serializes the pass's input once
more itself (its JSON check), a text this key could reuse if the runner handed it out.
"""
from __future__ import annotations

import hashlib

from harness import classify
from harness.options import Options
from harness.oracles.recorder import Emit
from harness.runner.path_runner import PathRunner
from harness.tvmapi import copiers, structure, tir_phase

EVENT = "sweep-input"


def input_key(mod) -> str:
    """`HASH-DIGEST`: the structural hash (hex) and the JSON text's sha256 (32 hex digits)."""
    digest = hashlib.sha256(copiers.save_json(mod).encode()).hexdigest()[:32]
    return f"{structure.structural_hash(mod) & (2 ** 64 - 1):016x}-{digest}"


class InputKeyRunner(PathRunner):
    """A PathRunner on the `pass` path that emits `{"event": EVENT, "key": ...}` once, before
    the swept pass runs (key None when TVM cannot hash or serialize the input: the check
    runs as before, and nothing about it is remembered). With `options.sweep_probe` it
    stops there: the prefix ran under every guard, the pass did not run."""

    def __init__(self, options: Options, emit: Emit, crash_input_path: str | None = None):
        super().__init__(options, emit, crash_input_path=crash_input_path,
                         observe=self._observed,
                         stop=(lambda result: self._reported) if options.sweep_probe else None)
        self._reported = False

    def run(self, source, result, references=None):
        if len(self.pipeline.stages) == 1:   # no prefix: the pass receives the source
            self._report(source)
            if self.options.sweep_probe:
                return result
        return super().run(source, result, references)

    def _observed(self, stage_name: str, _input, output) -> None:
        if len(self.pipeline.stages) > 1 and stage_name == self.pipeline.stages[-2].name:
            self._report(output)

    def _report(self, mod) -> None:
        if self._reported:
            return
        self._reported = True
        keyed = classify.Call.of("sweep-input", input_key, mod)   # ours: a HarnessBug
        # the TIR facts of the input, against which a refusal is read (cli.sweep_refusals)
        facts = classify.Call.of("sweep-input", tir_phase.facts, mod)
        self.emit({"event": EVENT, "key": keyed.value if keyed.ok else None,
                   "facts": sorted(facts.value) if facts.ok else None})


def runner(options: Options, emit: Emit, crash_input_path: str | None = None) -> PathRunner:
    """The runner a child uses for `options`: the sweep's reports its input key."""
    if options.path == "pass":
        return InputKeyRunner(options, emit, crash_input_path)
    return PathRunner(options, emit, crash_input_path=crash_input_path)

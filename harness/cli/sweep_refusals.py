"""A pass refusing its input: a precondition (`rejected`) or a bug (`error`), by rule.

TVM's lowering passes rely on what the passes before them in `tvm.compile` made true and
check it with the same `Check failed` they use for bugs, so the words of a refusal cannot
tell the two apart. The phase can: each pass's input inside `tvm.compile` is measured
(tvmapi.passes.compile_phases: the tvmapi.tir_phase facts true of it), and so is the swept
input (the sweep's input event). A refusal is a precondition only under a rule:

- `phase`: tvm.compile hands the pass only TIR where a fact holds that this input lacks
  (FlattenBuffer on TIR with blocks, LowerIntrin without a target attribute);
- `not-on-pipeline`: a TIR pass tvm.compile does not run for this target (chosen with
  --pass): its phase is unknown here.

Anything else is a pass meeting an input of its phase and failing an internal check: an
`error` finding, registered or new. On the `compiled` point tvm.compile itself made the
input, so a refusal there is always a finding. A relax pass's contract is any well-formed
Relax module.
"""
from __future__ import annotations

from harness.tvmapi import passes as registry
from harness.tvmapi import tir_phase


def precondition(swept: registry.RegisteredPass, point: str, target: str,
                 input_facts: list[str] | None) -> str | None:
    """The rule under which `swept` refusing its input at `point` is a precondition (the
    row's `rejected`, said in its detail), or None: the refusal is a finding."""
    if point == registry.COMPILED:
        return None
    try:
        phases = registry.compile_phases(target)
    except registry.PipelineUnknown:
        phases = {}
    wanted = phases.get(swept.info_name or swept.name)
    if wanted is None:
        return ("not-on-pipeline: tvm.compile does not run this TIR pass for this target, so "
                "its phase is unknown") if swept.tir else None
    if input_facts is None:   # the input's facts could not be taken: say so, blame no one
        return "phase unknown: the input's TIR facts could not be read"
    missing = sorted(wanted - frozenset(input_facts))
    if not missing:
        return None
    return (f"phase: tvm.compile hands it TIR with {', '.join(missing)} (made by "
            f"{', '.join(tir_phase.MADE_BY[fact] for fact in missing)}), this input lacks it")

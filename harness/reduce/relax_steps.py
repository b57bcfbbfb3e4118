"""The Relax level of a reduction, as the reducing process sees it: a module's file and
size, and the children that make new ones.

A failure found on a PyTorch model (or a Relax module file) has no ONNX graph to cut,
and an ONNX case's reduced model still imports to more than the failure needs; both
are reduced on the imported module's `main`, by the edits of harness.tvmapi.relax_edit.
TVM runs only in children: this process never holds a module, only its file's text
(TVMScript, or save_json text when TVMScript cannot carry it) and its size. Each edit is
a task of an isolated child (harness.runner.relax_task: read the module, edit it, write
the candidate), each candidate a check of another (the one runner, on the file through
the Relax door), so a crash while editing or checking is a data point. Which edits are
tried, and in which order, is the phase table's (harness.reduce.phases).
"""
from __future__ import annotations

import json
import os

from harness.reduce.kinds import ONNX, RelaxModule
from harness.verdict import BadInput

FORMS = {"tvmscript": ".py", "json": ".json"}
EDIT_OUT = "edit-out"
EDIT_IN = "edit-in"


def _taken(answer_path: str, answer: dict) -> RelaxModule:
    """The module a child wrote, read and its file removed (the next child writes there)."""
    module = RelaxModule.read(answer_path, answer)
    os.remove(answer_path)
    return module


def edit(reducer, module: RelaxModule, name: str, *args) -> RelaxModule | None:
    """The candidate a child makes by one edit of `module` (None: the edit does not
    apply, or was asked before: what it made was judged then)."""
    if not reducer.seen.is_new_question((module.digest, name, json.dumps(args))):
        return None
    out_dir = reducer.out_dir
    if reducer.state.best and module.digest == reducer.best_digest:
        source = os.path.join(out_dir, reducer.state.best)
    else:
        source = module.write(os.path.join(out_dir, EDIT_IN + module.suffix))
    reducer.state.edits += 1
    what = f"edit {name} {list(args)}"
    task = {"task": "edit", "edit": name, "args": list(args),
            "out": os.path.join(out_dir, EDIT_OUT), "form": module.form}
    try:
        result = reducer.ask(source, task, what)
    except BadInput as exc:   # the child refused the file: nothing to check
        reducer.log(f"{what}: refused: {exc}")
        return None
    answer = result.task_output
    if answer is None:   # the child died (a crash of TVM's in the edit): say so, go on
        failure = result.violations[0].one_line() if result.violations else result.verdict
        reducer.log(f"{what} made nothing: {failure}")
        return None
    if not answer.get("path"):
        if answer.get("reason"):   # TVM refused to read or write the module
            reducer.log(f"{what} made nothing: {answer['reason']}")
        return None
    return _taken(answer["path"], answer)


def to_relax(reducer, phase, model):
    """The import to Relax (a phase's walk): the module the door imports (the reduced ONNX
    model's, or the case's own), written as TVMScript, else as JSON: the first form that
    still fails is where the Relax phases start; neither, and they are skipped (the input
    stays as it is)."""
    state = reducer.state
    source = os.path.join(reducer.out_dir, ONNX.best) if state.door == "onnx" else reducer.case
    reasons = []
    for form in FORMS:
        task = {"task": "export", "out": os.path.join(reducer.out_dir, EDIT_OUT), "form": form}
        result = reducer.ask(source, task, f"writing the imported module as {form}")
        answer = result.task_output
        if not answer or not answer.get("path"):   # TVM refused this form, or crashed
            why = (answer or {}).get("reason") or \
                (result.violations[0].one_line() if result.violations else "?")
            reasons.append(f"{form}: the module could not be written ({why})")
            continue
        module = _taken(answer["path"], answer)
        if reducer.interesting(module):
            state.original_bindings = module.bindings
            reducer.save(module)
            reducer.log(f"{phase.name}: {module.bindings} bindings, "
                        f"{module.constants} constants ({module.elements} elements), "
                        f"as {form} ({state.candidates} candidates, {reducer.elapsed():.0f} s)")
            return module
        reasons.append(f"as {form} it does not fail as {reducer.signature.text()}")
    state.relax_skipped = "; ".join(reasons)
    reducer.log(f"the Relax phases are skipped: {state.relax_skipped}")
    return model

"""The Relax-level reducer's work in a child (harness.reduce asks; process.child runs it).

TVM runs only in children, so the reducing process holds a module's file, never the
module: a crash while editing is a data point. The module is what the case's door
imports (the one loader: an edit reads the previous candidate's file through the Relax
door, as its check did), and the answer gives the written module's size.
"""
from __future__ import annotations

from harness import classify, doors
from harness.tvmapi import loading, relax_edit

EDITS = {
    "cut": relax_edit.cut,
    "start": relax_edit.start_after,
    "drop": relax_edit.drop,
    "params": relax_edit.constants_to_params,
    "zeros": relax_edit.constants_to_zeros,
}


def run(task: dict, case) -> dict:
    """`export` writes the module the case's door imports; `edit` applies one edit to it
    and writes the candidate. `path` None: not this form, with TVM's `reason` where TVM
    refused (to import the file, or to write the module in the asked form: the reducer
    then tries the next form), or the edit does not apply. Our own exception leaves as
    a HarnessBug (harness-error: the reduction stops)."""
    imported = classify.Call.of("import", doors.to_relax, case.model(),
                                reraise=(loading.TVMUnavailable, doors.ExtraUnavailable))
    if not imported.ok:
        return {"path": None, "reason": f"TVM could not import it: {imported.detail[:300]}"}
    module = imported.value
    if task["task"] == "export":
        label = "imported"
    elif task["task"] == "edit":
        edit, args = task["edit"], task.get("args", [])
        label = _label(module, edit, args)
        module = EDITS[edit](module, *args)   # ours raises (HarnessBug); TVM's is None
        if module is None:
            return {"path": None, "label": label}
    else:
        raise ValueError(f"unknown task {task['task']!r}")
    form = task.get("form", "tvmscript")
    saved = classify.Call.of(relax_edit.STAGE, relax_edit.save, module, task["out"], form)
    if not saved.ok:
        return {"path": None, "label": label,
                "reason": f"TVM could not write it as {form}: {saved.detail[:300]}"}
    bindings, elements = relax_edit.size(module)
    return {"path": saved.value, "bindings": bindings, "elements": elements,
            "constants": len(relax_edit.constants(module)), "label": label}


def _label(module, edit: str, args: list) -> str:
    if edit in ("cut", "start", "drop") and args and \
            0 <= args[0] < len(relax_edit.bindings(module)):
        what = relax_edit.describe(module, args[0])
        reads = "an argument" if edit == "drop" and args[1:] in ([], ["arg"]) else "a parameter"
        return {"cut": f"end main at binding {args[0]} ({what})",
                "start": f"start main after binding {args[0]} ({what})",
                "drop": f"drop binding {args[0]} ({what}; its uses read {reads})"}[edit]
    if edit == "params":
        return "constants as parameters" if not args or args[0] is None \
            else f"constant {args[0][0]} as a parameter"
    return "constants as zeros"

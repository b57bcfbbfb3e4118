"""Reduction steps over a Relax module: the ONNX-less half of the reducer.

A failure found on a PyTorch model (or a Relax module file) has no ONNX graph to cut,
and an ONNX case's reduced model still imports to more than the failure needs; both
are reduced here, on the imported module's `main`, by the edits of
harness.tvmapi.relax_edit. TVM runs only in children: the parent never holds a module,
only its file's text (TVMScript, or save_json text when TVMScript cannot carry it) and
its size. Each edit is a task of an isolated child (`run_task`: read the module, edit
it, write the candidate), each candidate a check of another (the one runner, on the
file through the Relax door), so a crash while editing or checking is a data point.

Phases, each step kept only if the signature survives (driver.Reducer runs them):

1. constants as parameters, all at once: the module prints without its metadata
   section, and every later candidate parses and checks in a fraction of the time;
2. the shortest failing prefix: main cut at a binding (binary search);
3. the latest failing start: main started after a binding, what the rest reads of
   the bindings before becoming parameters (binary search);
4. single-binding drops: its uses read an argument of its very type (a shape-preserving
   op skipped), else a new parameter; after an accepted drop the same position is tried
   again, and rounds repeat until one accepts nothing;
5. the constants left, one at a time, as parameters, then the rest as zeros.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os

FORMS = {"tvmscript": ".py", "json": ".json"}
EDIT_OUT = "edit-out"
EDIT_IN = "edit-in"


@dataclasses.dataclass
class RelaxModule:
    """A Relax module as the parent sees it: its file's text and its size."""
    text: bytes
    suffix: str                 # .py (TVMScript) or .json
    bindings: int
    elements: int = 0           # of the constants printed in the metadata section
    constants: int = 0
    label: str = ""             # what the edit that made it did

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text).hexdigest()

    @property
    def form(self) -> str:
        return "json" if self.suffix == ".json" else "tvmscript"

    def size(self) -> tuple[int, int]:
        return self.bindings, self.elements

    @classmethod
    def read(cls, path: str, answer: dict) -> "RelaxModule":
        with open(path, "rb") as handle:
            text = handle.read()
        return cls(text, os.path.splitext(path)[1], answer["bindings"], answer["elements"],
                   answer["constants"], answer.get("label", ""))

    def write(self, path: str) -> str:
        with open(path + ".partial", "wb") as handle:
            handle.write(self.text)
        os.replace(path + ".partial", path)
        return path


# ---- the child's side -------------------------------------------------------------------

def run_task(task: dict, case) -> dict:
    """In a child: `export` writes the module the case's door imports; `edit` reads
    `module`, applies one edit and writes the candidate (`path` None: it does not apply).
    Either way the answer gives the written module's size."""
    from harness import doors
    from harness.tvmapi import relax_edit
    if task["task"] == "export":
        mod, label = doors.to_relax(case.model()), "imported"
    elif task["task"] == "edit":
        source = relax_edit.load(task["module"])
        edit, args = task["edit"], task.get("args", [])
        label = _label(relax_edit, source, edit, args)
        mod = EDITS[edit](relax_edit)(source, *args)
        if mod is None:
            return {"path": None, "label": label}
    else:
        raise ValueError(f"unknown task {task['task']!r}")
    path = relax_edit.save(mod, task["out"], task.get("form", "tvmscript"))
    bindings, elements = relax_edit.size(mod)
    return {"path": path, "bindings": bindings, "elements": elements,
            "constants": len(relax_edit.constants(mod)), "label": label}


EDITS = {
    "cut": lambda e: e.cut,
    "start": lambda e: e.start_after,
    "drop": lambda e: e.drop,
    "params": lambda e: e.constants_to_params,
    "zeros": lambda e: e.constants_to_zeros,
}


def _label(relax_edit, mod, edit: str, args: list) -> str:
    if edit in ("cut", "start", "drop") and args and 0 <= args[0] < len(relax_edit.bindings(mod)):
        what = relax_edit.describe(mod, args[0])
        reads = "an argument" if edit == "drop" and args[1:] in ([], ["arg"]) else "a parameter"
        return {"cut": f"end main at binding {args[0]} ({what})",
                "start": f"start main after binding {args[0]} ({what})",
                "drop": f"drop binding {args[0]} ({what}; its uses read {reads})"}[edit]
    if edit == "params":
        return "constants as parameters" if not args or args[0] is None \
            else f"constant {args[0][0]} as a parameter"
    return "constants as zeros"


# ---- the parent's side: the phases -----------------------------------------------------

def phases(reducer) -> list[tuple[str, object]]:
    return [("relax: constants as parameters", lambda m: all_params(reducer, m)),
            ("relax: shortest failing prefix", lambda m: prefix(reducer, m)),
            ("relax: latest failing start", lambda m: start(reducer, m)),
            ("relax: binding drops", lambda m: drops(reducer, m)),
            ("relax: constants one by one", lambda m: constants(reducer, m))]


def all_params(reducer, module: RelaxModule) -> RelaxModule:
    if not module.constants:
        return module
    candidate = reducer.edit(module, "params")
    if candidate is not None and reducer.interesting(candidate):
        return reducer.accept(candidate.label, candidate)
    return module


def prefix(reducer, module: RelaxModule) -> RelaxModule:
    return reducer.search(module, list(range(module.bindings - 1)),
                          lambda position: reducer.edit(module, "cut", position))


def start(reducer, module: RelaxModule) -> RelaxModule:
    return reducer.search(module, list(range(module.bindings - 1))[::-1],
                          lambda position: reducer.edit(module, "start", position))


def drops(reducer, module: RelaxModule) -> RelaxModule:
    """Rounds of single-binding drops, staying at a position after an accepted drop."""
    progress = True
    while progress and not reducer.out_of_time():
        progress, index = False, 0
        while index < module.bindings and not reducer.out_of_time():
            for by in ("arg", "param"):
                candidate = reducer.edit(module, "drop", index, by)
                if candidate is not None and candidate.size() < module.size() \
                        and reducer.interesting(candidate):
                    module, progress = reducer.accept(candidate.label, candidate), True
                    break
            else:
                index += 1
    return module


def constants(reducer, module: RelaxModule) -> RelaxModule:
    """The constants left, one at a time, as parameters (staying in place after an
    accepted one: the next constant takes its number), then the rest as zeros."""
    index = 0
    while index < module.constants and not reducer.out_of_time():
        candidate = reducer.edit(module, "params", [index])
        if candidate is not None and candidate.size() < module.size() \
                and reducer.interesting(candidate):
            module = reducer.accept(candidate.label, candidate)
        else:
            index += 1
    if module.constants and not reducer.out_of_time():
        candidate = reducer.edit(module, "zeros")
        if candidate is not None and reducer.interesting(candidate):
            module = reducer.accept(candidate.label, candidate)
    return module

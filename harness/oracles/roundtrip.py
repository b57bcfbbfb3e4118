"""Invariant 2: a copy of a module is the module, field for field.

The copiers: the two ways users copy modules, `copy.deepcopy` (which TVM
implements through JSON) and an explicit save_json/load_json, and a third one
that does not share their serializer, TVMScript print -> parse. A JSON copier
that TVM makes raise is itself a violation: that was the seed bug ("cannot find field
axis"); so is TVMScript's parser refusing its own printer's text (the two disagree:
`lossy-roundtrip`, access path `(tvmscript)`, triaged by the registry like any finding);
TVMScript refusing to print a module at all, or its parser calling a module that is itself
not well-formed "not well-formed", is `unsupported` for that copier only (documented limits,
docs/explanation/guards.md); and an exception of the harness's own code in a copier is a
harness error, never either.

Three comparisons, each catching what the others cannot: structural equality
(the first mismatching access path), every attrs field exactly (1, 1.0 and True
differ; so do 0.0 and -0.0), and for the JSON copiers the copy's own save_json
text against the original's (it sees fields structural equality skips: spans).
"""
from __future__ import annotations

from typing import Callable

from harness import classify
from harness.oracles import fieldwise
from harness.tvmapi import copiers, structure
from harness.verdict import Outcome, Phase, Violation

Copier = Callable[[object], object]


def json_roundtrip(mod):
    return copiers.load_json(copiers.save_json(mod))


COPIERS: dict[str, Copier] = {"deepcopy": copiers.deepcopy, "json": json_roundtrip,
                              "tvmscript": copiers.tvmscript_copy}


def from_text(copier: Copier, json_text: str | None) -> Copier:
    """`copier`, made from `json_text` (save_json's text of the module, which the caller
    has already) where it is one of the JSON copiers built in: a load instead of another
    save and load. An injected copier is always called as it is."""
    if json_text is None:
        return copier
    if copier is json_roundtrip:
        return lambda _mod: copiers.load_json(json_text)
    if copier is copiers.deepcopy:
        return lambda mod: copiers.deepcopy_from_text(mod, json_text)
    return copier


# Copies that must reproduce the original's JSON text exactly (same serializer). A
# TVMScript copy re-creates spans and shares small nodes differently: not comparable.
EXACT_JSON = ("deepcopy", "json")
Unsupported = copiers.CopierUnsupported


def _lossy(stage: str, path: str, detail: str, name: str) -> Violation:
    return Violation(Outcome.LOSSY_ROUNDTRIP, stage, path, detail, phase=Phase.COPY, copier=name)


def copy_with(name: str, copier: Copier, mod, stage: str, what: str = "input"):
    """(copy, None) or (None, violation) when TVM fails the copy. `what` the module
    is to `stage`: its input (the source, for the import stage) or its output.

    Raises `Unsupported` when TVM cannot carry this module with this copier at all (the
    copier decided that through the classifier: TVM's refusal, never ours; a parser
    refusing its own printer's text is not that, but this copy's violation), and
    classify.HarnessBug when the harness's own code raised (harness-error, never a
    finding against TVM): a copier is our code calling TVM's, and TVM calls back into
    ours (the TVMScript copier's expression mutator), so only the innermost frame of
    the traceback says whose the exception is (classify.Call).
    """
    try:
        copied = classify.Call.of(stage, copier, mod, reraise=(Unsupported,))
    except copiers.CopierUnparsable as refused:   # the printer's text, refused by its parser
        return None, _lossy(stage, f"({name})", f"{name} copy of the {what}: {refused}", name)
    if copied.ok:
        return copied.value, None
    failure = copied.error
    return None, _lossy(stage, f"({name})", f"{name} copy of the {what} failed: "
                        f"{type(failure).__name__}: {failure}".strip(), name)


def compare(original, copy, name: str, stage: str, original_json: str | None = None,
            what: str = "input") -> Violation | None:
    """First difference between a module and its copy: structure, attrs fields, then
    (given the original's JSON text, for a JSON copier) the whole JSON text.

    Free variables are matched by position: a copy cannot share the original's own
    variable objects, and a pass run out of its pipeline position can leave one
    (s_tir.HoistExpression hoists a block iterator out of its block)."""
    path = structure.first_mismatch(original, copy, map_free_vars=True)
    if path is not None and name not in EXACT_JSON and _only_sharing_differs(original, copy):
        path = None   # a text cannot say that two functions share one variable object
    if path is not None:
        return _lossy(stage, path, f"{name} copy of the {what} is not structurally equal "
                      "to the original", name)
    found = fieldwise.compare_module_attrs(original, copy)
    if found is not None:
        where, detail = found
        return _lossy(stage, where, f"{name} copy of the {what}: {detail}", name)
    if original_json is not None and name in EXACT_JSON:
        copy_json = copiers.save_json(copy)
        if copy_json != original_json:
            return _lossy(stage, "(json text)",
                          f"{name} copy of the {what} is structurally equal but its JSON "
                          f"differs: {json_difference(original_json, copy_json)}", name)
    return None


def _only_sharing_differs(original, copy) -> bool:
    """The original's functions share parameter objects (found by the guarded run of TVM's
    Adreno tests: a cloned PrimFunc keeps its source's variables), and function by function
    the copy is equal: whole-module equality then maps one variable to two and fails, for
    a copy that lost nothing. A JSON copy keeps the sharing, so only a text copy is let off;
    it stays compared function by function, attrs and global infos too."""
    return bool(structure.functions_sharing_variables(original)) and \
        structure.equal_function_by_function(original, copy)


def json_difference(left: str, right: str) -> str:
    """The access path where two TVM JSON graphs first differ, walking both from the root.

    In the graph, an object node's fields (and an array's items) are node indices;
    "int"/"float"/"bool" nodes and strings carry their value inline.
    """
    import json
    a, b = json.loads(left), json.loads(right)
    nodes_a, nodes_b, seen = a.get("nodes", []), b.get("nodes", []), set()

    def walk(index_a, index_b, path):
        if (index_a, index_b) in seen:
            return None
        seen.add((index_a, index_b))
        node_a, node_b = nodes_a[index_a], nodes_b[index_b]
        if node_a.get("type") != node_b.get("type"):
            return f"{path}: {node_a.get('type')} became {node_b.get('type')}"
        data_a, data_b = node_a.get("data"), node_b.get("data")
        if node_a.get("type") in ("int", "float", "bool", "ffi.String", "ir.SourceName") or \
                not isinstance(data_a, (dict, list)):
            return None if data_a == data_b else f"{path}: {data_a!r:.80} became {data_b!r:.80}"
        if isinstance(data_a, dict) and isinstance(data_b, dict):
            items = [(f"{path}.{key}", data_a.get(key), data_b.get(key))
                     for key in sorted(data_a.keys() | data_b.keys())]
        elif isinstance(data_a, list) and isinstance(data_b, list) and len(data_a) == len(data_b):
            items = [(f"{path}[{i}]", x, y)
                     for i, (x, y) in enumerate(zip(data_a, data_b, strict=True))]
        else:
            return f"{path}: {data_a!r:.80} became {data_b!r:.80}"
        for sub, x, y in items:
            if isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool):
                found = walk(x, y, sub)
            else:
                found = None if x == y else f"{sub}: {x!r:.80} became {y!r:.80}"
            if found:
                return found
        return None

    found = walk(a.get("root_index", 0), b.get("root_index", 0), "<root>")
    return found or "the graphs are equal; the texts differ in their metadata or layout"

"""What each catalog case exercises of TVM: the converters its import uses, the passes its
path runs.

The record comes from the runs themselves: an import-only `reach` row (tvmapi's converter
maps patched, the names the frontend really looked up) or a report row's `converters`
and `passes` (every check records them; the passes are the pass guard's records, which
tell a changed pass's paths). Where no run recorded a case, an ONNX node test's own graph
says which operators it holds (the ONNX frontend converts node by node, one converter
per operator type: the same names). A case with neither is *unrecorded*: a selection
says how many, and `try --record` (or `reach PATTERN`) measures them.

Which frontend a case's converters belong to is its door's converter map (onnx,
exported_program, fx, tflite, stablehlo); touched's folders name frontends by TVM's tree
(`frontend/torch` holds both PyTorch maps).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

# TVM's frontend folder -> the converter maps (doors' `converter_map`) it holds
MAPS_OF_FOLDER = {"onnx": ("onnx",), "torch": ("exported_program", "fx"),
                  "tflite": ("tflite",), "stablehlo": ("stablehlo",), "nn": ()}
MEASURED, GRAPH = "measured", "the model's graph"


@dataclasses.dataclass
class Exercised:
    """{converter map: {case: converters}} and how each case's record was made."""
    converters: dict[str, dict[str, frozenset[str]]] = dataclasses.field(default_factory=dict)
    how: dict[str, str] = dataclasses.field(default_factory=dict)   # case -> MEASURED | GRAPH
    # {path: {case: the passes its check ran}}, from report rows (the guard's records)
    passes: dict[str, dict[str, frozenset[str]]] = dataclasses.field(default_factory=dict)

    def add(self, frontend: str, case: str, used: Iterable[str], how: str) -> None:
        if case in self.how and self.how[case] == MEASURED and how != MEASURED:
            return   # a measured record is never replaced by a read graph
        self.converters.setdefault(frontend, {})[case] = frozenset(used)
        self.how[case] = how

    def cases_using(self, frontend: str, converter: str) -> list[str]:
        return sorted(case for case, used in self.converters.get(frontend, {}).items()
                      if converter in used)

    def paths_running(self, pass_name: str) -> set[str] | None:
        """The paths whose recorded checks ran the pass (None: no report recorded passes)."""
        if not self.passes:
            return None
        return {path for path, by_case in self.passes.items()
                if any(pass_name in ran for ran in by_case.values())}

    def recorded(self, case: str) -> bool:
        return case in self.how

    def of_case(self, case: str) -> frozenset[str]:
        for by_case in self.converters.values():
            if case in by_case:
                return by_case[case]
        return frozenset()


def gather(rows: list[dict[str, Any]], node_tests: dict[str, list[str]],
           case_maps: dict[str, str | None]) -> Exercised:
    """From reach rows or report rows ({case, frontend, used} or {case, converters:
    {frontend, used}}), then the ONNX node tests' operators ({case id: operators}) for the
    cases no row holds. `case_maps`: each catalog case's door's converter map."""
    found = Exercised()
    for row in rows:
        if row.get("passes") and row.get("path"):
            found.passes.setdefault(row["path"], {})[row["case"]] = frozenset(row["passes"])
        record = row.get("converters") if "converters" in row else row
        if not record or not record.get("frontend"):
            continue
        if row["case"] in case_maps:
            found.add(record["frontend"], row["case"], record.get("used", []), MEASURED)
    for case, operators in node_tests.items():
        frontend = case_maps.get(case)
        if frontend and not found.recorded(case):
            found.add(frontend, case, operators, GRAPH)
    return found

"""The matrix page's cells: from report rows, and read back from an earlier night's output.

A cell is keyed by (row name, column): the row is a case (with its path and target where
they are not the defaults), the column a release set. It carries what the page groups and
filters by (family, path, layout, target) beside the verdict and its registry reading. An
earlier night is read from what `merge` or `matrix` wrote (report.json, matrix.json or
matrix.html), so that the page can say what changed since.
"""
from __future__ import annotations

import json
import os
import re

from harness.verdict import BadInput

# Where the page keeps its own data, for the next night to read back.
DATA_ID = "data"
_DATA = re.compile(r"<script type=['\"]application/json['\"] id=['\"]data['\"]>(.*?)</script>",
                   re.S)


def family_of(tags) -> str:
    """A case's family: the first tag its catalog entry gives (yolo, handwritten, nn,
    onnx-light, pytorch-converted, onnx-node, torch; a user catalog's own)."""
    return tags[0] if tags else "other"


def row_name(row: dict) -> str:
    """A report row's line on the page: the case, with its path and target where they are
    not the defaults (one case may run on several)."""
    extra = [part for part, default in ((row.get("path"), "extract"), (row.get("target"), "llvm"))
             if part and part != default]
    return row["case"] + (f" [{', '.join(extra)}]" if extra else "")


def cell_of_row(row: dict) -> dict:
    """A report row as the page's cell."""
    return {"verdict": row["verdict"], "status": row["status"], "failing": row["failing"],
            "exit": row["exit"], "outcome_count": row["outcome_count"],
            "seconds": row["wall_seconds"], "stage": "", "pass": "",
            "detail": row["violations"][0] if row["violations"] else "",
            "known": row.get("known", []), "path": row.get("path", "extract"),
            "layout": row.get("layout") or "", "target": row.get("target") or "",
            "family": family_of(row.get("tags")), "reproduce": "",
            "carried": row.get("carried", "")}


def statuses(cells: dict) -> dict[tuple[str, str], str]:
    """{(row name, column): status}: all that two nights are compared by."""
    return {key: cell["status"] for key, cell in cells.items()}


def page_data(row_names: list[str], labels: list[str], cells: dict) -> str:
    """The page's own data block (JSON inside the page, `<` escaped so that no text of a
    cell can close the script element): what `read_previous` reads back from a page."""
    data = {"cases": row_names, "sets": labels,
            "cells": [{"row": name, "set": label, "status": cell["status"],
                       "verdict": cell["verdict"]} for (name, label), cell in cells.items()]}
    return json.dumps(data).replace("<", "\\u003c")


def read_previous(path: str) -> dict[tuple[str, str], str]:
    """{(row name, column): status} of an earlier night: its merged report.json (or a
    report's), matrix.json, or the matrix.html page itself. BadInput when it is none."""
    try:
        with open(path) as handle:
            text = handle.read()
    except OSError as exc:
        raise BadInput(f"--previous {path}: {exc.strerror or exc}; give the previous night's "
                       "report.json, matrix.json or matrix.html") from None
    if path.endswith((".html", ".htm")):
        found = _DATA.search(text)
        if found is None:
            raise BadInput(f"--previous {path}: no page data in it (a matrix.html written "
                           "before pages carried their data?); give its report.json")
        text = found.group(1)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadInput(f"--previous {path}: not JSON ({exc}); give the previous night's "
                       "report.json, matrix.json or matrix.html") from None
    return _statuses_in(data, path)


def _statuses_in(data, path: str) -> dict[tuple[str, str], str]:
    try:
        if isinstance(data, dict) and isinstance(data.get("rows"), list):      # report.json
            return {(row_name(row), row.get("set") or set_label(row)): row["status"]
                    for row in data["rows"]}
        if isinstance(data, dict) and isinstance(data.get("cells"), list):     # matrix.json, page
            return {(cell.get("row") or cell["case"], cell["set"]): cell["status"]
                    for cell in data["cells"]}
    except (KeyError, TypeError) as exc:
        raise BadInput(f"--previous {path}: a row or cell without {exc}; give the previous "
                       "night's report.json, matrix.json or matrix.html as written") from None
    raise BadInput(f"--previous {os.path.basename(path)}: neither rows nor cells in it; give "
                   "the previous night's report.json, matrix.json or matrix.html")


def set_label(stack: dict) -> str:
    """A release set's column: the TVM stack a row was measured on (a journal line's stack,
    or a row of a single run's report.json: merge adds this as each row's `set`)."""
    return f"tvm=={stack.get('tvm_version')} tvm-ffi=={stack.get('tvm_ffi_version')}"

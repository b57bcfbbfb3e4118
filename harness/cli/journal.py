"""The rows journal of a long run: OUT/report-rows.jsonl, OUT/passes-rows.jsonl.

Each row is appended the moment it is decided, so an interrupted run keeps what it
finished, and `--resume` runs only the rest. Every line carries the stack it was
measured on (the TVM versions, and whatever else changes a row: a target, a file of
registered passes): a resumed run keeps only the rows of the stack it runs on. One
file per command, so `report` and `passes` can share an --out folder.
"""
from __future__ import annotations

import json
import os
from typing import Callable


def read_rows(path: str) -> list[dict]:
    """The journal's lines; one cut short by a kill mid-write is dropped (run again)."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as handle:
        for line in handle:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


class Journal:
    def __init__(self, out_dir: str, command: str, resume: bool,
                 key: Callable[[dict], tuple], stack: dict):
        os.makedirs(out_dir, exist_ok=True)
        self.path = os.path.join(out_dir, f"{command}-rows.jsonl")
        self.stack = stack
        self.done: dict[tuple, dict] = {}
        if resume:
            for line in read_rows(self.path):
                if line.get("stack") == stack:
                    self.done[key(line["row"])] = line["row"]
        elif os.path.exists(self.path):
            os.remove(self.path)
        self._sink = open(self.path, "a", buffering=1)

    def append(self, row: dict) -> None:
        self._sink.write(json.dumps({"stack": self.stack, "row": row}) + "\n")

    def close(self) -> None:
        self._sink.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""The rows journal of a long run (`report`, `passes`): OUT/rows.jsonl.

Each row is appended the moment it is decided, so an interrupted run keeps what it
finished, and `--resume` runs only the rest. Every line carries the TVM stack it
was measured on: a resumed run keeps only the rows of the stack it runs on.
"""
from __future__ import annotations

import json
import os
from typing import Callable


def read_rows(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


class Journal:
    def __init__(self, out_dir: str, resume: bool, key: Callable[[dict], tuple], stack: dict):
        os.makedirs(out_dir, exist_ok=True)
        self.path = os.path.join(out_dir, "rows.jsonl")
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

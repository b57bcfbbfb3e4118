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

import harness
from harness import jsonl
from harness.cli import carry
from harness.verdict import BadInput


def read_rows(path: str) -> list[dict]:
    """The journal's lines; one cut short by a kill mid-write is dropped (run again)."""
    return jsonl.read(path)


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


# The nightly job's release set (its matrix name), written on every line (merge.read).
RELEASE_SET_VARIABLE = "HARNESS_RELEASE_SET"
# Bumped when a row's fields change: rows of another format are run again, not mixed in
# (and `merge` refuses to join rows of two formats or two harness versions).
ROW_FORMAT = 6   # 3: report rows carry their violations' signatures; 4: and their stale
#                  entries; 5: and the frontend converters their import looked up; 6: and
#                  the passes their path ran (`try` selects by both)


class Journal:
    """`resume`: keep the rows of this stack and append; `fresh`: start over; neither: a
    journal that already holds rows is refused (BadInput), never silently replaced.
    Nothing on disk changes before the first row is appended, so a run refused after
    this (bad input found while validating) leaves the earlier rows as they were."""

    def __init__(self, out_dir: str, command: str, resume: bool,
                 key: Callable[[dict], tuple], stack: dict, fresh: bool = False,
                 inputs: str | None = ""):
        self.path = os.path.join(out_dir, f"{command}-rows.jsonl")
        self.stack = {**stack, "row_format": ROW_FORMAT, "harness": harness.__version__}
        self.resume = resume
        # what the rows were computed from besides the stack (harness.cli.carry)
        self.inputs = carry.inputs_digest(command) if inputs == "" else inputs
        self.done: dict[tuple, dict] = {}
        earlier = read_rows(self.path)
        if resume:
            for line in earlier:
                if line.get("stack") == self.stack:
                    self.done[key(line["row"])] = line["row"]
        elif earlier and not fresh:
            raise BadInput(f"{out_dir} holds {len(earlier)} rows of an earlier {command} run "
                           f"({self.path}): --resume continues it, --fresh replaces it")
        self._sink = None

    def append(self, row: dict) -> None:
        if self._sink is None:
            self._sink = open(self.path, "a" if self.resume else "w", buffering=1)
            if self._sink.tell() and not _ends_with_newline(self.path):
                self._sink.write("\n")   # after a line a kill cut short: keep ours whole
        # the nightly's name for the release set (its job's HARNESS_RELEASE_SET): two
        # sets that resolved the same stack stay two columns of the merged page
        release_set = os.environ.get(RELEASE_SET_VARIABLE, "")
        named = {"set": release_set} if release_set else {}
        self._sink.write(json.dumps({"stack": self.stack, "inputs": self.inputs, **named,
                                     "row": row}) + "\n")

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()

    def kept(self) -> str:
        """Where an interrupted run's rows are, for its last line: the journal only when it
        exists. It is opened at the first row, so a run stopped before one was decided
        (a Ctrl-C in its first seconds) wrote nothing and must not send anyone to a file
        that is not there."""
        if os.path.exists(self.path):
            return f"kept in {self.path} (--resume continues)"
        return "nothing written"

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

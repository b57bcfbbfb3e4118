"""Writing one field into one registry entry, in place, as a person would edit the file.

The watch records what it measured on a commit (`measured_on`) and what a hunt named
(`introduced_by`, `fixed_by`) in the registry file that holds the entry: the line goes right
after the entry's `id`, or replaces the field's line when the entry has it; everything
else in the file (comments, order, the other entries) stays as it was.
"""
from __future__ import annotations

import json
import os
import re

from harness.catalog.issue_entry import files
from harness.verdict import BadInput


def set_field(folder: str, entry_id: str, field: str, value) -> None:
    """Set `field = value` (a string, or a list of strings written one a line) in entry
    `entry_id` of the catalog FOLDER's registry, replacing the field's lines when it has it."""
    path = file_of(folder, entry_id)
    with open(path) as handle:
        lines = handle.read().split("\n")
    start, end = _entry_span(lines, entry_id, path)
    if isinstance(value, list):
        items = [f"    {json.dumps(item, ensure_ascii=False)}," for item in value]
        text = [f"{field} = [", *items, "]"]
    else:
        text = [f"{field} = {json.dumps(value, ensure_ascii=False)}"]
    span = _field_span(lines, start, end, field)
    if span is None:
        lines[start + 1:start + 1] = text
    else:
        lines[span[0]:span[1]] = text
    with open(path + ".tmp", "w") as handle:
        handle.write("\n".join(lines))
    os.replace(path + ".tmp", path)


def prepend(folder: str, entry_id: str, field: str, item: str) -> None:
    """Put `item` first in the entry's list `field` (newest first, as `measured_on` is),
    dropping an equal item further down."""
    import tomllib
    with open(file_of(folder, entry_id), "rb") as handle:
        entries = tomllib.load(handle).get("issue", [])
    entry = next((entry for entry in entries if entry.get("id") == entry_id), {})
    present = entry.get(field, [])
    present = [present] if isinstance(present, str) else list(present)
    set_field(folder, entry_id, field, [item] + [old for old in present if old != item])


def file_of(folder: str, entry_id: str) -> str:
    """The registry file of the catalog `folder` that holds entry `entry_id`."""
    line = re.compile(rf'^\s*id\s*=\s*"{re.escape(entry_id)}"\s*(#.*)?$', re.M)
    for path in files(folder):
        with open(path) as handle:
            if line.search(handle.read()):
                return path
    raise BadInput(f"no entry with id {entry_id!r} in the registry of {folder}")


def _entry_span(lines: list[str], entry_id: str, path: str) -> tuple[int, int]:
    """(the entry's `id` line, the line where the next entry starts)."""
    start = next((index for index, line in enumerate(lines)
                  if re.fullmatch(rf'id\s*=\s*"{re.escape(entry_id)}"\s*(#.*)?', line.strip())),
                 None)
    if start is None:
        raise BadInput(f"no entry with id {entry_id!r} in {path}")
    end = next((index for index in range(start + 1, len(lines))
                if lines[index].strip() == "[[issue]]"), len(lines))
    return start, end


def _field_span(lines: list[str], start: int, end: int, field: str) -> tuple[int, int] | None:
    """[first, last) lines of the field's value inside the entry (a list may span lines):
    the shortest run from its key that TOML reads whole."""
    import tomllib
    first = next((index for index in range(start, end)
                  if re.match(rf"{re.escape(field)}\s*=", lines[index])), None)
    if first is None:
        return None
    for last in range(first + 1, end + 1):
        try:
            tomllib.loads("\n".join(lines[first:last]))
        except tomllib.TOMLDecodeError:
            continue
        return first, last
    raise BadInput(f"{field} after line {first + 1} does not read as TOML: edit it by hand")

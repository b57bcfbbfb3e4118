"""JSON-lines files that a kill may have cut short: rows journals, suite records."""
from __future__ import annotations

import json
import os


def read(path: str) -> list:
    """Every whole line of `path` (none when it does not exist); a line cut short by a kill
    mid-write is dropped, so the run that wrote it does that part again."""
    if not os.path.exists(path):
        return []
    lines = []
    with open(path) as handle:
        for line in handle:
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return lines

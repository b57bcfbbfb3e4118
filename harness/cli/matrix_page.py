"""The matrix as one static HTML page: no server, no CDN, opens from disk.

Rows are cases, columns version sets; a cell's colour is its verdict, its
text the tasks and seconds, a dashed border marks a registered known issue.
Hovering shows the violation; clicking pins it (stage, pass, path, reproduce
command) in the panel under the table.
"""
from __future__ import annotations

import html
import json

from harness.verdict import Outcome

# A cell's colour by its run's verdict (every one of verdict.VERDICTS).
COLOURS = {Outcome.PASS: "#2e7d32", Outcome.MUTATED: "#c62828",
           Outcome.LOSSY_ROUNDTRIP: "#ad1457", Outcome.ERROR: "#ef6c00",
           Outcome.CRASH: "#4a148c", Outcome.TIMEOUT: "#6d4c41",
           Outcome.UNSUPPORTED: "#757575", Outcome.HARNESS_ERROR: "#000000"}

_STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em}
table{border-collapse:collapse}th,td{padding:.3em .6em;border:1px solid #ccc}
td.cell{color:#fff;cursor:pointer;text-align:center;min-width:9em}
td.known{outline:3px dashed #fdd835;outline-offset:-4px}
td.stale,td.new{font-weight:bold}
#detail{white-space:pre-wrap;font-family:monospace;margin-top:1em;padding:.6em;
border:1px solid #ccc;min-height:3em}"""

_SCRIPT = """for (const td of document.querySelectorAll('td.cell')) {
  td.addEventListener('click', () => {
    document.getElementById('detail').textContent = td.dataset.detail;
  });
}"""


def _detail(case: str, label: str, cell: dict) -> str:
    lines = [f"{case} on {label}: {cell['verdict']} ({cell['status']}), path {cell['path']}"]
    if cell["stage"]:
        lines.append(f"stage {cell['stage']}" + (f", pass {cell['pass']}" if cell["pass"] else ""))
    if cell["detail"]:
        lines.append(cell["detail"])
    lines += cell["known"]
    if cell["reproduce"]:
        lines.append(f"reproduce: {cell['reproduce']}")
    return "\n".join(lines)


def render(case_ids: list[str], labels: list[str], cells: dict, title: str = "") -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for label in labels)
    rows = []
    for case in case_ids:
        tds = []
        for label in labels:
            cell = cells.get((case, label))
            if cell is None:   # not decided (an interrupted run)
                tds.append('<td class="cell" data-verdict="" data-status="">'
                           '<small>not run</small></td>')
                continue
            detail = _detail(case, label, cell)
            colour = COLOURS.get(cell["verdict"], "#333")
            tds.append(
                f'<td class="cell {cell["status"]}" style="background:{colour}" '
                f'data-verdict="{html.escape(cell["verdict"])}" '
                f'data-status="{html.escape(cell["status"])}" '
                f'data-detail="{html.escape(detail)}" title="{html.escape(detail)}">'
                f'{html.escape(cell["verdict"])}<br><small>{cell["outcome_count"]} · '
                f'{cell["seconds"]:.1f} s</small></td>')
        rows.append(f"<tr><th>{html.escape(case)}</th>{''.join(tds)}</tr>")
    legend = " ".join(f'<span style="background:{colour};color:#fff;padding:0 .4em">'
                      f"{verdict}</span>" for verdict, colour in COLOURS.items())
    return (f"<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>harness matrix {html.escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body><h1>Invariants: cases × version sets ({html.escape(title)})</h1>"
            f"<p>{legend} — dashed border: registered known issue</p>"
            f"<table><tr><th>case</th>{head}</tr>{''.join(rows)}</table>"
            f"<div id='detail'>click a cell for its violation and reproduce command</div>"
            f"<script>{_SCRIPT}</script>"
            f"<script type='application/json' id='data'>"
            f"{html.escape(json.dumps({'cases': case_ids, 'sets': labels}))}</script>"
            f"</body></html>")

"""The matrix as one static HTML page: no server, no CDN, opens from disk (file://).

It says first what a person needs: per release set how many rows are new, stale, known
and passing, and what changed since the previous night when one is given. Rows are
cases, columns release sets. News (a reading that fails the run: new, stale,
harness-error) is drawn loudly, in its verdict's colour with a red outline; a registered
known issue quietly in grey, as a pass is in pale green, so that one new failure stands
out among hundreds of known ones. Rows group and filter by family, path, layout and
status, chosen on the page or in the URL (`matrix.html#status=new&family=yolo`), by a
small inline script. Clicking a cell pins its violation and reproduce command under the
table. The page carries its own data, for the next night's `--previous`.
"""
from __future__ import annotations

import html

from harness.pages import page_cells, page_news
from harness.verdict import Outcome

# A loud cell's colour by its run's verdict (every one of verdict.VERDICTS).
COLOURS = {Outcome.PASS: "#2e7d32", Outcome.MUTATED: "#c62828",
           Outcome.LOSSY_ROUNDTRIP: "#ad1457", Outcome.WRONG_RESULT: "#b71c1c",
           Outcome.ERROR: "#ef6c00",
           Outcome.CRASH: "#4a148c", Outcome.TIMEOUT: "#6d4c41",
           Outcome.UNSUPPORTED: "#757575", Outcome.HARNESS_ERROR: "#000000"}
# A stale entry's run usually passed: its cell is loud in the registry's colour, not green.
STALE_COLOUR = "#e65100"
FILTERS = ("family", "path", "layout", "status")

_STYLE = """body{font:14px system-ui,sans-serif;margin:1.5em}
table{border-collapse:collapse}th,td{padding:.3em .6em;border:1px solid #ccc}
th{text-align:left}td.cell{cursor:pointer;text-align:center;min-width:9em}
td.quiet{background:#eceff1;color:#546e7a}
td.quiet.pass{background:#eef7ee;color:#2e7d32}
td.quiet.unsupported,td.quiet.not-run{background:#fafafa;color:#9e9e9e;font-style:italic}
td.loud{color:#fff;font-weight:bold;outline:3px solid #d50000;outline-offset:-3px}
.headline{font-size:1.2em;padding:.4em .6em;display:inline-block}
.headline.loud{background:#d50000;color:#fff;font-weight:bold}
.headline.quiet{background:#eef7ee;color:#2e7d32}
td.count{text-align:right}td.count.loud{background:#d50000;color:#fff;font-weight:bold}
td.count.zero{color:#bbb}td.count a{color:inherit}
tr.group th{background:#f5f5f5;font-weight:normal;font-style:italic}
#filters{margin:1em 0}#filters label{margin-right:1em}
#detail{white-space:pre-wrap;font-family:monospace;margin-top:1em;padding:.6em;
border:1px solid #ccc;min-height:3em}"""

# Filters and grouping from the URL's fragment (file:// keeps it), written back when a
# select changes, so a filtered page can be linked. A row shows when every filter
# matches; `status` matches any of its cells (`news`: any cell that fails the run).
_SCRIPT = """const FILTERS = ['family', 'path', 'layout', 'status'];
const body = document.querySelector('#matrix tbody');
const rows = Array.from(body.querySelectorAll('tr.row'));
const width = document.querySelectorAll('#matrix thead th').length;
function matches(tr, field, value) {
  if (!value) return true;
  if (field !== 'status') return tr.dataset[field] === value;
  if (value === 'news') return tr.dataset.news === 'yes';
  return tr.dataset.statuses.split(' ').includes(value);
}
function sortKey(tr, by) {
  return by === 'status' ? tr.dataset.rank : (by === 'none' ? '' : tr.dataset[by]);
}
function regroup(by) {
  for (const old of body.querySelectorAll('tr.group')) old.remove();
  const sorted = rows.slice().sort((a, b) =>
    sortKey(a, by).localeCompare(sortKey(b, by)) || a.dataset.order - b.dataset.order);
  const sizes = {};
  for (const tr of sorted) {
    if (!tr.hidden) sizes[sortKey(tr, by)] = (sizes[sortKey(tr, by)] || 0) + 1;
  }
  let last = null;
  for (const tr of sorted) {
    const group = sortKey(tr, by);
    if (by !== 'none' && !tr.hidden && group !== last) {
      last = group;
      const head = document.createElement('tr');
      const cell = document.createElement('th');
      head.className = 'group';
      cell.colSpan = width;
      const name = by === 'status' ? tr.dataset.worst : group;
      cell.textContent = by + ': ' + (name || '-') + ' (' + sizes[group] +
        (sizes[group] === 1 ? ' row)' : ' rows)');
      head.appendChild(cell);
      body.appendChild(head);
    }
    body.appendChild(tr);
  }
}
function apply() {
  const wanted = new URLSearchParams(location.hash.slice(1));
  let shown = 0;
  for (const tr of rows) {
    tr.hidden = !FILTERS.every(field => matches(tr, field, wanted.get(field)));
    if (!tr.hidden) shown += 1;
  }
  for (const field of FILTERS.concat(['group'])) {
    document.getElementById('by-' + field).value =
      wanted.get(field) || (field === 'group' ? 'family' : '');
  }
  regroup(wanted.get('group') || 'family');
  document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' rows shown';
}
function choose() {
  const wanted = new URLSearchParams();
  for (const field of FILTERS.concat(['group'])) {
    const value = document.getElementById('by-' + field).value;
    if (value && !(field === 'group' && value === 'family')) wanted.set(field, value);
  }
  location.hash = wanted.toString();
}
for (const select of document.querySelectorAll('#filters select')) {
  select.addEventListener('change', choose);
}
for (const td of document.querySelectorAll('td.cell')) {
  td.addEventListener('click', () => {
    document.getElementById('detail').textContent = td.dataset.detail || '';
  });
}
window.addEventListener('hashchange', apply);
apply();"""


def _detail(case: str, label: str, cell: dict) -> str:
    lines = [f"{case} on {label}: {cell['verdict']} ({cell['status']}), path {cell['path']}"]
    if cell["stage"]:
        lines.append(f"stage {cell['stage']}" + (f", pass {cell['pass']}" if cell["pass"] else ""))
    if cell["detail"]:
        lines.append(cell["detail"])
    lines += cell["known"]
    if cell["reproduce"]:
        lines.append(f"reproduce: {cell['reproduce']}")
    if cell.get("carried"):
        lines.append(f"carried from {cell['carried']}: checked on an earlier night with the "
                     "same inputs, read against tonight's registry")
    return "\n".join(lines)


def tone(status: str) -> str:
    """`loud` for news, `quiet` for everything else (known, pass, unsupported)."""
    return "loud" if page_news.is_news(status) else "quiet"


def _cell_html(case: str, label: str, cell: dict | None) -> str:
    if cell is None:   # not decided (an interrupted run)
        return ('<td class="cell not-run quiet" data-verdict="" data-status="">'
                '<small>not run</small></td>')
    detail = html.escape(_detail(case, label, cell))
    loud = tone(cell["status"]) == "loud"
    colour = STALE_COLOUR if cell["status"] == Outcome.STALE else COLOURS.get(cell["verdict"],
                                                                               "#333")
    style = f' style="background:{colour}"' if loud else ""
    return (f'<td class="cell {html.escape(cell["status"])} {tone(cell["status"])}"{style} '
            f'data-verdict="{html.escape(cell["verdict"])}" '
            f'data-status="{html.escape(cell["status"])}" '
            f'data-detail="{detail}" title="{detail}">'
            f'{html.escape(cell["verdict"])}<br><small>{html.escape(cell["status"])} · '
            f'{cell["outcome_count"]} · '
            f'{"carried" if cell.get("carried") else format(cell["seconds"], ".1f") + " s"}'
            '</small></td>')


def row_facts(name: str, labels: list[str], cells: dict) -> dict[str, str]:
    """What a row groups and filters by: its family, path and layout (from its cells), the
    statuses of its cells, the worst of them, and whether any is news."""
    present = [cells[name, label] for label in labels if (name, label) in cells]
    first = present[0] if present else {}
    statuses = sorted({cell["status"] for cell in present})
    worst = page_news.worst(statuses) if statuses else "not-run"
    order = [str(status) for status in page_news.SUMMARY_ORDER]
    return {"family": first.get("family") or "other", "path": first.get("path", "extract"),
            "layout": first.get("layout") or "", "statuses": " ".join(statuses),
            "worst": worst, "rank": str(order.index(worst) if worst in order else len(order)),
            "news": "yes" if any(page_news.is_news(status) for status in statuses) else "no"}


def _rows_html(row_names: list[str], labels: list[str], cells: dict) -> tuple[str, dict]:
    """The table's rows, sorted by family as the page first groups them; the values each
    filter can take."""
    facts = {name: row_facts(name, labels, cells) for name in row_names}
    choices: dict[str, set] = {field: set() for field in FILTERS}
    rows = []
    for order, name in sorted(enumerate(row_names), key=lambda item: facts[item[1]]["family"]):
        fact = facts[name]
        for field in ("family", "path", "layout"):
            choices[field].add(fact[field])
        choices["status"].update(fact["statuses"].split())
        data = " ".join(f'data-{key}="{html.escape(value)}"' for key, value in fact.items())
        tds = "".join(_cell_html(name, label, cells.get((name, label))) for label in labels)
        rows.append(f'<tr class="row" data-order="{order}" {data}>'
                    f"<th>{html.escape(name)}</th>{tds}</tr>")
    return "".join(rows), choices


def _filters_html(choices: dict) -> str:
    def select(field: str, values, everything: str = "all") -> str:
        options = "".join(f'<option value="{html.escape(value)}">{html.escape(value or "-")}'
                          "</option>" for value in values)
        return (f'<label>{field} <select id="by-{field}"><option value="">{everything}</option>'
                f"{options}</select></label>")
    order = [str(status) for status in page_news.SUMMARY_ORDER]
    statuses = ["news"] + sorted(choices["status"],
                                 key=lambda s: order.index(s) if s in order else len(order))
    parts = [select(field, sorted(choices[field])) for field in ("family", "path", "layout")]
    parts.append(select("status", statuses))
    parts.append('<label>group by <select id="by-group">'
                 + "".join(f'<option value="{value}">{value}</option>'
                           for value in ("family", "path", "layout", "status", "none"))
                 + "</select></label>")
    return f"<form id='filters'>{''.join(parts)}<span id='shown'></span></form>"


def _summary_html(labels: list[str], cells: dict) -> str:
    counts = page_news.counts(cells, labels)
    columns = list(dict.fromkeys([str(s) for s in page_news.SUMMARY_ORDER]
                                 + [s for column in counts.values() for s in column]))
    news = sum(n for column in counts.values() for status, n in column.items()
               if page_news.is_news(status))
    known = sum(column.get(Outcome.KNOWN, 0) for column in counts.values())
    if news:
        headline = (f"<p class='headline loud' id='headline'>{_count_rows(news)} of news: "
                    + ", ".join(f"{sum(c.get(s, 0) for c in counts.values())} {s}"
                                for s in columns if page_news.is_news(s)
                                and any(c.get(s) for c in counts.values())) + "</p>")
    else:
        headline = (f"<p class='headline quiet' id='headline'>No news: every failure is one "
                    f"of {known} registered known issues</p>")
    head = "".join(f"<th>{html.escape(status)}</th>" for status in columns)
    lines = []
    for label in labels:
        tds = []
        for status in columns:
            number = counts[label].get(status, 0)
            kind = "zero" if not number else tone(status)
            tds.append(f'<td class="count {status} {kind}" data-set="{html.escape(label)}" '
                       f'data-status="{html.escape(status)}"><a href="#status={status}">'
                       f"{number}</a></td>")
        lines.append(f"<tr><th>{html.escape(label)}</th>{''.join(tds)}"
                     f"<td class='count'>{sum(counts[label].values())}</td></tr>")
    return (f"<section id='summary'>{headline}<table class='summary'><tr><th>release set</th>"
            f"{head}<th>rows</th></tr>{''.join(lines)}</table></section>")


def _changes_html(previous: dict | None, cells: dict) -> str:
    if previous is None:
        return ("<section id='changes'><h2>Since the previous night</h2><p>no previous night "
                "given (<code>merge --previous FILE</code>)</p></section>")
    tonight = page_cells.statuses(cells)
    found = page_news.changes(previous, tonight)
    parts = []
    for kind in page_news.CHANGE_KINDS:
        items = "".join(f"<li>{html.escape(change.row)} on {html.escape(change.column)}: "
                        f"{change.before or '(not there)'} → {change.after or '(not there)'}</li>"
                        for change in found[kind])
        # open where it can be read at a glance; a new column's hundreds stay folded
        shown = found[kind] and (kind == "newly failing" or len(found[kind]) <= 20)
        parts.append(f"<details class='change' data-kind='{kind}'{' open' if shown else ''}>"
                     f"<summary>{kind}: {len(found[kind])}</summary><ul>{items}</ul></details>")
    added = page_news.appeared(previous, tonight)
    return (f"<section id='changes'><h2>Since the previous night</h2>{''.join(parts)}"
            f"<p>{_count_rows(added)} not on the previous night's page</p></section>")


def _count_rows(number: int) -> str:
    return f"{number} row" if number == 1 else f"{number} rows"


def render(row_names: list[str], labels: list[str], cells: dict, title: str = "",
           previous: dict | None = None) -> str:
    """The page. `cells`: {(row name, column): cell}; `previous`: the previous night's
    {(row name, column): status} (page_cells.read_previous), or None."""
    rows, choices = _rows_html(row_names, labels, cells)
    head = "".join(f"<th>{html.escape(label)}</th>" for label in labels)
    legend = ("<p class='legend'>loud, in the verdict's colour with a red outline: news (new, "
              "stale, harness-error); grey: a registered known issue; pale green: pass; "
              "pale italic: unsupported here</p>")
    return (f"<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>harness matrix {html.escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body><h1>Invariants: cases × release sets ({html.escape(title)})</h1>"
            f"{_summary_html(labels, cells)}{_changes_html(previous, cells)}{legend}"
            f"{_filters_html(choices)}"
            f"<table id='matrix'><thead><tr><th>case</th>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            f"<div id='detail'>click a cell for its violation and reproduce command</div>"
            f"<script>{_SCRIPT}</script>"
            f"<script type='application/json' id='{page_cells.DATA_ID}'>"
            f"{page_cells.page_data(row_names, labels, cells)}</script>"
            f"</body></html>")

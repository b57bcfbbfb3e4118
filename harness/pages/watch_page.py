"""The watched branch's page: what changed since the last night on top, then the timeline.

As PyTorch's HUD shows trunk: one line per night (newest first) with its commit, its
build, and a cell per row that ever failed or changed (green passing, grey failing as the
night before, red new, blue gone, orange flaky), the culprits found inside its range
marked; then every hunt with its culprit, the parent's verdict that proves it, and the
report text. One static file, no script, no network.
"""
from __future__ import annotations

import html

from harness.versions import nights

COMMIT_URL = "https://github.com/apache/tvm/commit/"
PR_URL = "https://github.com/apache/tvm/pull/"
STYLE = ("body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
         "td,th{padding:3px 6px;border-bottom:1px solid #ddd;vertical-align:top;"
         "text-align:left}.cell{width:14px;height:14px;display:inline-block;border-radius:2px}"
         ".pass{background:#9d9}.same{background:#bbb}.new{background:#d22}.gone{background:#36c}"
         ".flaky{background:#f90}.broken{background:#000}.none{background:#fff;border:1px solid "
         "#ddd}.top{border:2px solid #d22;padding:0.5em 1em;margin-bottom:1em}"
         ".top.quiet{border-color:#36c}"
         "pre{white-space:pre-wrap;background:#f6f6f6;padding:0.5em}")


def _commit(commit: str, title: str = "") -> str:
    link = f"<a href='{COMMIT_URL}{commit}'><code>{commit[:10]}</code></a>"
    return link + (f" {html.escape(title[:80])}" if title else "")


def _pr(hunt: nights.Hunt) -> str:
    return f" (<a href='{PR_URL}{hunt.pr}'>#{hunt.pr}</a>)" if hunt.pr else ""


def _cell(night: nights.Night, previous: nights.Night | None, row: str) -> tuple[str, str]:
    """(css class, tooltip) of one row on one night."""
    if not night.build.get("ok", True):
        return "broken", "the build failed"
    if row not in night.rows:
        return "none", "not run"
    changes = {news.signature: news for news in night.news if news.row == row}
    if any(news.state == nights.FLAKY for news in changes.values()):
        return "flaky", "did not repeat when checked again"
    if any(news.change == nights.NEW for news in changes.values()):
        return "new", "new: " + "; ".join(s for s, n in changes.items() if n.change == nights.NEW)
    if any(news.change == nights.GONE for news in changes.values()):
        return "gone", "gone: " + "; ".join(changes)
    shown = night.rows[row]["signatures"]
    return ("same", "; ".join(shown)) if shown else ("pass", "passes")


def _culprits_in(night: nights.Night, hunts: list[nights.Hunt]) -> str:
    found = [hunt for hunt in hunts if hunt.state == "found" and hunt.new == night.commit]
    return "<br>".join(f"{'fixed by' if hunt.fixed else 'culprit'} "
                       f"{_commit(hunt.culprit)}{_pr(hunt)}" for hunt in found)


def _top(state: nights.WatchState) -> str:
    night = state.nights[-1]
    since = f" since {_commit(night.previous)}" if night.previous else \
        " (nothing to compare with yet)"
    lines = [f"<h2>Latest: {_commit(night.commit, night.title)}{since}</h2>"]
    if not night.build.get("ok", True):
        tail = html.escape(night.build.get("tail", ""))
        lines.append(f"<p><b>The build failed.</b></p><pre>{tail}</pre>")
    if not night.news:
        lines.append("<p>No change since the last night.</p>")
    items = []
    for news in night.news:
        hunt = state.hunts.get(news.hunt)
        where = ""
        if hunt and hunt.state == "found":
            where = (f": {'fixed by' if hunt.fixed else 'introduced by'} "
                     f"{_commit(hunt.culprit, hunt.culprit_title)}{_pr(hunt)}")
        elif hunt:
            where = f": hunt {hunt.state} ({html.escape(hunt.progress or 'not started')})"
        note = f" ({html.escape(news.note)})" if news.note else ""
        items.append(f"<li><b>{news.change}</b> ({news.state or 'not checked again'}) "
                     f"<code>{html.escape(news.row)}</code>: "
                     f"<code>{html.escape(news.signature)}</code>{where}{note}")
    if items:
        lines.append("<ul>" + "".join(items) + "</ul>")
    for error in night.build.get("errors", []):
        lines.append(f"<p><b>harness error</b> (not TVM's): {html.escape(error)}</p>")
    bad = not night.build.get("ok", True) or any(
        news.change in (nights.NEW, nights.BROKE) and news.state != nights.FLAKY
        for news in night.news)
    return f"<div class='top{'' if bad else ' quiet'}'>" + "".join(lines) + "</div>"


def _timeline(state: nights.WatchState) -> str:
    rows = sorted({name for night in state.nights for name, row in night.rows.items()
                   if row["signatures"]} | {news.row for night in state.nights
                                            for news in night.news if news.row != "build"})
    head = "".join(f"<th title='{html.escape(row)}'>{index + 1}</th>"
                   for index, row in enumerate(rows))
    hunts = list(state.hunts.values())
    lines = []
    previous = None
    for night in state.nights:
        cells = []
        for row in rows:
            css, tip = _cell(night, previous, row)
            cells.append(f"<td><span class='cell {css}' title='{html.escape(tip)}'></span></td>")
        build = "ok" if night.build.get("ok", True) else "<b>failed</b>"
        counts = f"{len(night.rows)} rows, {night.failing()} failing, " \
                 f"{sum(n.change == nights.NEW for n in night.news)} new, " \
                 f"{sum(n.change == nights.GONE for n in night.news)} gone"
        lines.append(f"<tr><td>{html.escape(night.started)}</td>"
                     f"<td>{_commit(night.commit, night.title)}</td><td>{build}</td>"
                     f"<td>{counts}{'' if night.finished else ' (unfinished)'}</td>"
                     f"<td>{_culprits_in(night, hunts)}</td>{''.join(cells)}</tr>")
        if night.finished:
            previous = night
    legend = "".join(f"<li>{index + 1}: <code>{html.escape(row)}</code>"
                     for index, row in enumerate(rows))
    return ("<h2>Timeline (newest first)</h2><table><tr><th>night<th>commit<th>build"
            f"<th>rows<th>culprits{head}</tr>{''.join(reversed(lines))}</table>"
            f"<details><summary>rows</summary><ul>{legend}</ul></details>")


def _hunts(state: nights.WatchState) -> str:
    if not state.hunts:
        return "<h2>Hunts</h2><p>None yet.</p>"
    items = []
    for hunt in sorted(state.hunts.values(), key=lambda hunt: hunt.opened, reverse=True):
        head = (f"<b>{hunt.state}</b>: {hunt.change} <code>{html.escape(hunt.signature)}"
                f"</code> on <code>{html.escape(hunt.row)}</code>, range "
                f"{_commit(hunt.old)}..{_commit(hunt.new)}; {hunt.steps} checks, {hunt.builds} "
                f"builds, {hunt.minutes:.1f} min")
        if hunt.state == "found":
            head += (f"<br>{'fixed by' if hunt.fixed else 'introduced by'} "
                     f"{_commit(hunt.culprit, hunt.culprit_title)}{_pr(hunt)}: "
                     f"{html.escape(hunt.said[:200])}<br>proven by its parent "
                     f"{_commit(hunt.parent)}: {html.escape(hunt.parent_said[:200])}"
                     f"<pre>{html.escape(hunt.report)}</pre>")
        elif hunt.progress:
            head += f"<br>{html.escape(hunt.progress)}"
        items.append(f"<li>{head}")
    return "<h2>Hunts</h2><ul>" + "".join(items) + "</ul>"


def page(state: nights.WatchState, branch: str) -> str:
    title = f"apache/tvm {html.escape(branch)}, watched"
    body = _top(state) + _timeline(state) + _hunts(state) if state.nights else \
        "<p>No night yet.</p>"
    return (f"<!doctype html><meta charset='utf-8'><title>{title}</title><style>{STYLE}</style>"
            f"<h1>{title}: {len(state.nights)} nights</h1>"
            "<p><span class='cell pass'></span> passes <span class='cell same'></span> fails "
            "as before <span class='cell new'></span> new <span class='cell gone'></span> gone "
            "<span class='cell flaky'></span> flaky <span class='cell broken'></span> build "
            f"failed</p>{body}")

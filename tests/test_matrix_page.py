"""The matrix page as a person reads it: news first, known issues quiet, rows filtered.

Built from real merged rows: tests/data/nightly holds two nights of real `report` rows on
two release sets (make_rows.py says how each was made), merged here as the nightly merges
them, tonight's with `--previous` the previous night's merged output. The page's text is
checked in the default run; headless Chromium checks the DOM after the page's script ran
(nightly; skipped saying why where Chromium is not installed).
"""
import os
import re
import subprocess

import browser
import pytest
from browser import CHROMIUM, FLAGS
from helpers import ROOT, cli_here

from harness.pages import matrix_page, page_cells, page_news

NIGHTLY = os.path.join(ROOT, "tests", "data", "nightly")
SET_27 = "tvm==0.27.0.post1 tvm-ffi==0.1.14.post1"
SET_26 = "tvm==0.26.0 tvm-ffi==0.1.14.post1"
# Tonight's rows as make_rows.py made them: (row, set) -> status.
NEWS = {("conv-reshape-concat", SET_27): "new", ("nhwc-input", SET_27): "stale"}
CHANGES = {"newly failing": [("conv-reshape-concat", SET_27, "pass", "new"),
                             ("nhwc-input", SET_27, "known", "stale")],
           "newly passing": [("conv-reshape-concat", SET_26, "new", "pass")],
           "newly known": [("conv-dropout-nhwc", SET_27, "new", "known")],
           "gone": [("conv-float16", SET_26, "known", None),
                    ("conv-float16", SET_27, "known", None)],
           "otherwise changed": []}




def _merge(folders, out, *extra):
    code, _, err = cli_here("merge", *folders, "--out", out, *extra)
    assert code == 1, err    # a new and a stale row: the merged exit code is 1
    return err


@pytest.fixture(scope="session")
def nights(tmp_path_factory):
    """(tonight's folder, the previous night's folder), both merged from the fixture rows."""
    base = tmp_path_factory.mktemp("nights")
    night = lambda name: sorted(os.path.join(NIGHTLY, name, release)   # noqa: E731
                                for release in os.listdir(os.path.join(NIGHTLY, name)))
    _merge(night("previous"), base / "previous")
    _merge(night("tonight"), base / "tonight", "--previous", base / "previous" / "report.json")
    return base / "tonight", base / "previous"


def _cells(page: str) -> dict:
    """{(row, set): (status, tone)} of the page's matrix cells."""
    found = {}
    for row in re.findall(r'<tr class="row"[^>]*>(.*?)</tr>', page, re.S):
        name = re.search(r"<th>(.*?)</th>", row).group(1)
        for tone, status, detail in re.findall(r'<td class="cell [\w-]+ (\w+)"[^>]*'
                                               r'data-status="([\w-]*)" data-detail="([^"]*)"',
                                               row):
            label = re.search(r" on (tvm==\S+ tvm-ffi==\S+):", detail).group(1)
            found[name, label] = (status, tone)
    return found


def _summary(page: str) -> dict:
    """{(set, status): count} of the page's summary table."""
    return {(label, status): int(number) for label, status, number in re.findall(
        r'<td class="count [^"]*" data-set="([^"]+)" data-status="([\w-]+)"><a [^>]*>(\d+)</a>',
        page)}


def test_the_page_says_first_what_is_news_and_draws_known_issues_quietly(nights):
    page = (nights[0] / "matrix.html").read_text()
    summary = _summary(page)
    assert {status: summary[SET_27, status] for status in ("new", "stale", "known", "pass")} \
        == {"new": 1, "stale": 1, "known": 3, "pass": 0}
    assert {status: summary[SET_26, status] for status in ("new", "stale", "known", "pass")} \
        == {"new": 0, "stale": 0, "known": 4, "pass": 1}
    assert "2 rows of news: 1 new, 1 stale" in page
    assert page.index("id='summary'") < page.index("id='changes'") < page.index("id='matrix'")
    cells = _cells(page)
    assert len(cells) == 10
    for key, (status, tone) in cells.items():
        assert tone == ("loud" if key in NEWS else "quiet"), (key, status, tone)
        assert status == NEWS.get(key, status)
    assert {status for status, _ in cells.values()} == {"new", "stale", "known", "pass"}
    assert "http://" not in page and "https://" not in page   # no CDN, opens from disk


def test_the_page_lists_what_changed_since_the_previous_night(nights):
    page = (nights[0] / "matrix.html").read_text()
    for kind, changes in CHANGES.items():
        section = re.search(rf"<details class='change' data-kind='{kind}'[^>]*><summary>"
                            rf"{kind}: (\d+)</summary><ul>(.*?)</ul>", page)
        assert int(section.group(1)) == len(changes), kind
        for row, label, before, after in changes:
            assert (f"<li>{row} on {label}: {before} → {after or '(not there)'}</li>"
                    in section.group(2)), (kind, row, label)
    # the previous night read back from its page gives the same: the page carries its data
    from_page = page_cells.read_previous(str(nights[1] / "matrix.html"))
    assert from_page == page_cells.read_previous(str(nights[1] / "report.json"))


def test_merge_counts_rows_by_reading(tmp_path):
    """`merge` once said "0 pass rows" of a page full of passes: it counted the pass sweep's
    rows. It says both, by name."""
    folders = sorted(os.path.join(NIGHTLY, "tonight", release)
                     for release in os.listdir(os.path.join(NIGHTLY, "tonight")))
    err = _merge(folders, tmp_path / "merged")
    assert "10 report rows on 2 release sets (1 new, 1 stale, 7 known, 1 pass), " \
           "0 pass-sweep rows" in err


def test_changes_between_two_nights_by_kind():
    before = {("a", "s"): "pass", ("b", "s"): "known", ("c", "s"): "new", ("d", "s"): "new",
              ("e", "s"): "pass", ("f", "s"): "new"}
    after = {("a", "s"): "new", ("b", "s"): "pass", ("c", "s"): "known", ("d", "s"): "new",
             ("f", "s"): "stale", ("g", "s"): "known", ("h", "s"): "harness-error"}
    found = {kind: [change.row for change in changes]
             for kind, changes in page_news.changes(before, after).items()}
    assert found == {"newly failing": ["a", "h"], "newly passing": ["b"], "newly known": ["c"],
                     "gone": ["e"], "otherwise changed": ["f"]}
    assert page_news.appeared(before, after) == 2


def test_a_previous_night_that_is_not_one_is_refused_in_one_line(nights, tmp_path):
    (tmp_path / "notes.txt").write_text("not a page")
    for previous, says in ((tmp_path / "missing.json", "No such file"),
                           (tmp_path / "notes.txt", "not JSON"),
                           (nights[1] / "report.md", "not JSON")):
        code, out, err = cli_here("merge", os.path.join(NIGHTLY, "tonight", "0.26.0"),
                                  "--out", tmp_path / "out", "--previous", previous)
        assert code == 2 and len(err.strip().splitlines()) == 1 and says in err, err
    assert not (tmp_path / "out").exists()


def _dom(page, tmp_path, fragment: str = "") -> str:
    return browser.dom(page.as_uri() + fragment, tmp_path / "profile")


@pytest.mark.nightly
@pytest.mark.skipif(CHROMIUM is None, reason=browser.MISSING + "; the page's text "
                    "is checked without it")
def test_chromium_shows_news_loudly_and_a_filter_from_the_url(nights, tmp_path):
    page = nights[0] / "matrix.html"
    dom = _dom(page, tmp_path)
    summary = _summary(dom)
    assert (summary[SET_27, "new"], summary[SET_27, "stale"], summary[SET_27, "known"],
            summary[SET_26, "pass"]) == (1, 1, 3, 1)
    cells = _cells(dom)
    assert {key for key, (_, tone) in cells.items() if tone == "loud"} == set(NEWS)
    assert {key for key, (_, tone) in cells.items() if tone == "quiet"} == set(cells) - set(NEWS)
    assert "5 of 5 rows shown" in dom                 # the script ran
    assert "family: handwritten (5 rows)" in dom      # and grouped the rows by family

    filtered = _dom(page, tmp_path, "#status=new")
    shown = re.findall(r'<tr class="row"[^>]*?(hidden="")?>\s*<th>(.*?)</th>', filtered)
    assert [name for hidden, name in shown if not hidden] == ["conv-reshape-concat"]
    assert len(shown) == 5 and "1 of 5 rows shown" in filtered
    assert 'id="by-status"' in filtered and "family: handwritten (1 row)" in filtered

    shot = tmp_path / "matrix.png"    # for a person to look at; never in the repo
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                    f"--screenshot={shot}", "--window-size=1200,1000", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and os.path.getsize(shot) > 1000


def test_the_nightly_installs_chromium_and_reads_the_previous_night():
    """The browser test above is nightly: the shard jobs that run it install Chromium before
    pytest starts, and the merge job hands the previous night's page to `merge`."""
    with open(os.path.join(ROOT, ".github", "workflows", "nightly.yml")) as handle:
        workflow = handle.read()
    shard = workflow[workflow.index("  shard:"):workflow.index("  merge:")]
    assert "apt-get install -y chromium" in shard
    assert shard.index("apt-get install -y chromium") < shard.index("tox -e")
    merge = workflow[workflow.index("  merge:"):]
    assert "--name nightly-page" in merge and "--previous previous/report.json" in merge


def test_a_shard_step_runs_every_command_after_one_that_finds_news(tmp_path):
    """Under GitHub's default shell (`bash -e`) a report exiting 1 on news skipped the rest
    of its step: the compile report, the sweep and the carry copy of that shard. The shard
    job's shell, run here on a two-command script whose first exits 1, runs the second."""
    import yaml
    with open(os.path.join(ROOT, ".github", "workflows", "nightly.yml")) as handle:
        shard = yaml.safe_load(handle)["jobs"]["shard"]
    shell = shard["defaults"]["run"]["shell"]
    script = tmp_path / "step.sh"
    script.write_text("report() { return 1; }\nreport\necho the sweep ran\n")
    done = subprocess.run(shell.replace("{0}", str(script)).split(), capture_output=True,
                          text=True, timeout=60)
    assert "the sweep ran" in done.stdout, (shell, done.stdout, done.stderr)
    assert not any("shell" in step for step in shard["steps"]), "a step overrides the shell"


def test_an_undecided_cell_is_said_and_a_page_of_no_news_says_so():
    cell = {"verdict": "mutated", "status": "known", "outcome_count": 3, "seconds": 1.0,
            "stage": "", "pass": "", "detail": "", "known": [], "path": "extract",
            "reproduce": ""}
    page = matrix_page.render(["a", "b"], ["s"], {("a", "s"): cell}, "t")
    assert "not run" in page and "No news: every failure is one of 1 registered known" in page


def test_a_carried_cell_says_so_instead_of_its_seconds():
    row = {"case": "a", "verdict": "pass", "status": "pass", "failing": False, "exit": 0,
           "outcome_count": 3, "wall_seconds": 12.5, "violations": [], "tags": [],
           "carried": "carry/report"}
    page = matrix_page.render(["a"], ["s"], {("a", "s"): page_cells.cell_of_row(row)}, "t")
    assert "3 · carried" in page and "12.5 s" not in page
    assert "carried from carry/report: checked on an earlier night" in page
    checked = page_cells.cell_of_row({**row, "carried": ""})
    assert "12.5 s" in matrix_page.render(["a"], ["s"], {("a", "s"): checked}, "t")

"""The documentation cannot drift from the code: every generated figure is what the code
and data say now, every environment variable the code reads is documented, and the README
stays a five-minute read.

No TVM: the figures are read from the catalog, the registry, the doors and the outcome
table (harness/cli/docs_figures.py); the mkdocs build itself (links, anchors, the nav) runs
in .ci/run with --strict.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import re
import shlex
import shutil

import pytest
from helpers import ROOT

from harness.cli import docs_figures

README_LINES = 200
ENVIRONMENT_PAGE = os.path.join(ROOT, "docs", "reference", "environment.md")
VARIABLE = re.compile(r"""["'](HARNESS_[A-Z0-9_]+)["']""")

needs_torchvision = pytest.mark.skipif(
    importlib.util.find_spec("torchvision") is None,
    reason="the catalog's torchvision families are counted from torchvision: torch is not "
           "installed (this door needs the torch extra)")


@needs_torchvision
def test_every_figure_is_what_the_code_says():
    stale = docs_figures.stale_figures()
    assert not stale, ("figures differ from the code; run "
                       "`python -m harness.cli.docs_figures --write`:\n  " + "\n  ".join(stale))


@needs_torchvision
def test_a_figure_edited_by_hand_is_named(tmp_path):
    """Seeded drift: one count changed in a copy of the pages is reported by page and name."""
    shutil.copy(os.path.join(ROOT, "README.md"), tmp_path / "README.md")
    shutil.copytree(os.path.join(ROOT, "docs"), tmp_path / "docs")
    page = tmp_path / "docs" / "reference" / "numbers.md"
    text = page.read_text()
    drifted = re.sub(r"(\| standalone reproducers \| )(\d+)",
                     lambda match: f"{match.group(1)}{int(match.group(2)) - 1}", text, count=1)
    assert drifted != text
    page.write_text(drifted)
    assert docs_figures.stale_figures(str(tmp_path)) == [
        os.path.join("docs", "reference", "numbers.md") + ": figure numbers"]


def test_a_block_naming_no_figure_is_refused():
    with pytest.raises(KeyError, match="unknown figure 'nosuch'"):
        docs_figures.refreshed("<!-- figure: nosuch -->\n| x |\n<!-- /figure -->", "page.md")


def test_every_door_and_outcome_is_in_its_table():
    """The tables are written from the lists themselves: a door or an outcome added is in
    them at once (what the README and the reference paste)."""
    from harness import doors
    from harness.verdict import EXIT_CODES, Outcome
    assert all(f"| `{door.name}` |" in docs_figures.door_table() for door in doors.DOORS)
    assert all(f"| `{member}` |" in docs_figures.outcomes() for member in Outcome)
    assert all(f"| {code} |" in docs_figures.exit_codes() for code, _ in EXIT_CODES)


def read_variables(folders: list[str]) -> set[str]:
    """Every HARNESS_* name quoted in the Python files of `folders`."""
    names = set()
    for folder in folders:
        for path in glob.glob(os.path.join(folder, "**", "*.py"), recursive=True):
            with open(path) as handle:
                names.update(VARIABLE.findall(handle.read()))
    return names


def undocumented(names: set[str], page: str) -> list[str]:
    return sorted(name for name in names if f"`{name}`" not in page)


def test_every_environment_variable_read_is_documented():
    with open(ENVIRONMENT_PAGE) as handle:
        page = handle.read()
    names = read_variables([os.path.join(ROOT, "harness"), os.path.join(ROOT, "tests")])
    assert len(names) > 10
    assert not undocumented(names, page), (
        f"document them in {os.path.relpath(ENVIRONMENT_PAGE, ROOT)}: "
        f"{undocumented(names, page)}")
    missing = "HARNESS_" + "NOT_A_VARIABLE"   # spelled apart: this file is scanned too
    assert undocumented({missing}, page) == [missing]


def test_the_readme_is_a_five_minute_read_whose_links_resolve():
    with open(os.path.join(ROOT, "README.md")) as handle:
        text = handle.read()
    assert len(text.splitlines()) <= README_LINES, "move detail into docs/, keep the README short"
    links = re.findall(r"\]\(((?:docs/)[^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) > 10
    assert not [link for link in links if not os.path.exists(os.path.join(ROOT, link))]


def shown_commands(text: str) -> list[str]:
    """The `python -m harness ...` command lines of a page's sh and console blocks."""
    commands = []
    for block in re.findall(r"```(?:sh|console)\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            found = re.search(r"python -m harness (.*)", line.strip().removeprefix("$ "))
            if found:
                commands.append(re.split(r" #|;| >| \|", found.group(1))[0])
    return commands


def unparsable(commands: list[str]) -> list[str]:
    from harness.cli.main import build_parser
    from harness.verdict import BadInput
    parser, refused = build_parser(), []
    for command in commands:
        try:
            parser.parse_args(shlex.split(command))
        except (BadInput, SystemExit) as exc:
            refused.append(f"{command}: {exc}")
    return refused


def test_every_command_the_readme_and_guides_show_parses():
    """A command a reader copies from the README, a tutorial or a how-to guide is one the
    CLI takes: an option renamed or removed fails here, naming the page's line."""
    pages = [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "tutorials", "*.md"))
        + glob.glob(os.path.join(ROOT, "docs", "how-to", "*.md")))
    commands = [command for page in pages for command in shown_commands(open(page).read())]
    assert len(commands) > 20
    assert not unparsable(commands)
    assert unparsable(["check model.onnx --no-such-option", "reduce"])   # seeded: both refused

"""The documentation's figures, written from the code and data they describe.

A page's block between `<!-- figure: NAME -->` and `<!-- /figure -->` is FIGURES[NAME]()
exactly: `python -m harness.cli.docs_figures --write` rewrites every block of README.md and
docs/, and `--check` (tests/test_docs_figures.py) fails when one differs, naming it. So a
count, a door, an outcome or an exit code cannot drift from what the code holds; figures
measured once (seconds, ratios) are not here: they are dated where they are written.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import sys

from harness import doors, paths
from harness.catalog import cases as catalog
from harness.catalog import known_issues
from harness.verdict import EXIT_CODES, Outcome

BLOCK = re.compile(r"(<!-- figure: ([a-z-]+) -->\n)(.*?)(<!-- /figure -->)", re.S)


def outcomes() -> str:
    """The outcome table: every verdict, registry reading and sweep row."""
    rows = ["| outcome | of | fails the run | exit | meaning |", "|---|---|---|---|---|"]
    rows += [f"| `{member}` | {member.family} | {'yes' if member.failing else 'no'} | "
             f"{member.exit} | {member.meaning} |" for member in Outcome]
    return "\n".join(rows)


def exit_codes() -> str:
    rows = ["| exit | meaning |", "|---|---|"]
    rows += [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES]
    return "\n".join(rows)


def door_table() -> str:
    """Each input door: what it reads, TVM's frontend, what its answers are compared with."""
    rows = ["| door | reads | TVM frontend | answers compared with | pip extra |",
            "|---|---|---|---|---|"]
    for door in doors.DOORS:
        reads = (f"`{door.name}:FILE`" if door.by_name_only
                 else ", ".join(f"`{suffix}`" for suffix in door.suffixes))
        rows.append(f"| `{door.name}` | {reads} | {door.frontend} | "
                    f"{door.reference or '(copies and layouts only)'} | "
                    f"{f'`{door.extra}`' if door.extra else '(base install)'} |")
    return "\n".join(rows)


def numbers() -> str:
    """What the catalog and the registry hold, counted from them."""
    cases = catalog.catalog()
    families: dict[str, int] = {}
    for case in cases:
        family = case.tags[0] if case.tags else "other"
        families[family] = families.get(family, 0) + 1
    entries = known_issues.registry()
    reproducers = {entry.reproducer for entry in entries if entry.reproducer}
    command_count = len(_commands())
    rows = ["| what | how many |", "|---|---|",
            f"| catalog cases (each layout a case) | {len(cases)} |",
            f"| of them in the default test run's catalog | "
            f"{sum(1 for case in cases if not case.opt_in)} |"]
    rows += [f"| &nbsp;&nbsp;family `{family}` | {count} |"
             for family, count in sorted(families.items(), key=lambda item: -item[1])]
    rows += [f"| input doors | {len(doors.DOORS)} |",
             f"| known-issue registry entries | {len(entries)} |",
             f"| standalone reproducers | {len(reproducers)} |",
             f"| commands | {command_count} |"]
    return "\n".join(rows)


def commands() -> str:
    rows = ["| command | what it does |", "|---|---|"]
    rows += [f"| `{name}` | {help_text} |" for name, help_text in _commands()]
    return "\n".join(rows)


def _commands() -> list[tuple[str, str]]:
    from harness.cli.main import build_parser
    return list(build_parser().command_help.items())


def registry_index() -> str:
    """Every built-in registry entry, by file: what a reviewer scans before opening one."""
    rows = ["| entry | kind | stage, pass | file | reproducer |", "|---|---|---|---|---|"]
    for entry in known_issues.registry():
        if entry.base != catalog.CASES_DIR:
            continue
        where = ", ".join(part for part in (entry.stage, entry.pass_name) if part) or "any"
        reproducer = f"`{os.path.basename(entry.reproducer)}`" if entry.reproducer else ""
        rows.append(f"| `{entry.id}` | {entry.verdict} | {where.replace('|', '/')} | "
                    f"`{os.path.basename(entry.file)}` | {reproducer} |")
    return "\n".join(rows)


# The reach map as last measured (`python -m harness reach --all --json > REACH_FILE`):
# measuring imports every case through TVM, which a figure must not; the file is the data.
REACH_FILE = os.path.join("docs", "reference", "reach.json")


def reach() -> str:
    """The reach map: each frontend's converters and how many the corpus exercises."""
    import json

    from harness.reach import reach_map
    with open(os.path.join(paths.REPO_ROOT, REACH_FILE)) as handle:
        measured = json.load(handle)
    stack = measured.get("versions", {})
    selection = " ".join(f"`{pattern}`" for pattern in measured.get("selection", []))
    return (reach_map.table(measured) + f"\n\nMeasured on apache-tvm {stack.get('tvm_version')}"
            f" / apache-tvm-ffi {stack.get('tvm_ffi_version')} over {selection}; the data: "
            f"`{REACH_FILE}`.")


FIGURES = {"outcomes": outcomes, "exit-codes": exit_codes, "doors": door_table,
           "numbers": numbers, "commands": commands, "registry-index": registry_index,
           "reach": reach}


def pages(root: str = paths.REPO_ROOT) -> list[str]:
    """The files whose blocks are figures: the README and every page of the site."""
    return [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))


def refreshed(text: str, where: str) -> str:
    """`text` with every figure block written anew; an unknown figure name is refused."""
    def write(match: re.Match) -> str:
        name = match.group(2)
        if name not in FIGURES:
            raise KeyError(f"{where}: unknown figure {name!r}; one of {', '.join(FIGURES)}")
        return f"{match.group(1)}{FIGURES[name]()}\n{match.group(4)}"
    return BLOCK.sub(write, text)


def stale_figures(root: str = paths.REPO_ROOT) -> list[str]:
    """'PAGE: figure NAME' for every block that differs from what the code says now."""
    stale = []
    for page in pages(root):
        with open(page) as handle:
            text = handle.read()
        for match in BLOCK.finditer(text):
            if refreshed(match.group(0), page) != match.group(0):
                stale.append(f"{os.path.relpath(page, root)}: figure "
                             f"{match.group(2)}")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cli.docs_figures",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite every figure block")
    args = parser.parse_args(argv)
    try:
        return _write() if args.write else _check()
    except KeyError as exc:   # a block naming no figure: the page's to fix
        print(f"docs_figures: {exc.args[0]}", file=sys.stderr)
        return 2


def _write() -> int:
    for page in pages():
        with open(page) as handle:
            text = handle.read()
        new = refreshed(text, page)
        if new != text:
            with open(page, "w") as handle:
                handle.write(new)
            print(f"wrote {os.path.relpath(page, paths.REPO_ROOT)}")
    return 0


def _check() -> int:
    stale = stale_figures()
    for line in stale:
        print(f"{line} is stale: python -m harness.cli.docs_figures --write")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

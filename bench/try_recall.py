"""The recall of `try`'s target determination, measured on the registry's bugs.

Every registered bug whose `at_fault` names the line of TVM that causes it is a seeded
change for free: a change of that line is what fixed or broke it. For each, the change is
read (premerge/touched) and the checks selected (premerge/targets), with no build and
nothing run, and asked: does the selection hold a catalog case the bug shows on (the
entry's `case` globs)? Reproducers are left out of that question, since `try` runs every
registered reproducer and would catch every registered bug by its own: what is measured
is whether the catalog part would have caught the bug had it not been registered.

    HARNESS_TVM_SOURCE=~/tvm .venv/bin/python bench/try_recall.py [--per-converter N]

Prints one line per bug (caught, or missed and where the line fell), then the recall by
the area the line is in and the selection's size against the nightly's checks.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.catalog import cases as catalog  # noqa: E402
from harness.catalog import known_issues, onnx_node  # noqa: E402
from harness.catalog.issue_entry import source_line  # noqa: E402
from harness.cli import reach  # noqa: E402
from harness.premerge import exercised, history, targets, touched  # noqa: E402
from harness.premerge.change import Change, FileChange  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=os.environ.get("HARNESS_TVM_SOURCE"))
    parser.add_argument("--per-converter", type=int, default=targets.PER_CONVERTER)
    parser.add_argument("--default-run", action="store_true",
                        help="a file nothing maps selects the catalog's default run, not "
                             "the two-case sample")
    parser.add_argument("--no-history", action="store_true",
                        help="leave the registry's history out of the selection")
    args = parser.parse_args()
    if not args.source or not os.path.isdir(os.path.join(args.source, ".git")):
        print("try_recall: give --source TVM_CHECKOUT (or HARNESS_TVM_SOURCE)",
              file=sys.stderr)
        return 2
    everything = catalog.select_for_run(None, everything=True)
    maps = {case.id: case.door.converter_map for case in everything}
    node_tests = onnx_node.operators_by_case()
    found = exercised.gather(reach.recorded_rows(), node_tests, maps)
    nightly = len(everything) * len(targets.PATHS)
    by_area: dict[str, list[bool]] = {}
    sizes = []
    entries = list(known_issues.registry())
    default = tuple(case.id for case in catalog.select_for_run(None)) if args.default_run \
        else targets.SAMPLE
    for entry in entries:
        where = source_line(entry) if entry.at_fault else None
        if where is None or where.repo != "apache/tvm":
            continue
        shows_on = [case for case in maps if any(fnmatch.fnmatch(case, glob)
                                                  for glob in entry.case)]
        if not shows_on:
            continue   # a suite test's or a fuzz program's bug: no catalog case shows it
        if subprocess.run(["git", "-C", args.source, "cat-file", "-e",
                           f"{where.commit}:{where.path}"], capture_output=True).returncode:
            print(f"  skip {entry.id}: {where.path} @ {where.commit} not in the checkout")
            continue
        change = Change(args.source, where.commit, where.commit, entry.id,
                        (FileChange(where.path, where.path, frozenset({where.line}),
                                    frozenset({where.line})),))
        read = touched.read(change)
        # the bug under test is not remembered, nor any other bug at the same line (the
        # same bug seen on another layout or door)
        same_line = frozenset(other.id for other in entries if other.at_fault and
                              _line_of(other) == (where.path, where.line))
        remembered = None if args.no_history else history.from_registry(
            entries, list(maps), excluding=same_line)
        selection = targets.select(read, found, maps, args.per_converter, remembered,
                                   default)
        selected = {case for by_case in selection.cases.values() for case in by_case}
        caught = bool(selected & set(shows_on))
        area = read[0].area.value
        by_area.setdefault(area, []).append(caught)
        sizes.append(sum(len(by_case) for by_case in selection.cases.values()))
        what = "caught" if caught else "MISSED"
        print(f"  {what:6} {entry.id:55} {area:9} {where.path}:{where.line}"
              + ("" if caught else f"  ({read[0].why[:60]})"))
    total = [caught for results in by_area.values() for caught in results]
    print()
    for area, results in sorted(by_area.items()):
        print(f"{area:9} {sum(results)}/{len(results)} caught")
    if total:
        print(f"recall   {sum(total)}/{len(total)} = {sum(total) / len(total):.0%} of the "
              "registered bugs whose line is known and whose cases are in the catalog "
              "(reproducers left out)")
        sizes.sort()
        print(f"selection: median {sizes[len(sizes) // 2]} checks, max {sizes[-1]}, of the "
              f"nightly's {nightly} (catalog cases x paths)")
    return 0


def _line_of(entry) -> tuple[str, int] | None:
    try:
        where = source_line(entry)
    except ValueError:
        return None
    return (where.path, where.line) if where else None


if __name__ == "__main__":
    sys.exit(main())

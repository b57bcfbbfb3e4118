"""`python -m harness try --source TVM_CHECKOUT --base REF (--head REF | --patch FILE)`.

Checks a TVM change before it lands: reads what the diff touches (premerge/touched),
selects the checks that can see it (premerge/targets, from what each case exercises:
premerge/exercised), runs them on the base's build and the head's (premerge/trial: the
build store or the build folder serve a Python-only change without compiling; ccache
the rest) and writes the answer as a pull-request comment (premerge/comment): what is new
on the head, which registered bugs it fixes, what stayed. The checkout is left on the
commit or branch it was on.

Exit 0: nothing new (a docs-only change: nothing run); 1: something new, confirmed or not
checked again (flaky changes are said, not counted); 2 bad input; 4 the harness's own
error; 125 TVM cannot be built here.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys

from harness import paths
from harness.catalog import cases as catalog
from harness.catalog import known_issues, onnx_node
from harness.cli import reach
from harness.cli.options import positive_int
from harness.premerge import change as change_of
from harness.premerge import comment, exercised, fixes, history, targets, touched, trial
from harness.verdict import EXIT_CANNOT_TEST, EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATED, BadInput
from harness.versions import build_bench, build_checks, envs
from harness.versions.source_checkout import EnvironmentProblem, git, require_clean_tvm

CHECK_TIMEOUT = 1800.0


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cmd_try(args) -> int:
    return try_change(args, bench_of)


def try_change(args, make_bench) -> int:
    """The command with the bench given (`make_bench(args, source, selection)`): the real
    one builds TVM; a test's toy stands in on a toy history (tests/test_try.py)."""
    answer = run_try(args, make_bench)
    if answer is None:
        return EXIT_CANNOT_TEST
    change, selection, outcome, nightly = answer
    references = {entry.id: entry.reference for entry in known_issues.registry()}
    text = comment.markdown(change, selection, outcome, references, nightly)
    if args.comment:
        with open(args.comment, "w") as handle:
            handle.write(text)
    print(comment.to_json(change, selection, outcome, references, nightly) if args.json
          else text, end="" if not args.json else "\n")
    if outcome is None:
        return EXIT_PASS
    if outcome.new:
        return EXIT_VIOLATED
    return EXIT_INTERNAL if outcome.errors else EXIT_PASS


def run_try(args, make_bench):
    """(the change, its selection, the outcome or None when nothing ran, the nightly's
    size), or None when TVM cannot be built here (said on stderr)."""
    if args.head and args.patch:
        raise BadInput("give --head REF or --patch FILE, not both")
    if not args.head and not args.patch:
        raise BadInput("give the change: --head REF (a branch or commit) or --patch FILE")
    source = require_clean_tvm(args.source, "try")
    change = change_of.of_patch(source, args.base, args.patch) if args.patch else \
        change_of.of_refs(source, args.base, args.head)
    if not change.files:
        raise BadInput(f"{change.head_label} changes no file against {args.base}")
    read = touched.read(change)
    everything = catalog.select_for_run(None, everything=True)
    maps = {case.id: case.door.converter_map for case in everything}
    remembered = history.from_registry(known_issues.registry(), list(maps))
    default = tuple(case.id for case in catalog.select_for_run(None)) if args.wide \
        else targets.SAMPLE
    selection = targets.select(read, _exercised(read, args, maps, everything), maps,
                               args.per_converter, remembered, default)
    nightly = len(everything) * len(targets.PATHS) + len(_reproducers())
    log(f"try: {len(change.files)} file(s) changed, {change.lines_changed()} lines; "
        f"{selection.size()} checks selected of the nightly's {nightly}")
    outcome = None
    if not selection.empty and not args.dry_run:
        try:
            outcome = _run(args, source, change, selection,
                           make_bench(args, source, selection))
            outcome.findings = fixes.named(outcome.findings, known_issues.registry())
        except EnvironmentProblem as exc:   # the machine cannot build at all
            log(f"try: cannot build TVM here: {exc}")
            return None
    return change, selection, outcome, nightly


def _exercised(read, args, maps, everything) -> exercised.Exercised:
    """The record of what each case exercises: measured rows of this stack (reach, and
    the reports given), the ONNX node tests' graphs; with --record, the touched frontends'
    unrecorded cases measured first."""
    rows = reach.recorded_rows()
    for path in args.exercised or ():
        rows += reach.rows_of_report(path, "--exercised")
    node_tests = onnx_node.operators_by_case()
    found = exercised.gather(rows, node_tests, maps)
    wanted = {frontend for item in read if item.area == touched.Area.FRONTEND
              for frontend in exercised.MAPS_OF_FOLDER.get(item.frontend, ())}
    missing = [case for case in everything if maps[case.id] in wanted
               and not found.recorded(case.id)]
    if args.record and missing:
        log(f"try: recording the converters of {len(missing)} case(s) (import only)")
        measured, interrupted = reach.measure(missing, args.jobs)
        if interrupted is not None:
            raise KeyboardInterrupt
        found = exercised.gather(rows + measured, node_tests, maps)
    return found


def _reproducers() -> list[str]:
    return [entry.id for entry in known_issues.registry() if entry.reproducer]


def _items(selection: targets.Selection, jobs: int) -> list:
    items = [build_checks.reproducers_item(jobs=jobs)] if selection.reproducers else []
    items += [build_checks.report_item(path, sorted(by_case), jobs)
              for path, by_case in sorted(selection.cases.items())]
    items += [build_checks.passes_item(name, list(targets.SAMPLE), jobs)
              for name in sorted(selection.passes)]
    return items


def bench_of(args, source: str, selection: targets.Selection) -> build_bench.BuildBench:
    packages = envs.packages_for(catalog.select_for_run(
        sorted({case for by_case in selection.cases.values() for case in by_case})
        or list(targets.SAMPLE), everything=True))
    return build_bench.BuildBench(
        source, os.path.abspath(args.build_dir or os.path.join(source, "build")),
        os.path.abspath(args.store) if args.store else None, args.jobs, not args.no_ccache,
        packages, CHECK_TIMEOUT, log, command="try")


def _run(args, source: str, change, selection, bench) -> trial.TrialOutcome:
    items = _items(selection, args.jobs)
    ident = hashlib.sha256(os.path.realpath(source).encode()).hexdigest()[:12]
    folder = os.path.join(os.path.abspath(args.state) if args.state else
                          os.path.join(paths.cache_dir(), "try"), ident)
    if args.fresh:   # this change's two sides measured again
        import shutil
        for commit in (change.base, change.head):
            shutil.rmtree(os.path.join(folder, commit[:16]), ignore_errors=True)
    where = git(source, "symbolic-ref", "--quiet", "--short", "HEAD", check=False) or \
        git(source, "rev-parse", "HEAD")
    try:
        return trial.run(change, items, bench, folder, log)
    finally:   # the checkout as the user left it
        git(source, "checkout", "--quiet", where, check=False)


def options(**values) -> argparse.Namespace:
    """The command's options as parsed from nothing but `values` (what `upstream --fix` and
    the tests call it with): every other option at its default."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["try", "--source", values.get("source", "."),
                              "--base", values.get("base", "HEAD")])
    for name, value in values.items():
        setattr(args, name, value)
    return args


def register(sub) -> None:
    p = sub.add_parser("try", help="check a TVM change (a branch or a patch) before it lands: "
                                   "the checks it can affect, on its base and its head")
    p.add_argument("--source", required=True, metavar="TVM_CHECKOUT",
                   help="an apache/tvm git checkout (try checks out the base and the head "
                        "there, and leaves it as it was)")
    p.add_argument("--base", required=True, metavar="REF", help="the commit the change is on")
    p.add_argument("--head", default=None, metavar="REF", help="the changed commit or branch")
    p.add_argument("--patch", default=None, metavar="FILE",
                   help="a patch (git diff, git format-patch) applied on the base and "
                        "committed on a local branch harness-try/FILE-DIGEST")
    p.add_argument("--build-dir", default=None, metavar="DIR",
                   help="kept across runs for incremental builds (default TVM_CHECKOUT/build)")
    p.add_argument("--store", default=None, metavar="DIR",
                   help="builds kept per compiled inputs (the watch's): a Python-only change "
                        "is checked without compiling")
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1)
    p.add_argument("--no-ccache", action="store_true")
    p.add_argument("--per-converter", type=positive_int, default=targets.PER_CONVERTER,
                   metavar="N", help="cases per changed converter (default "
                                     f"{targets.PER_CONVERTER}; those testing it alone first)")
    p.add_argument("--exercised", action="append", default=None, metavar="REPORT_JSON",
                   help="a report whose rows record the converters each case used (the "
                        "nightly's), besides this stack's reach rows")
    p.add_argument("--record", action="store_true",
                   help="measure first the converters of the touched frontends' cases that "
                        "no run recorded (import only, cached per stack)")
    p.add_argument("--wide", action="store_true",
                   help="a file nothing maps to checks selects the catalog's default run on "
                        "both paths, not the two-case sample (bench/try_recall: 69 %% of the "
                        "registered bugs' lines caught instead of 63 %%, ~6x the checks)")
    p.add_argument("--dry-run", action="store_true",
                   help="say the selection and why, run nothing")
    p.add_argument("--comment", default=None, metavar="FILE",
                   help="also write the Markdown comment here")
    p.add_argument("--json", action="store_true", help="the answer as JSON")
    p.add_argument("--state", default=None, metavar="DIR",
                   help="where tries are kept, a record per checkout, commit and check "
                        "(default .harness-cache/try): a base is run once for every try on "
                        "it, and an interrupted try resumes")
    p.add_argument("--fresh", action="store_true",
                   help="run this change's base and head again instead of reading their "
                        "records")
    p.set_defaults(func=cmd_try)

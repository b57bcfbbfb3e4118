"""`python -m harness watch --source TVM_CHECKOUT`: one night of a watched TVM branch.

Builds the checkout's REF (incrementally, ccache, or from the build store), runs the
selection against that build (registered reproducers, catalog cases on each path, op
fuzz campaigns, TVM's own tests: the harness's own commands, versions/build_checks),
compares every row with the last night that had it, checks each change again on the same
build (flaky ones are never searched), and hunts the commit behind each change that repeats within
`--budget` minutes (cli/watch_hunts); a hunt that runs out resumes on the next run. The
state (STATE/watch.json, each night's folder, the hunts' journals) makes every run
resumable: run it again after an interruption and it goes on where it stopped. The
page (STATE/watch.html) shows what changed on top and the nights as a timeline.

Exit 0: no confirmed new failure and the build compiles; 1: a new failure or a build
that stopped compiling (found or not, its hunt is on the page); 2 usage; 4 our own bug.
"""
from __future__ import annotations

import os
import shutil
import sys
import time

from harness import paths
from harness.catalog import cases as catalog
from harness.cli import watch_hunts
from harness.cli.options import positive_float, positive_int
from harness.pages import watch_page
from harness.verdict import EXIT_INTERNAL, EXIT_PASS, EXIT_VIOLATED, BadInput
from harness.versions import build_bench, build_checks, build_store, commit_bisect, envs, nights
from harness.versions.source_checkout import EnvironmentProblem, git, require_clean_tvm

DEFAULT_REPORT = ("yolov3-tiny-nhwc", "conv-reshape-concat")
CHECK_TIMEOUT = 1800.0


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _validate(args) -> tuple[str, str]:
    source = require_clean_tvm(args.source, "the watch")
    return source, commit_bisect.resolve(source, args.ref)


def _state_folder(args, source: str) -> str:
    if args.state:
        return os.path.abspath(args.state)
    import hashlib
    ident = hashlib.sha256(os.path.realpath(source).encode()).hexdigest()[:10]
    return os.path.join(paths.cache_dir(), "watch", f"{os.path.basename(source)}-{ident}")


def _extra_packages(args) -> tuple[str, ...]:
    cases = catalog.select_for_run(args.report, everything=True) if args.report else []
    # TVM's own tests need pytest in the build's environment (`--suite`)
    return envs.packages_for(cases) + (("pytest",) if args.suite else ())


class Bench(build_bench.BuildBench):
    """A night's bench (versions.build_bench) that also hunts: whether a commit's build is
    stored, and the commit probe that checks one hunt's row on any commit."""

    def __init__(self, args, source: str):
        super().__init__(source, os.path.abspath(args.build_dir or
                                                 os.path.join(source, "build")),
                         args.store, args.jobs, not args.no_ccache, _extra_packages(args),
                         CHECK_TIMEOUT, log)

    def stored(self, commit: str) -> bool:
        """Whether the build store holds this commit's compiled inputs (no compile needed)."""
        return build_store.lookup(self.store, commit_bisect.compiled_key(self.source, commit)) \
            is not None

    def probe_for(self, hunt: nights.Hunt):
        """The commit probe that checks one hunt's row on any commit."""
        base = self.probe
        if hunt.change == nights.BROKE:
            return watch_hunts.build_probe(base)
        recheck = hunt.recheck
        test = recheck.get("test") or recheck.get("suite_tests", {}).get(hunt.signature)
        return commit_bisect.CommitProbe(
            base.source, base.build_dir, recheck.get("case", ""), recheck.get("args", []),
            base.jobs, base.ccache, base.extra_packages, base.timeout, base.log,
            store=base.store, script=recheck.get("script"), test=test)


def cmd_watch(args) -> int:
    _check_options(args)
    source, commit = _validate(args)
    try:
        return watch(args, source, commit, Bench(args, source))
    except EnvironmentProblem as exc:   # the machine cannot build at all: not the commit
        raise BadInput(f"cannot build TVM here: {exc}") from None


def watch(args, source: str, commit: str, bench) -> int:
    """One run: tonight's night (or the rest of an unfinished one), then the hunts."""
    state = nights.WatchState(_state_folder(args, source))
    last = state.nights[-1] if state.nights else None
    if last is not None and last.commit == commit and last.finished:
        log(f"watch: {commit[:10]} was watched already ({last.started}): no new commit; "
            "pending hunts go on")
        night = last
    else:
        night = _run_night(args, state, source, commit, bench)
    previous = state.last_finished(before=commit, built=True)
    if previous is not None and not args.no_hunt:
        watch_hunts.open_hunts(state, night, previous, source)
        state.save()
        deadline = time.monotonic() + args.budget * 60   # the budget is the hunts' alone
        watch_hunts.run_pending(state, source, bench, deadline, log)
    git(source, "checkout", "--quiet", "--detach", commit)   # the checkout as watched
    if args.record:
        _record(state, night, args.ref)
    _write_page(state, args)
    return _summary(state, night)


def _run_night(args, state: nights.WatchState, source: str, commit: str,
               bench) -> nights.Night:
    last = state.last_finished(before=commit)
    previous = state.last_finished(before=commit, built=True)
    night = state.night_of(commit, commit_bisect.title(source, commit))
    log(f"watch: night {len(state.nights)} at {commit[:10]} {night.title[:70]}"
        + (f"; compared with {previous.commit[:10]} ({previous.started})" if previous
           else "; the first night (nothing to compare with)"))
    if not night.build:
        night.build = {**bench.build(commit), "errors": []}
        state.save()
    runner = None
    if night.build["ok"]:
        try:
            runner = bench.runner(commit, night.build["folder"])
        except BadInput as exc:   # tonight's own tvm-ffi package does not build
            night.build.update(ok=False, tail=f"its tvm-ffi package does not build: {exc}")
            state.save()
    if runner is not None:
        items = build_checks.plan(args.report, args.paths, not args.no_reproducers,
                                     args.fuzz_examples, args.fuzz_seed, args.suite)
        for number, item in enumerate(items, 1):
            if item.name in night.done:
                continue
            log(f"watch: [{number}/{len(items)}] {item.name}")
            rows, error = bench.run_item(item, runner,
                                         os.path.join(state.folder_of(night), item.name),
                                         night.build["folder"])
            if error:
                night.build["errors"].append(error)
            night.rows.update(rows)
            night.done.append(item.name)
            state.save()
    if not night.news:
        night.news = nights.changes(last, state.built_before(commit), night)
        night.previous = previous.commit if previous else ""
    watch_hunts.recheck(night, state, lambda recheck, signature: bench.shows(
        recheck, signature, runner), log)
    night.finished = True
    state.save()
    return night


def _record(state: nights.WatchState, night: nights.Night, ref: str) -> None:
    """--record: each registered reproducer's answer on this commit (`measured_on`) and each
    culprit a hunt named over one (`introduced_by` / `fixed_by`), in the entry's own file."""
    from harness.catalog import known_issues, registry_edit
    by_id = {entry.id: entry for entry in known_issues.registry()}
    prefix = "reproducer "
    for name, row in night.rows.items():
        entry = by_id.get(name.removeprefix(prefix)) if name.startswith(prefix) else None
        if entry is not None:
            answer = "reproduces" if row["signatures"] else "does not reproduce"
            registry_edit.prepend(entry.base, entry.id, "measured_on",
                                  f"apache/tvm {ref} @ {night.commit[:10]} (source build, "
                                  f"{night.started[:10]}): {answer}")
    for hunt in state.hunts.values():
        entry = by_id.get(hunt.row.removeprefix(prefix)) if hunt.row.startswith(prefix) \
            else None
        if entry is not None and hunt.state == "found":
            registry_edit.set_field(entry.base, entry.id,
                                    "fixed_by" if hunt.fixed else "introduced_by",
                                    f"{hunt.culprit} {hunt.culprit_title}")
    log("watch: recorded this night's reproducer answers and culprits in the registry")


def _write_page(state: nights.WatchState, args) -> None:
    if args.store and args.keep_builds:
        for folder in build_store.prune(args.store, args.keep_builds):
            log(f"watch: dropped the stored build {folder} (--keep-builds {args.keep_builds})")
    text = watch_page.page(state, args.ref)
    path = os.path.join(state.folder, "watch.html")
    with open(path, "w") as handle:
        handle.write(text)
    if args.page:
        os.makedirs(os.path.dirname(os.path.abspath(args.page)), exist_ok=True)
        shutil.copyfile(path, args.page)
    log(f"watch: page {args.page or path}")


def _summary(state: nights.WatchState, night: nights.Night) -> int:
    print(f"watch: {night.commit[:10]} {night.title[:70]}: build "
          f"{'ok' if night.build.get('ok') else 'FAILED'}, {len(night.rows)} rows, "
          f"{night.failing()} failing")
    for news in night.news:
        hunt = state.hunts.get(news.hunt)
        outcome = ""
        if hunt is not None and hunt.state == "found":
            outcome = (f" -> {'fixed by' if hunt.fixed else 'introduced by'} "
                       f"{hunt.culprit[:10]} {hunt.culprit_title}")
        elif hunt is not None:
            outcome = f" -> hunt {hunt.state}: {hunt.progress or 'not started'}"
        print(f"  {news.change} ({news.state}): {news.row}: {news.signature}{outcome}")
    for error in night.build.get("errors", []):
        print(f"  harness error: {error}")
    if night.build.get("errors"):
        return EXIT_INTERNAL
    confirmed_bad = [news for news in night.news if news.state == nights.CONFIRMED
                     and news.change in (nights.NEW, nights.BROKE)]
    return EXIT_VIOLATED if confirmed_bad or not night.build.get("ok") else EXIT_PASS


def register(sub) -> None:
    p = sub.add_parser("watch", help="one night of a TVM branch: build its head, run the "
                                     "selection, compare with the last night, find the commit "
                                     "behind each change")
    p.add_argument("--source", required=True, metavar="TVM_CHECKOUT",
                   help="an apache/tvm git checkout (the watch checks out other commits there)")
    p.add_argument("--ref", default="HEAD",
                   help="the commit to watch: a branch, tag or hash (default HEAD; CI fetches "
                        "and gives origin/main)")
    p.add_argument("--state", default=None, metavar="DIR",
                   help="the nights, hunts and page (default .harness-cache/watch/CHECKOUT-...)")
    p.add_argument("--build-dir", default=None, metavar="DIR",
                   help="kept across runs for incremental builds (default TVM_CHECKOUT/build)")
    p.add_argument("--store", default=None, metavar="DIR",
                   help="keep each build's libraries here, keyed by compiled inputs: a hunt "
                        "checks a stored commit without compiling")
    p.add_argument("--keep-builds", type=positive_int, default=None, metavar="N",
                   help="with --store: keep only the newest N stored builds")
    p.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1)
    p.add_argument("--no-ccache", action="store_true")
    p.add_argument("--report", action="append", default=None, metavar="PATTERN",
                   help="catalog cases to check each night (repeatable; default "
                        f"{' '.join(DEFAULT_REPORT)})")
    p.add_argument("--paths", default="extract,compile",
                   help="comma-separated paths each case runs (default extract,compile)")
    p.add_argument("--no-reproducers", action="store_true",
                   help="do not run the registered reproducers")
    p.add_argument("--fuzz-examples", type=int, default=0, metavar="N",
                   help="op programs per path drawn by the fuzzer (default 0: none)")
    p.add_argument("--fuzz-seed", type=int, default=1)
    p.add_argument("--suite", action="append", default=[], metavar="FOLDER",
                   help="TVM's own tests at the watched commit under the guard: a folder of "
                        "the checkout (tests/python/relax; repeatable); a finding is checked "
                        "again and hunted on its example test alone")
    p.add_argument("--budget", type=positive_float, default=120.0, metavar="MINUTES",
                   help="time for hunts this run (default 120); an unfinished hunt resumes")
    p.add_argument("--no-hunt", action="store_true", help="compare, do not search")
    p.add_argument("--page", default=None, metavar="FILE", help="also write the page here")
    p.add_argument("--record", action="store_true",
                   help="write each reproducer's answer (measured_on) and each culprit named "
                        "over one (introduced_by / fixed_by) into its registry entry")
    p.set_defaults(func=cmd_watch)


def _check_options(args) -> None:
    # the watch's children run from the harness's checkout or a script's folder: every
    # folder given is made absolute here, as the caller meant it
    for name in ("store", "state", "build_dir", "page"):
        if getattr(args, name, None):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    args.report = args.report if args.report is not None else list(DEFAULT_REPORT)
    args.paths = [path.strip() for path in args.paths.split(",") if path.strip()]
    from harness.options import PATH_NAMES
    unknown = [path for path in args.paths if path not in PATH_NAMES]
    if unknown:
        raise BadInput(f"--paths: {', '.join(unknown)} is not a path ({', '.join(PATH_NAMES)})")
    if args.fuzz_examples < 0:
        raise BadInput("--fuzz-examples must be 0 or more")


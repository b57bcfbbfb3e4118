"""pytest plugin: one test item per catalog case x path (x target) x invariant, each run
isolated.

Registered through the `pytest11` entry point, so it is loaded in every pytest
session of an environment where the harness is installed. It therefore does
nothing unless a test asks for the `catalog_case` fixture: no TVM, onnx or
hypothesis import, no hypothesis profile, and only `--harness-*` options.
Whether a failing item is a known issue is decided by `known_issues.judge`.

Which catalog it collects: in this repository's own sessions (rootdir: the checkout
the harness runs from) the built-in catalog and any HARNESS_CASES folders; in any
other project only that project's cases, the HARNESS_CASES folders, unless
`--harness-builtin` asks for the built-in ones too. A project testing its own models
must not inherit the harness's 1,960 items (yolov4-tiny and the slow ones included).
"""
from __future__ import annotations

import os

import pytest

from harness.verdict import BadInput, Outcome

INVARIANTS = {
    "no-mutation": (Outcome.MUTATED,),
    "lossless-roundtrip": (Outcome.LOSSY_ROUNDTRIP,),
    "same-numbers": (Outcome.WRONG_RESULT,),
}


def _checked(invariant: str, path: str, target: str, answers: bool) -> bool:
    """Whether a run on this path and target checks `invariant` at all: the numbers exist
    only where the compile path runs what it compiled (llvm), so no item passes over
    nothing."""
    if invariant != "same-numbers":
        return True
    from harness.tvmapi.targets import target_config  # parses the text; no TVM import
    try:
        kind = target_config(target)["kind"]
    except BadInput:   # the run refuses it, saying why (exit 2)
        return False
    return answers and path == "compile" and kind == "llvm"


# the invariants could not be established
INCOMPLETE = (Outcome.CRASH, Outcome.TIMEOUT, Outcome.ERROR)
# Cases tagged so in cases/catalog.toml also run `--path compile` in the default run.
COMPILE_TAG = "compile"
# ...and, in the nightly, on the targets TVM compiles for without a device (measured:
# tvmapi/targets.py); where one cannot compile here its items skip, saying why.
NIGHTLY_TARGETS = ("cuda", "metal", "opencl", "webgpu")


def pytest_addoption(parser):
    from harness.options import LAYOUTS, PATH_NAMES  # light: no TVM import
    group = parser.getgroup("tvm-harness", "TVM extraction invariants (harness plugin)")
    group.addoption("--harness-case", action="append", default=[], metavar="GLOB",
                    help="only catalog cases whose id or tag matches (repeatable)")
    group.addoption("--harness-builtin", action="store_true",
                    help="also collect the harness's built-in catalog outside its own "
                         "repository (elsewhere only the HARNESS_CASES folders' cases are)")
    group.addoption("--harness-layout", choices=sorted(LAYOUTS), default=None,
                    help="override every case's layout")
    group.addoption("--harness-path", action="append", default=[],
                    choices=list(PATH_NAMES),
                    help="paths to check (repeatable; default: extract for every case, "
                         f"and compile for cases tagged {COMPILE_TAG!r})")
    group.addoption("--harness-target", default="llvm", help="target kind")
    group.addoption("--harness-timeout", type=float, default=900.0,
                    help="seconds before a case's child is killed (verdict timeout)")
    group.addoption("--harness-full-copies", action="store_true",
                    help="also run the whole path over each copy of the source")
    group.addoption("--harness-no-answers", action="store_true",
                    help="compile path: do not run the executable and compare its numbers")
    group.addoption("--harness-shard", default=None, metavar="K/N",
                    help="collect only the K-th of N shards of the items (1-based), balanced "
                         "by --harness-durations (TVM_NUM_SHARDS is left to TVM's own suites)")
    group.addoption("--harness-durations", default=None, metavar="FILE",
                    help="JSON {test id: seconds} to balance shards by (every shard the same)")
    group.addoption("--harness-store-durations", default=None, metavar="FILE",
                    help="merge this session's test times into FILE")


def pytest_configure(config):
    if config.getoption("harness_shard"):
        config.pluginmanager.register(_Shard(config), "harness-shard")
    if config.getoption("harness_store_durations"):
        config.pluginmanager.register(
            _DurationRecorder(config.getoption("harness_store_durations")), "harness-durations")
    config.addinivalue_line("markers", "slow: extraction over ~20 s; left to the nightly run")
    config.addinivalue_line("markers", "nightly: heavy work for the nightly profile only")
    config.addinivalue_line("markers", "needs_env: builds a cached virtual environment")
    config.addinivalue_line("markers", "in_process_tvm: calls TVM in the pytest process itself")


def _paths(config, case) -> list[str]:
    chosen = config.getoption("harness_path")
    if chosen:
        return chosen
    return ["extract"] + (["compile"] if COMPILE_TAG in case.tags else [])


def targets_for(config, case, path: str) -> list[str]:
    """The chosen target; for a case tagged `compile` on the compile path, the device-free
    targets too (nightly items), unless --harness-target chose one."""
    chosen = config.getoption("harness_target")
    if path != "compile" or COMPILE_TAG not in case.tags or chosen != "llvm":
        return [chosen]
    return [chosen, *NIGHTLY_TARGETS]


PARAMETERS = ("catalog_case", "harness_path", "harness_target", "invariant")


def in_this_repository(config) -> bool:
    """The session is the harness's own test suite: its rootdir is the checkout the
    harness is imported from (tox, CI and `pytest` here)."""
    from harness.paths import REPO_ROOT
    return os.path.realpath(str(config.rootpath)) == os.path.realpath(REPO_ROOT)


def with_built_in(config) -> bool:
    """The built-in catalog is collected here, or elsewhere when --harness-builtin asks."""
    return config.getoption("harness_builtin") or in_this_repository(config)


def collected_cases(config) -> list:
    """The cases this session makes items of: the `--harness-case` globs over the user's
    catalog folders (HARNESS_CASES), plus the built-in catalog (`with_built_in`)."""
    from harness.catalog import cases as catalog
    built_in = with_built_in(config)
    return [case for case in catalog.select(config.getoption("harness_case") or None)
            if built_in or case.base != catalog.CASES_DIR]


def _nothing_to_collect(config, names: tuple[str, ...]):
    """One skipped item saying why there is no case, instead of pytest's bare "got empty
    parameter set": a foreign project without HARNESS_CASES, or a glob matching none."""
    from harness.catalog import cases as catalog
    globs = config.getoption("harness_case")
    why = (f"no catalog case matches --harness-case {' '.join(globs)}" if globs else
           "no catalog case of this project")
    reason = f"{why}: {catalog.USER_CASES}=DIR names your catalog folders (catalog.toml)"
    if not with_built_in(config):
        reason += "; --harness-builtin adds the harness's built-in catalog"
    return pytest.param(*[None] * len(names), marks=pytest.mark.skip(reason=reason),
                        id="no-cases")


def pytest_generate_tests(metafunc):
    """One item per case (x path, x invariant: as far as the test asks for them)."""
    if "catalog_case" not in metafunc.fixturenames:
        return
    names = tuple(name for name in PARAMETERS if name in metafunc.fixturenames)
    params, seen = [], set()
    chosen_target = metafunc.config.getoption("harness_target")
    for case in collected_cases(metafunc.config):
        for path, target in [(each, target) for each in _paths(metafunc.config, case)
                             for target in targets_for(metafunc.config, case, each)]:
            other = "" if target == chosen_target else target   # in the id and group
            marks = [pytest.mark.xdist_group("-".join(filter(None, (case.id, path, other))))]
            if case.slow or path == "tune":
                marks.append(pytest.mark.slow)
            if "nightly" in case.tags or other:     # outside the default samples
                marks.append(pytest.mark.nightly)
            for invariant in INVARIANTS:
                if not _checked(invariant, path, target,
                                not metafunc.config.getoption("harness_no_answers")):
                    continue
                values = dict(zip(PARAMETERS, (case, path, target, invariant), strict=False))
                chosen = tuple(values[name] for name in names)
                key = tuple(getattr(value, "id", value) for value in chosen)
                if key in seen:
                    continue
                seen.add(key)
                words = [case.id] + (["" if path == "extract" else path]
                                     if "harness_path" in names else []) + (
                    [other] if "harness_target" in names else []) + (
                    [invariant] if "invariant" in names else [])
                params.append(pytest.param(*chosen, marks=marks,
                                           id="-".join(word for word in words if word)))
    metafunc.parametrize(names, params or [_nothing_to_collect(metafunc.config, names)])


@pytest.fixture
def harness_path(request):
    """The path an item checks (parametrized when the test asks for it; else extract)."""
    return getattr(request, "param", "extract")


@pytest.fixture
def harness_target(request):
    """The target an item compiles for (parametrized; else --harness-target)."""
    return getattr(request, "param", request.config.getoption("harness_target"))


def nodeid_without_group(nodeid: str) -> str:
    """A test's id without the `@group` suffix xdist's loadgroup adds to grouped items (a
    durations file recorded under xdist and read without it name the same test)."""
    return nodeid.split("@")[0]


def xdist_group(item) -> str:
    """The unit xdist schedules: the item's group (a case's items run its child once), or
    the item alone."""
    marker = item.get_closest_marker("xdist_group")
    return marker.args[0] if marker and marker.args else nodeid_without_group(item.nodeid)


def group_seconds(items, durations: dict[str, float], unrecorded: float = 1.0) -> dict[str, float]:
    """Recorded seconds per xdist group (an item with no record counts `unrecorded`)."""
    durations = {nodeid_without_group(key): value for key, value in durations.items()}
    totals: dict[str, float] = {}
    for item in items:
        group = xdist_group(item)
        own = durations.get(nodeid_without_group(item.nodeid), unrecorded)
        totals[group] = totals.get(group, 0.0) + own
    return totals


class _Shard:
    """--harness-shard: collect only this shard's items, a case's group kept whole (split
    over two shards, its child would run in both)."""

    def __init__(self, config):
        from harness import shards
        from harness.verdict import BadInput
        try:
            self.shard = shards.parse(config.getoption("harness_shard"), "--harness-shard")
            self.durations = shards.read_durations(config.getoption("harness_durations"))
        except BadInput as exc:
            raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(tryfirst=True)   # first: the other hooks see only this shard's items
    def pytest_collection_modifyitems(self, config, items):
        from harness import shards
        present = {nodeid_without_group(item.nodeid) for item in items}
        recorded = [value for key, value in self.durations.items()
                    if nodeid_without_group(key) in present]
        seconds = group_seconds(items, self.durations, shards.unrecorded_cost(recorded))
        chosen = set(shards.select(list(seconds), str, self.shard, seconds))
        keep = [item for item in items if xdist_group(item) in chosen]
        kept = {id(item) for item in keep}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
        items[:] = keep


class _DurationRecorder:
    """--harness-store-durations FILE: each test's time (setup, call, teardown) merged into
    FILE at the end, by the process that ends the session (the xdist controller
    sees every worker's reports)."""

    def __init__(self, path: str):
        self.path, self.seconds = path, {}

    def pytest_runtest_logreport(self, report):
        key = nodeid_without_group(report.nodeid)
        self.seconds[key] = self.seconds.get(key, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        if not hasattr(session.config, "workerinput"):
            from harness import shards
            shards.write_durations(self.path, self.seconds)


def pytest_collection_modifyitems(config, items):
    """On a stack the registry says crashes (e.g. tvm-ffi 0.1.15 in save_json), tests that
    call TVM in-process would take their xdist worker down: skip them, naming the entry.
    The catalog items still run, isolated, and report the crash as their verdict."""
    in_process = [item for item in items if item.get_closest_marker("in_process_tvm")]
    if not in_process:
        return
    from harness.catalog import known_issues
    from harness.tvmapi import loading
    from harness.verdict import Outcome
    known = next((entry for entry in known_issues.in_scope("in-process", loading.versions())
                  if entry.verdict == Outcome.CRASH), None)
    if known is None:
        return
    skip = pytest.mark.skip(reason=f"this TVM stack crashes in-process: {known.reference}")
    for item in in_process:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def _harness_results():
    return {}


@pytest.fixture
def case_result(request, catalog_case, harness_path, harness_target, _harness_results):
    """The isolated check of this item's case and path, run once per worker."""
    from harness.options import Options
    from harness.process.commands import reproduce_command
    from harness.process.isolate import run_isolated
    config = request.config
    options = Options(layout=config.getoption("harness_layout") or catalog_case.layout,
                      target=harness_target, path=harness_path,
                      full_copies=config.getoption("harness_full_copies"),
                      answers=not config.getoption("harness_no_answers"))
    key = (catalog_case.id, tuple(sorted(options.to_json().items())))
    if key not in _harness_results:
        _harness_results[key] = run_isolated(catalog_case.id, options,
                                             timeout=config.getoption("harness_timeout"))
    result = _harness_results[key]
    # plain str: xdist ships these between processes and cannot carry an enum
    request.node.user_properties += [("verdict", str(result.verdict)),
                                     ("outcome_count", result.outcome_count),
                                     ("path", harness_path), ("target", harness_target),
                                     ("tvm_version", result.tvm_version),
                                     ("tvm_ffi_version", result.tvm_ffi_version)]
    return result, reproduce_command(catalog_case.id, options)


def assert_invariant(result, invariant: str, command: str) -> None:
    """Pass, xfail as a registered issue, or fail with the violations and a reproducer."""
    from harness.catalog import known_issues
    from harness.verdict import Outcome
    if result.verdict == Outcome.UNSUPPORTED:
        pytest.skip(f"cannot test on this TVM: {result.violations[0].detail}")
    judgement = known_issues.judge(result, INVARIANTS[invariant] + INCOMPLETE
                                   + (Outcome.HARNESS_ERROR,))
    if judgement.unknown or judgement.stale:
        lines = [v.one_line() for v in judgement.unknown] + judgement.lines()
        pytest.fail(f"{result.case}: {invariant} does not hold ({judgement.status})\n  "
                    + "\n  ".join(lines) + f"\n  reproduce: {command}", pytrace=False)
    if judgement.known:
        pytest.xfail("; ".join(judgement.lines()))

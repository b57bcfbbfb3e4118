"""pytest plugin: one test item per catalog case x invariant, each run isolated.

Registered through the `pytest11` entry point. Options: --case (glob, repeat),
--layout, --tvm-target, --check-timeout, --full-copies. The items of one case
share an xdist group, so `pytest -n auto` runs each case's child once.
"""
from __future__ import annotations

import os

import pytest

from harness.catalog import cases as catalog
from harness.tvmapi import compat
from harness.versions import envs
from harness.catalog import known_issues
from harness.cli.main import reproduce_command
from harness.process.isolate import run_isolated
from harness.tvmapi.pipelines import Options

INVARIANTS = {
    "no-mutation": ("mutated",),
    "lossless-roundtrip": ("lossy-roundtrip",),
}
INCOMPLETE = ("crash", "timeout", "error")   # the invariants could not be established


class KnownVerdict(AssertionError):
    """The verdict the known-issue registry expects for this case here."""


def pytest_addoption(parser):
    group = parser.getgroup("tvm-harness", "TVM extraction invariants")
    group.addoption("--case", action="append", default=[], metavar="GLOB",
                    help="only catalog cases whose id or tag matches (repeatable)")
    group.addoption("--layout", choices=["nchw", "nhwc"], default=None,
                    help="override every case's layout")
    group.addoption("--tvm-target", default="llvm", help="target kind for extraction")
    group.addoption("--check-timeout", type=float, default=900.0,
                    help="seconds before a case's child is killed (verdict timeout)")
    group.addoption("--full-copies", action="store_true",
                    help="also run the whole path over each copy of the source")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: extraction over ~20 s; left to the nightly run")
    config.addinivalue_line("markers", "nightly: heavy work for the nightly profile only")
    config.addinivalue_line("markers", "needs_env: builds a cached virtual environment")
    config.addinivalue_line("markers", "in_process_tvm: calls TVM in the pytest process itself")
    _configure_hypothesis(config)


def _register_hypothesis_profiles() -> bool:
    """Profiles dev (default), ci, nightly; the example database lives in the cache folder.

    Registered at import: hypothesis's own plugin loads --hypothesis-profile in its
    pytest_configure, which may run before ours.
    """
    try:
        from hypothesis import HealthCheck, settings
        from hypothesis.database import DirectoryBasedExampleDatabase
    except ImportError:
        return False
    database = DirectoryBasedExampleDatabase(os.path.join(envs.cache_dir(), "hypothesis"))
    slow_ok = [HealthCheck.too_slow, HealthCheck.data_too_large]
    settings.register_profile("dev", max_examples=10, deadline=None, database=database,
                              suppress_health_check=slow_ok)
    settings.register_profile("ci", max_examples=30, deadline=None, database=database,
                              suppress_health_check=slow_ok)
    settings.register_profile("nightly", max_examples=300, deadline=None, database=database,
                              suppress_health_check=slow_ok)
    return True


_HYPOTHESIS = _register_hypothesis_profiles()


def _configure_hypothesis(config):
    if not _HYPOTHESIS:
        return
    from hypothesis import settings
    # --hypothesis-profile (hypothesis's own option) wins over the environment variable.
    chosen = config.getoption("hypothesis_profile", default=None)
    settings.load_profile(chosen or os.environ.get("HARNESS_HYPOTHESIS_PROFILE", "dev"))


def _options(config, case: catalog.Case) -> Options:
    return Options(layout=config.getoption("layout") or case.layout,
                   target=config.getoption("tvm_target"),
                   full_copies=config.getoption("full_copies"))


def pytest_generate_tests(metafunc):
    if "catalog_case" not in metafunc.fixturenames:
        return
    cases = catalog.select(metafunc.config.getoption("case") or None)
    versions = compat.versions()
    params = []
    for case in cases:
        for invariant in INVARIANTS:
            marks = [pytest.mark.xdist_group(case.id)]
            if case.slow:
                marks.append(pytest.mark.slow)
            known = known_issues.lookup(case.id, versions,
                                        metafunc.config.getoption("layout") or case.layout)
            if known:
                # Only the registered verdict xfails; a pass is a strict XPASS (update the
                # registry), any other verdict is a plain failure.
                marks.append(pytest.mark.xfail(strict=True, raises=KnownVerdict,
                                               reason=f"known {known.verdict}: {known.reference}"))
            params.append(pytest.param(case, invariant, id=f"{case.id}-{invariant}", marks=marks))
    metafunc.parametrize(("catalog_case", "invariant"), params)


def pytest_collection_modifyitems(config, items):
    """On a stack the registry says crashes (e.g. tvm-ffi 0.1.15 in save_json), tests that
    call TVM in-process would take their xdist worker down: skip them, naming the entry.
    The catalog items still run, isolated, and report the crash as their verdict."""
    known = known_issues.lookup("in-process", compat.versions())
    if known is None or known.verdict != "crash":
        return
    skip = pytest.mark.skip(reason=f"this TVM stack crashes in-process: {known.reference}")
    for item in items:
        if item.get_closest_marker("in_process_tvm"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def _results():
    return {}


@pytest.fixture
def case_result(request, catalog_case, _results):
    """The isolated check of this item's case, run once per case per worker."""
    config = request.config
    options = _options(config, catalog_case)
    key = (catalog_case.id, tuple(sorted(options.to_json().items())))
    if key not in _results:
        _results[key] = run_isolated(catalog_case.id, options,
                                     timeout=config.getoption("check_timeout"))
    result = _results[key]
    request.node.user_properties += [("verdict", result.verdict), ("tasks", result.tasks),
                                     ("tvm_version", result.tvm_version),
                                     ("tvm_ffi_version", result.tvm_ffi_version)]
    known = known_issues.lookup(catalog_case.id, result.__dict__, options.layout)
    return result, reproduce_command(catalog_case.id, options), known


def assert_invariant(result, invariant: str, command: str, known=None) -> None:
    """Fail with the violation path and a one-line CLI reproducer."""
    if known is not None and result.verdict == known.verdict:
        raise KnownVerdict(f"{result.case}: {known.verdict} as registered ({known.reference})")
    if result.verdict == "unsupported":
        pytest.skip(f"cannot test on this TVM: {result.violations[0].detail}")
    relevant = [v for v in result.violations
                if v.kind in INVARIANTS[invariant] or v.kind in INCOMPLETE]
    if relevant:
        lines = [v.one_line() for v in relevant]
        pytest.fail(f"{result.case}: {invariant} does not hold ({result.verdict})\n  "
                    + "\n  ".join(lines) + f"\n  reproduce: {command}", pytrace=False)

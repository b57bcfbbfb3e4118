"""Root conftest: our own test session's settings.

The harness's pytest plugin is loaded through its `pytest11` entry point
(setup.cfg) and stays inert in other projects; what only our tests want lives
here: `tests/` helpers on the path and the hypothesis profiles dev (default),
ci and nightly, with the example database in the harness cache folder.
Registered at import: hypothesis's own plugin loads `--hypothesis-profile` in
its pytest_configure, which runs after conftest files are imported.
"""
import contextlib
import os
import sys

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "tests"))

from harness import paths
from harness.tvmapi import loading

# tvm_ffi imports torch whenever it is installed: 2-3 s of every process that imports TVM.
# This session's processes import TVM with torch hidden (harness.tvmapi.loading), but for
# the PyTorch door's checks, whose children import it (harness.process.isolate).
os.environ.setdefault(loading.WITHOUT_TORCH, "1")

_database = DirectoryBasedExampleDatabase(os.path.join(paths.cache_dir(), "hypothesis"))
_slow_ok = [HealthCheck.too_slow, HealthCheck.data_too_large]
for _name, _examples in (("dev", 10), ("ci", 30), ("nightly", 300)):
    settings.register_profile(_name, max_examples=_examples, deadline=None,
                              database=_database, suppress_health_check=_slow_ok)


def pytest_addoption(parser):
    parser.addoption("--random-order", type=int, default=None, metavar="SEED",
                     help="our own suite: run the xdist groups in an order drawn from SEED "
                          "instead of longest first (a test that passes only after another "
                          "shows; repeat with other seeds). The seed is printed in the header")


def pytest_report_header(config):
    seed = config.getoption("random_order")
    return None if seed is None else f"random order: --random-order {seed}"


def pytest_configure(config):
    # --hypothesis-profile (hypothesis's own option) wins over the environment variable.
    if not config.getoption("hypothesis_profile", default=None):
        settings.load_profile(os.environ.get("HARNESS_HYPOTHESIS_PROFILE", "dev"))


def pytest_sessionstart(session):
    """A process that collects tests imports TVM first, the harness's way (torch hidden):
    else the first test module's own `import tvm` imports torch too (2 s a worker). The
    xdist controller collects nothing."""
    if session.config.pluginmanager.has_plugin("dsession"):
        return
    with contextlib.suppress(loading.TVMUnavailable):   # the tests that need it say so
        loading.tvm()


DURATIONS = os.path.join(os.path.dirname(__file__), "tests", "durations.json")


# Checked by the README's set-up command (`check yolov3-tiny`), which CI runs on every
# submission: in pytest nightly only, 14 s of the default run's 3 minutes. Its NHWC form
# (the seed's layout) stays in the default run.
NIGHTLY_GROUPS = {"yolov3-tiny-extract"}


@pytest.hookimpl(tryfirst=True)   # before `-m "not nightly"` deselects
def pytest_collection_modifyitems(config, items):
    """Longest first, by tests/durations.json (kept with `--harness-store-durations
    tests/durations.json`): xdist's two workers then finish together instead of one waiting
    on a long item that happened to be collected last. A case's items (one xdist group)
    move together. A worker's modules interleave, so costly fixtures are session-scoped
    (a module-scoped one is set up again at every switch: tests/test_shards.py)."""
    from harness import shards
    from harness.pytest_plugin import group_seconds, xdist_group
    for item in items:
        if xdist_group(item) in NIGHTLY_GROUPS:
            item.add_marker(pytest.mark.nightly)
    seed = config.getoption("random_order")
    if seed is not None:   # the same order in every xdist worker: drawn from the seed alone
        import random
        groups = sorted({xdist_group(item) for item in items})
        random.Random(seed).shuffle(groups)
        rank = {group: index for index, group in enumerate(groups)}
        items.sort(key=lambda item: rank[xdist_group(item)])
        return
    seconds = group_seconds(items, shards.read_durations(DURATIONS))
    items.sort(key=lambda item: -seconds[xdist_group(item)])


def pytest_sessionfinish(session, exitstatus):
    """The skip budget (tests/skip_budget.py): on the pinned stack a skip that names no
    part the machine may lack fails the run. The xdist controller holds every report."""
    if hasattr(session.config, "workerinput"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    import skip_budget
    reasons = [skip_budget.reason_of(report) for report in reporter.stats.get("skipped", [])]
    odd = skip_budget.unexpected(reasons)
    if not odd:
        return
    # held: the default selection on the pinned stack; listed: nightly selections and
    # release envs, whose skips come and go with what each release has
    pinned = skip_budget.on_pinned_stack() and \
        session.config.getoption("markexpr") == skip_budget.DEFAULT_SELECTION
    reporter.write_sep("=", f"{len(odd)} skips no missing part of this machine explains"
                       + ("" if pinned else " (listed: not on the pinned stack)"), red=pinned)
    for reason in sorted(set(odd)):
        reporter.write_line(f"  {odd.count(reason)} x {reason}")
    if pinned and exitstatus == 0:
        session.exitstatus = 1


@pytest.fixture(scope="session")
def reproducer_runner():
    """Reproducers (registered, or a test's repro.py) forked from one parent per pytest
    process that imported TVM once, without torch on its path: as a user without torch
    runs them (tests/reproducer_runner.py)."""
    from helpers import NO_TORCH_DIR, without_torch
    from reproducer_runner import Runner
    started = Runner(dict(os.environ, PYTHONPATH=os.pathsep.join(
        [without_torch(NO_TORCH_DIR), os.environ.get("PYTHONPATH", "")])))
    yield started
    started.close()


@pytest.fixture(autouse=True)
def _no_round_trip_remembered_in_process(tmp_path, monkeypatch):
    """In this process each test starts with no remembered round trip (roundtrip_memo): a
    test that seeds a fault inside a built-in copier (a monkeypatched function, which the
    memo's key, the oracles' source files, cannot see) must meet the copy itself, not a
    verdict an earlier test left. Children (their own processes) share the cache's memo."""
    from harness.oracles import roundtrip_memo
    monkeypatch.setattr(roundtrip_memo, "memo_dir", lambda: str(tmp_path / "roundtrip-memo"))

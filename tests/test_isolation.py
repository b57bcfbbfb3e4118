"""Crash isolation: a dying or hanging child becomes a verdict, and the run goes on."""
import os

import pytest
from helpers import SMALL_CASE, cli_json, seeded

from harness.options import Options
from harness.process.isolate import run_isolated
from harness.versions import envs


def test_abort_in_a_pass_is_a_crash_naming_the_pass_with_its_input(tmp_path):
    options = Options(inject_pass=seeded("abort"), keep_crash_input=True)
    result = run_isolated(SMALL_CASE, options, timeout=300)
    assert result.verdict == "crash"
    violation = result.violations[-1]
    assert (violation.stage, violation.pass_name, violation.pass_index) == ("injected",
                                                                           "injected", 1)
    assert "SIGABRT" in violation.detail
    # the stages and passes that finished before the crash are kept
    assert [s.name for s in result.stages][:2] == ["import", "decompose-ops-for-inference"]
    assert any(p.name == "FuseTIR" for p in result.passes)
    # the module the crashing pass received, as TVM's JSON, loads back
    from harness.tvmapi import copiers
    with open(result.crash_input) as handle:
        assert "main" in str(copiers.load_json(handle.read()).get_global_vars())
    os.remove(result.crash_input)


def test_run_goes_on_after_a_crash():
    crashed = run_isolated(SMALL_CASE, Options(inject_pass=seeded("abort")), timeout=300)
    after = run_isolated(SMALL_CASE, Options(), timeout=300)
    assert (crashed.verdict, after.verdict) == ("crash", "pass")


def test_hang_is_a_timeout_verdict():
    result = run_isolated(SMALL_CASE, Options(inject_pass=seeded("hang")), timeout=5)
    assert result.verdict == "timeout"
    assert (result.violations[-1].stage, result.violations[-1].pass_name) == ("injected",
                                                                              "injected")


def test_cli_crash_exits_1_with_json():
    code, data, _ = cli_json("check", SMALL_CASE, "--inject-pass", seeded("abort"))
    assert code == 1 and data["verdict"] == "crash"


@pytest.mark.needs_env
@pytest.mark.nightly   # builds an apache-tvm + tvm-ffi 0.1.15 environment: ~90 s on a fresh machine
def test_tvm_ffi_0_1_15_segfault_is_reported_as_crash():
    """apache-tvm 0.27.0.post1 + apache-tvm-ffi 0.1.15.post2: every save_json segfaults."""
    env = envs.ensure({"apache-tvm": "0.27.0.post1", "apache-tvm-ffi": "0.1.15.post2"})
    result = run_isolated(SMALL_CASE, Options(), timeout=600, python=envs.python_of(env))
    assert result.verdict == "crash", result.violations
    assert result.tvm_ffi_version == "0.1.15.post2"
    detail = result.violations[-1].detail
    assert "SIGSEGV" in detail and "ToJSONGraph" in detail, detail


@pytest.mark.needs_env
@pytest.mark.nightly   # the same environment as above
def test_matrix_prints_one_row_per_case_and_a_column_per_version_set(tmp_path):
    from helpers import cli
    code, out, err = cli("matrix", SMALL_CASE, "--out", str(tmp_path), "--set",
                         "apache-tvm==0.27.0.post1,apache-tvm-ffi==0.1.15.post2")
    assert code == 0, err     # the crash is registered: known, not news
    header, _, row = out.strip().splitlines()
    assert "tvm-ffi==0.1.15.post2" in header
    assert row == f"| {SMALL_CASE} | crash (known) |"
    page = (tmp_path / "matrix.html").read_text()
    # a registered crash is drawn quietly, as every known issue: not news
    assert page.count('class="cell known quiet"') == 1
    assert "reproduce: python -m harness check" in page


def test_checks_in_one_process_share_one_warm_server(monkeypatch):
    """pytest changes PYTEST_CURRENT_TEST per item: that must not start a server (and import
    TVM) per item; measured, it made the catalog 3x slower."""
    from harness.process import warm
    if not warm.enabled():
        pytest.skip("HARNESS_WARM=0")
    alive = []
    for item in ("first", "second"):
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"tests/x.py::{item} (call)")
        assert run_isolated(SMALL_CASE, Options(), timeout=300).verdict == "pass"
        alive.append({server.proc.pid for server in warm._servers.values() if server.alive()})
    assert alive[0] == alive[1], alive     # the second check started no server


def test_warm_client_reads_answers_that_arrive_in_one_burst(tmp_path):
    """A child that dies at once makes the server write its pid and status lines together;
    the client must see both (a buffered readline once hid the second from select(), and
    the check hung until its timeout)."""
    from harness.process import warm
    fake = tmp_path / "fake-python"      # stands in for `python -m harness.process.warm`
    fake.write_text("#!/bin/sh\nprintf '{\"ready\": true}\\n{\"pid\": 7}\\n"
                    "{\"pid\": 7, \"status\": -6}\\n'\nsleep 30\n")
    fake.chmod(0o755)
    server = warm.Server(str(fake), dict(os.environ))
    try:
        assert server.ready
        answers = [server._read(timeout=5) for _ in range(2)]
    finally:
        server.proc.kill()
    assert answers == [{"pid": 7}, {"pid": 7, "status": -6}]


def test_a_kill_at_the_machines_memory_is_out_of_memory_not_a_crash(monkeypatch):
    """The kernel's out-of-memory killer SIGKILLs a check whose copies outgrow the machine
    (tv-regnet_y_128gf's 2.5 GB of weights, 23 of 24 GiB resident): that row read `new`,
    a crash blamed on TVM. A SIGKILL to a child that had reached most of the machine's
    memory is `unsupported`, out of memory; below that share it stays a crash. Seeded: a
    real child SIGKILLs itself, once on this machine, once on a machine made as small as
    its own peak."""
    from harness.process import death, isolate
    options = Options(inject_pass=seeded("killed"))
    crashed = run_isolated(SMALL_CASE, options, timeout=300)
    assert crashed.verdict == "crash" and crashed.violations[-1].signal == "SIGKILL"
    peaks = []
    interpret = isolate._interpret

    def recorded(*args):
        peaks.append(args[-1])
        return interpret(*args)
    monkeypatch.setattr(isolate, "_interpret", recorded)
    monkeypatch.setattr(death, "memory_kib", lambda: 2**20)   # a 1 GiB machine
    run_isolated(SMALL_CASE, Options(), timeout=300)
    assert peaks[-1] and 100 * 2**10 < peaks[-1] < 2**20, peaks   # TVM imported: >100 MiB
    monkeypatch.setattr(death, "memory_kib", lambda: int(peaks[-1] * 1.1))
    starved = run_isolated(SMALL_CASE, options, timeout=300)
    assert starved.verdict == "unsupported", starved.violations
    assert "out of memory in stage injected" in starved.violations[-1].detail


def test_a_time_cap_counts_the_time_a_child_had_not_a_pause_nor_a_loaded_machine(
        monkeypatch, tmp_path):
    """guard-suite's --file-timeout and the check's --timeout counted wall time: a paused
    parent (its next poll saw the whole pause) or a loaded machine killed healthy children.
    A pause counts one step; a loaded machine's second counts its share of a core; a hang
    still runs out."""
    import time

    from harness.process import clock
    from harness.process.isolate import run_command
    now = [100.0]
    monkeypatch.setattr(clock.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(clock.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    paused = clock.Clock(longest=1.0)
    now[0] += 600.0                          # the parent was stopped for ten minutes
    assert paused.tick() == 1.0
    monkeypatch.setattr(clock.os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    monkeypatch.setattr(clock.os, "cpu_count", lambda: 2)
    now[0] += 0.5
    assert paused.tick() == 1.0 + 0.5 * 0.25  # eight runnable on two cores: a quarter
    monkeypatch.undo()
    started = time.monotonic()
    code, timed_out = run_command(["sleep", "30"], str(tmp_path / "out.log"), 0.5)
    assert timed_out and code is None and time.monotonic() - started < 25

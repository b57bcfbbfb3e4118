"""Ctrl-C (and SIGTERM, as a cancelled CI job sends) keeps everything done and stops at
once; a rows journal is never replaced or mixed silently.

The interrupt tests start the CLI in its own process group and send SIGINT to the
group, as a terminal does. How long the stop takes is measured by the closing
figures, not asserted tightly here (machines are noisy); what is asserted is that it
does not wait for the queued work (hundreds of checks).
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT, cli_here

MARK = "HARNESS_INTERRUPT_TEST"


def _rows(folder) -> int:
    return sum(1 for path in glob.glob(os.path.join(folder, "*-rows.jsonl"))
               for line in open(path) if line.strip())


def _as_from_a_terminal() -> None:
    """The CLI as a terminal starts it: SIGINT at its default. A test run started in the
    background of a shell without job control (`.ci/run &`) ignores SIGINT, and an ignored
    SIGINT is inherited by every child: Ctrl-C could not be sent at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _leftovers(marker: str) -> list[str]:
    """Processes that still carry this run's marker in their environment."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.parametrize("args, twice, signal_number, code", [
    (["report", "node-*", "--all", "--jobs", "2"], False, signal.SIGINT, 130),
    # a CI job cancelled, `kill`: SIGTERM to the command alone, taken as Ctrl-C is
    pytest.param(["report", "node-*", "--all", "--jobs", "2"], False, signal.SIGTERM, 143,
                 marks=pytest.mark.nightly),
    pytest.param(["passes", "Conv2d", "Conv1d*", "--pass", "*", "--jobs", "2"], True,
                 signal.SIGINT, 130, marks=pytest.mark.nightly),
    pytest.param(["report", "node-*", "--all", "--jobs", "2"], True, signal.SIGINT, 130,
                 marks=pytest.mark.nightly),
    pytest.param(["passes", "Conv2d", "Conv1d*", "--pass", "*", "--jobs", "2"], False,
                 signal.SIGINT, 130, marks=pytest.mark.nightly),
])
def test_ctrl_c_stops_at_once_keeping_every_finished_row(tmp_path, args, twice,
                                                         signal_number, code):
    marker = f"{MARK}={os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ, PYTHONPATH=ROOT, **dict([marker.split("=", 1)]))
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args, "--out", str(tmp_path)],
                            cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=_as_from_a_terminal,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while _rows(tmp_path) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    started = time.monotonic()
    if signal_number == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)   # a terminal's Ctrl-C reaches the whole group
    else:
        os.kill(proc.pid, signal_number)
    if twice:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    took = time.monotonic() - started
    assert proc.returncode == code, err[-2000:]
    assert took < 15, f"the interrupt waited {took:.1f} s for queued work"
    kept = _rows(tmp_path)
    assert kept >= 2
    if not twice:   # the second Ctrl-C exits at once: nothing more is written then
        assert f"{kept} of" in err or f"after {kept} of" in err, err[-1000:]
    time.sleep(0.5)
    assert _leftovers(marker) == [], "a child or warm server outlived the interrupt"


def test_ctrl_c_before_the_first_row_names_no_file_it_did_not_write(tmp_path):
    """Once said "0 of 18 rows kept in OUT/report-rows.jsonl" of a journal never opened.
    Ctrl-C as soon as report has planned its rows (its first check is still starting):
    every file the last lines name exists."""
    marker = f"{MARK}={os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ, PYTHONPATH=ROOT, **dict([marker.split("=", 1)]))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "report", "node-*", "--all",
                             "--jobs", "2", "--out", str(out)],
                            cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=_as_from_a_terminal,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    planned = proc.stderr.readline()
    assert "rows to decide" in planned, planned + proc.communicate(timeout=60)[1]
    time.sleep(0.3)   # into the batch loop
    os.killpg(proc.pid, signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130, err[-2000:]
    last = [line for line in err.splitlines() if "interrupted" in line]
    assert last, err[-2000:]
    named = [word.rstrip(",;:") for line in last for word in line.split()
             if word.startswith(str(out))]
    assert all(os.path.exists(path) for path in named), (named, last)
    if not (out / "report-rows.jsonl").exists():
        assert "nothing written" in last[-1] or last[-1] == "harness: interrupted", last
    time.sleep(0.5)
    assert _leftovers(marker) == [], "a child or warm server outlived the interrupt"


@pytest.mark.nightly   # five commands interrupted (about a minute)
@pytest.mark.parametrize("delay", [0.05, 0.7, 2.0, 4.0, 9.0])
def test_an_interrupt_at_any_moment_exits_130_within_seconds(tmp_path, delay):
    """Ctrl-C while the command starts, plans, validates, runs its first checks or its
    later ones: exit 130 within seconds, no child left. Once in three, a Ctrl-C 30 s into
    `report --path compile` printed "harness: interrupted" and then waited 300 s on its
    pool's threads (the interpreter's shutdown joins them); it now leaves at once."""
    marker = f"{MARK}={os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ, PYTHONPATH=ROOT, **dict([marker.split("=", 1)]))
    proc = subprocess.Popen([sys.executable, "-m", "harness", "report", "node-*", "--all",
                             "--path", "compile", "--jobs", "2", "--out", str(tmp_path)],
                            cwd=ROOT, env=env, start_new_session=True,
                            preexec_fn=_as_from_a_terminal,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    started = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    err = proc.communicate(timeout=120)[1]
    took = time.monotonic() - started
    assert proc.returncode == 130, err[-2000:]
    assert took < 15, f"the interrupt at {delay} s took {took:.1f} s to end the command"
    time.sleep(0.5)
    assert _leftovers(marker) == [], "a child or warm server outlived the interrupt"


def _report(folder, *args):
    code, out, err = cli_here("report", *args, "--out", folder)
    rows = json.loads((folder / "report.json").read_text())["rows"] if code in (0, 1) else []
    return code, err, rows


def test_a_folder_with_rows_is_neither_replaced_nor_mixed(tmp_path):
    code, err, rows = _report(tmp_path, "Conv2d")
    assert code == 0 and [row["case"] for row in rows] == ["Conv2d"], err
    code, out, err = cli_here("report", "Conv2d_groups", "--out", tmp_path)
    assert code == 2 and "--resume continues it, --fresh replaces it" in err, err
    # --resume: only this selection is reported, counted right, the old rows kept on disk
    code, err, rows = _report(tmp_path, "Conv2d_groups", "Conv2d", "--resume")
    assert code == 0 and "2 rows to decide, 1 already done, 1 to run" in err, err
    code, err, rows = _report(tmp_path, "Conv2d_groups", "--resume")
    assert "1 rows to decide, 1 already done, 0 to run" in err, err
    assert [row["case"] for row in rows] == ["Conv2d_groups"]
    markdown = (tmp_path / "report.md").read_text()
    assert "| case | layout | path | target |" in markdown and "Conv2d |" not in markdown
    # --fresh starts over
    code, err, rows = _report(tmp_path, "Conv2d", "--fresh")
    assert code == 0 and "0 already done" in err and _rows(tmp_path) == 1

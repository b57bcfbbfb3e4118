"""The reducer keeps the failure's signature, survives crashes, resumes, and writes a
short standalone reproducer that exits 1 where the failure reproduces."""
import json
import os
import subprocess
import sys

from harness.reduce.signature import Signature, normalize
from harness.verdict import Result, Violation
from helpers import cli, seeded

TVMSCRIPT_LINE_GOAL = 40


def _tvmscript_lines(repro: str) -> int:
    text = open(repro).read()
    start = text.index("SCRIPT = ")
    end = text.index("def load", start)
    return len([line for line in text[start:end].splitlines()[1:-1] if line.strip()])


def _run(repro: str):
    proc = subprocess.run([sys.executable, repro], capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout


def test_signature_masks_names_and_numbers_but_not_the_bug():
    one = normalize("Check failed: (msgs[3].IsNested()) is false: lv12 at 0x7f00ab")
    two = normalize("Check failed: (msgs[0].IsNested()) is false: conv_7 at 0x5600ff")
    assert one == two
    assert normalize("Invalid SLayout: can't find S in source layoutABCDE") != one
    result = Result("x")
    result.add(Violation("error", "convert-layout", "(exception)", "Check failed: (msgs[1]...",
                         "ConvertLayout", 1))
    assert Signature("error", "convert-layout", "ConvertLayout",
                     normalize("Check failed: (msgs[9]...")).found_in(result)
    assert not Signature("error", "zero-pipeline", "ConvertLayout",
                         normalize("Check failed: (msgs[9]...")).found_in(result)


def test_reduce_a_catalog_finding_to_a_short_reproducer(tmp_path):
    code, out, err = cli("reduce", "conv-sum-nhwc", "--out", str(tmp_path), "--budget", "300")
    assert code == 1, out + err
    repro = tmp_path / "repro.py"
    assert _tvmscript_lines(str(repro)) <= TVMSCRIPT_LINE_GOAL
    assert _run(str(repro)) == (1, "reproduces: convert-layout raised InternalError: Check "
                                   "failed: (res != std::string::npos) is false: Invalid "
                                   "SLayout:can't find S in source layoutABCDE\n")
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert state["nodes"] < state["original_nodes"]
    assert state["signature"]["stage"] == "convert-layout"


def test_a_crash_while_reducing_is_a_data_point_and_the_crash_is_reduced(tmp_path):
    code, out, err = cli("reduce", "conv-reshape-concat", "--out", str(tmp_path), "--budget", "300")
    assert code == 0 and "nothing to reduce" in out   # a passing case is not reduced
    code, out, err = cli("check", "conv-reshape-concat", "--inject-pass", seeded("abort"),
                         "--reduce", "--out", str(tmp_path / "crash"), "--budget", "300")
    assert code == 1, out + err
    state = json.loads((tmp_path / "crash" / "reduce-state.json").read_text())
    assert state["signature"]["kind"] == "crash"
    assert state["nodes"] == 1, state


def test_an_interrupted_reduction_resumes_where_it_stopped(tmp_path):
    code, out, err = cli("reduce", "conv-dropout-nhwc", "--out", str(tmp_path),
                         "--budget", "0")
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert state["phases_done"] == [] and state["nodes"] == state["original_nodes"]
    assert "budget of 0 s spent" in err
    code, out, err = cli("reduce", "conv-dropout-nhwc", "--out", str(tmp_path),
                         "--budget", "600", "--resume")
    assert code == 1, out + err
    assert "resuming" in err
    state = json.loads((tmp_path / "reduce-state.json").read_text())
    assert state["nodes"] <= 2 and os.path.exists(tmp_path / "repro.py")

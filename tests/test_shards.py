"""Shards: the N parts of a selection are disjoint, make up the selection, are the same on
every runner, and are balanced by recorded durations; guard-suite and the pytest plugin take
them (report and passes share the same selection code)."""
import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT, cli_here

from harness import shards
from harness.verdict import BadInput

ITEMS = [f"case-{index:02d}" for index in range(23)]


@pytest.mark.parametrize("count", [1, 2, 3, 7, 30])
def test_the_shards_are_disjoint_and_make_up_the_selection(count):
    durations = {item: float(index % 5 + 1) for index, item in enumerate(ITEMS) if index % 3}
    parts = shards.split(ITEMS, str, count, durations)
    assert len(parts) == count
    together = [item for part in parts for item in part]
    assert sorted(together) == ITEMS and len(together) == len(set(together))
    assert all(part == sorted(part) for part in parts)   # each in the selection's order
    again = [shards.select(list(reversed(ITEMS)), str, shards.Shard(number, count), durations)
             for number in range(1, count + 1)]
    assert [sorted(part) for part in again] == [sorted(part) for part in parts]


def test_durations_balance_the_shards():
    durations = {"long": 10.0, "a": 4.0, "b": 3.0, "c": 3.0}
    parts = shards.split(["a", "b", "c", "long"], str, 2, durations)
    loads = [sum(durations[item] for item in part) for part in parts]
    assert sorted(loads) == [10.0, 10.0], parts


def _report_shards(path: str, count: int, durations: str | None = None) -> list[list]:
    import argparse

    from harness.cli import report
    shards_of_run = []
    for number in range(1, count + 1):
        args = argparse.Namespace(pattern=["tv-*", "yolov3-tiny*", "node-conv*"], all=True,
                                  layout=None, target="llvm", path=path, durations=durations,
                                  shard=f"{number}/{count}")
        shards_of_run.append([case for case, _ in report._this_shard(args, report.plan(args))])
    return shards_of_run


def test_report_keeps_a_models_rows_in_one_shard_on_both_paths(tmp_path):
    """A model's rows (its layouts, its ONNX twin) share one export and one imported module,
    whose copies are made once a build (roundtrip_memo): split row by row, the rows of
    tv-resnet18 went to four shards, each exporting and copying it again. The extract and
    compile runs of a night put a model in the same shard, recorded durations or not."""
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({   # one path measured, the other not: still one split
        "report:tv-resnet18:nchw:extract:llvm": 30.0, "report:tv-vit_b_16:nchw:extract:llvm": 90.0,
        "report:yolov3-tiny-nhwc:nhwc:extract:llvm": 20.0}))
    for recorded in (None, str(durations)):
        runs = {path: _report_shards(path, 5, recorded) for path in ("extract", "compile")}
        for path, parts in runs.items():
            together = [case.id for part in parts for case in part]
            assert len(together) == len(set(together)) and len(together) > 400, path
            shard_of = {}
            for number, part in enumerate(parts):
                for case in part:
                    assert shard_of.setdefault(case.model_group, number) == number, case.id
        groups = [{case.model_group for case in part} for part in runs["extract"]]
        assert groups == [{case.model_group for case in part} for part in runs["compile"]]
    resnet = {number for number, part in enumerate(runs["extract"]) for case in part
              if case.model_group == "torchvision:resnet18"}
    assert len(resnet) == 1 and sum(case.model_group == "torchvision:resnet18" for part in
                                    runs["extract"] for case in part) == 4   # and its twin


def test_the_shard_comes_from_the_option_or_tvms_environment():
    assert shards.chosen(None, {}) is None
    assert shards.chosen("2/4", {}) == shards.Shard(2, 4)
    assert shards.chosen(None, {"TVM_NUM_SHARDS": "4", "TVM_SHARD_INDEX": "0"}) == \
        shards.Shard(1, 4)
    for bad in ("0/4", "5/4", "x/4", "2"):
        with pytest.raises(BadInput):
            shards.parse(bad)
    with pytest.raises(BadInput):
        shards.chosen(None, {"TVM_NUM_SHARDS": "4", "TVM_SHARD_INDEX": "4"})


def _suite(folder):
    folder.mkdir()
    for index in range(5):
        (folder / f"test_{index}.py").write_text(f"def test_{index}():\n    pass\n")
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


@pytest.mark.nightly   # 4 s: a sharded guard-suite run; the shard arithmetic is tested above
def test_guard_suite_shards_by_file_and_records_durations(tmp_path):
    suite = _suite(tmp_path / "suite")
    durations = tmp_path / "durations.json"
    ran = []
    for number in (1, 2):
        out = tmp_path / f"out{number}"
        code, _, err = cli_here("guard-suite", str(suite), "--no-guard", "--out", str(out),
                                "--shard", f"{number}/2", "--durations", str(durations),
                                "--store-durations", str(tmp_path / f"stored{number}.json"))
        assert code == 0, err
        with open(out / "summary.json") as handle:
            ran += [os.path.basename(row["file"]) for row in json.load(handle)["files"]]
    assert sorted(ran) == [f"test_{index}.py" for index in range(5)]
    recorded = {**json.loads((tmp_path / "stored1.json").read_text()),
                **json.loads((tmp_path / "stored2.json").read_text())}
    assert len(recorded) == 5 and all(key.startswith("guard-suite:") for key in recorded)
    code, _, err = cli_here("guard-suite", str(suite), "--no-guard", "--out",
                            str(tmp_path / "bad"), "--shard", "3/2")
    assert code == 2 and "K must be between 1 and N" in err


def test_the_plugin_collects_one_shard_of_the_items(tmp_path):
    suite = _suite(tmp_path / "suite")
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"test_0.py::test_0": 5.0, "test_1.py::test_1": 1.0}))
    stored = tmp_path / "stored.json"
    passed = []
    for number in (1, 2, 3):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-v",
             "--harness-shard", f"{number}/3", "--harness-durations", str(durations),
             "--harness-store-durations", str(stored)], cwd=suite, capture_output=True, text=True,
            timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
        assert proc.returncode == 0, proc.stdout[-2000:]
        passed += [line.split("::")[1].split()[0] for line in proc.stdout.splitlines()
                   if " PASSED" in line]
    assert sorted(passed) == [f"test_{index}" for index in range(5)]
    assert len(json.loads(stored.read_text())) == 5


def test_a_case_group_stays_in_one_shard(tmp_path):
    """A case's items share an xdist group so that its child runs once: split over two
    shards, it would run in both."""
    suite = _suite(tmp_path / "suite")
    (suite / "test_grouped.py").write_text(
        "import pytest\n\n"
        + "".join(f"@pytest.mark.xdist_group('case')\ndef test_g{index}():\n    pass\n\n"
                  for index in range(3)))
    where = {}
    for number in (1, 2, 3):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-v",
             "-W", "ignore::pytest.PytestUnknownMarkWarning", "--harness-shard", f"{number}/3"],
            cwd=suite, capture_output=True, text=True, timeout=300,
            env=dict(os.environ, PYTHONPATH=ROOT))
        assert proc.returncode in (0, 5), proc.stdout[-2000:]
        for line in proc.stdout.splitlines():
            if " PASSED" in line:
                where[line.split("::")[1].split()[0]] = number
    assert len(where) == 8
    assert len({where[f"test_g{index}"] for index in range(3)}) == 1


def test_our_tests_set_up_no_fixture_per_module():
    """The root conftest runs our tests longest first, so one worker's modules interleave
    and a module-scoped fixture is set up again at every switch: the reproducers' fork
    parent (TVM imported once) was started about 30 times, 28 s of a 3-minute run. What
    is costly to set up is session-scoped."""
    import re
    tests = os.path.join(ROOT, "tests")
    offenders = [name for name in sorted(os.listdir(tests)) if name.endswith(".py")
                 and re.search(r"scope\s*=\s*[\"'](module|class|package)[\"']",
                               open(os.path.join(tests, name)).read())]
    assert not offenders, offenders


def test_the_nightly_shard_job_is_one_command_a_person_runs_here():
    """The workflow's shard steps call `nightly-shard` (its options parse as the CLI's), and
    what it runs is the shard's whole work: both report paths, the sweep, the fuzz, and the
    device-free targets on the first shard only."""
    import shlex

    import yaml

    from harness.cli.main import build_parser
    with open(os.path.join(ROOT, ".github", "workflows", "nightly.yml")) as handle:
        steps = yaml.safe_load(handle)["jobs"]["shard"]["steps"]
    runs = [step["run"] for step in steps if "nightly-shard" in step.get("run", "")]
    assert len(runs) == 2
    for run in runs:
        text = run.split("testenv.commands=")[-1].strip('"\n ')
        text = text[text.index("python -m harness"):].replace("\\\n", " ")
        argv = shlex.split(text.replace("${{ matrix.shard }}", "3").replace("$SHARD", "3/16")
                           .replace("$OUT", "out").rstrip('"'))
        args = build_parser().parse_args(argv[3:])
        assert args.command == "nightly-shard" and args.carry == "carry"

    def planned(shard):
        proc = subprocess.run([sys.executable, "-m", "harness", "nightly-shard", shard, "--out",
                               "o", "--dry-run"], capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        return [line.split(":")[0] for line in proc.stdout.splitlines()]
    assert planned("1/16") == ["report", "report-compile", "passes"] + ["targets"] * 5 + \
        ["fuzz", "fuzz"]
    assert planned("2/16") == ["report", "report-compile", "passes", "fuzz", "fuzz"]


@pytest.mark.nightly   # three pytest collections, each importing TVM: 15 s
def test_our_suite_runs_in_an_order_drawn_from_a_seed():
    """`pytest --random-order SEED`: a test that passes only after another shows when the
    order changes; the same seed gives the same order (every xdist worker draws it)."""
    def order(seed):
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
                               "--random-order", str(seed), "tests/test_watch.py",
                               "tests/test_shards.py"], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        return [line for line in proc.stdout.splitlines() if "::" in line]
    first = order(1)
    assert first and order(1) == first and order(2) != first and sorted(order(2)) == sorted(first)


def test_a_skip_no_missing_part_explains_is_refused_on_the_pinned_stack():
    """The skip budget: what a machine may lack is a skip; a catalog case that could not be
    tested on a TVM that imports (the jump from 1 to 83 skips) is not."""
    import skip_budget
    assert skip_budget.unexpected(["torch is not installed here: pip install -e '.[torch]'"]) == []
    # the tune extra is not the README's: a test that needs it is nightly, never a skip
    assert skip_budget.unexpected(["--path tune needs the tune extra"]) == [
        "--path tune needs the tune extra"]
    assert skip_budget.unexpected(["cannot test on this TVM: no converter for Foo"]) == [
        "cannot test on this TVM: no converter for Foo"]

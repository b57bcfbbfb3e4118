"""The pass sweep's memory: a pass is checked once per input, and what memory answers is
what the check gives (harness.cli.sweep_memo, harness.cli.sweep_schedule).

The schedule's rules on made-up checks (no TVM); then two real sweeps: one input swept
twice (a model's two layouts give one module at legalized) is remembered with the very
row the check gives, and two inputs that differ only in a span are both checked.
"""
import dataclasses
import json
import shutil

import pytest
from helpers import RELAX_MODULE_FILE, ROOT, cli

from harness.catalog.cases import Case
from harness.cli.sweep_memo import Memo, Seen, probe_of, seen_of, volatile_in_registry
from harness.cli.sweep_schedule import Schedule
from harness.process import batch
from harness.result import Result, StageRecord
from harness.verdict import Violation

SEEDED_SWEEP = f"{ROOT}/tests/seeded_sweep.py"


def _case(case_id: str, layout: str = "nchw", source: str = "builder:m") -> Case:
    return Case(case_id, source, layout=layout)


def _drive(schedule: Schedule, check, pick=lambda queue: 0, probe=None):
    """Run the schedule to the end, one job at a time: (final rows by key, checks run);
    `schedule.seen_answers` lists the items ever answered from memory.
    A probe sees what `probe` (default: `check`) sees, with no pass; `pick` chooses the
    job to finish next."""
    rows, ran, queue = {}, [], schedule.start()
    schedule.seen_answers = []
    while queue:
        job = queue.pop(pick(queue))
        swept, case, point = job.item
        if job.answer is not None:
            schedule.seen_answers.append(job.item)
        if job.probe:
            _, seen = (probe or check)(job.item)
            queue += schedule.probed(job, dataclasses.replace(seen, rememberable=False),
                                     "probe's result")
            continue
        if job.answer is not None:
            row, seen = job.answer, None
        else:
            ran.append(job.item)
            row, seen = check(job.item)
        rows[(swept, case.id, point)] = row
        queue += schedule.finished(job, row, seen)
    return rows, ran


def _checker(keys: dict, volatile=(), unreachable=(), moved=lambda item: False):
    """A check whose input key is keys[(case id, point)] ("moved" when `moved(item)`),
    verdict pass."""
    def check(item):
        swept, case, point = item
        key = "moved" if moved(item) else keys[(case.id, point)]
        row = {"pass": swept, "case": case.id, "point": point, "verdict": "pass",
               "failing": False, "exit": 0, "detail": f"{swept} on {key}", "seconds": 1.0}
        gone = (case.id, point) in unreachable
        return row, Seen(None if gone else key, "clean", not gone and (swept, case.id)
                         not in volatile, (swept, case.id) in volatile, gone)
    return check


def _schedule(passes, cases, points, memo=True):
    todo = [(swept, case, point) for swept in passes for case in cases for point in points]
    return Schedule(todo, Memo() if memo else None, lambda case, point: "scope",
                    lambda item, result: {"pass": item[0], "case": item[1].id,
                                          "point": item[2], "verdict": "skipped",
                                          "detail": f"from {result}"})


def test_an_input_met_again_in_another_layout_is_answered_from_the_first_check():
    model, twin = _case("m"), _case("m-nhwc", "nhwc")
    keys = {("m", "imported"): "A", ("m-nhwc", "imported"): "B",
            ("m", "legalized"): "C", ("m-nhwc", "legalized"): "C"}
    schedule = _schedule(["P1", "P2", "P3"], [model, twin], ["imported", "legalized"])
    rows, ran = _drive(schedule, _checker(keys))
    assert len(rows) == 12 and len(ran) == 9 and schedule.remembered == 3
    assert schedule.probes == 4
    checked = [(swept, keys[(case.id, point)]) for swept, case, point in ran]
    assert len(checked) == len(set(checked))   # no (pass, input) twice
    for swept in ("P1", "P2", "P3"):
        first, second = rows[(swept, "m", "legalized")], rows[(swept, "m-nhwc", "legalized")]
        remembered = first if "remembered" in first else second
        real = second if remembered is first else first
        assert remembered["remembered"] == {"case": real["case"], "point": "legalized",
                                            "layout": "nchw" if real is first else "nhwc"}
        assert {k: v for k, v in remembered.items() if k not in ("remembered", "case")} == \
            {k: v for k, v in real.items() if k not in ("seconds", "case")}


def test_without_the_memo_every_check_runs_and_nothing_is_probed():
    keys = {("m", "legalized"): "C", ("m-nhwc", "legalized"): "C"}
    schedule = _schedule(["P1", "P2"], [_case("m"), _case("m-nhwc", "nhwc")], ["legalized"],
                         memo=False)
    rows, ran = _drive(schedule, _checker(keys))
    assert len(ran) == 4 and not any("remembered" in row for row in rows.values())
    assert schedule.probes == 0


def test_a_pass_found_giving_two_outputs_is_checked_again_where_memory_answered():
    # V on m is remembered from m-nhwc, then V gives two outputs on another model's input:
    # what memory answered for V is checked for real, and nothing of V is answered again
    cases = [_case("m"), _case("m-nhwc", "nhwc"), _case("other", source="builder:o")]
    keys = {("m", "legalized"): "C", ("m-nhwc", "legalized"): "C",
            ("other", "legalized"): "D"}
    schedule = _schedule(["P", "V"], cases, ["legalized"])
    order = iter([0] * 3 + [1] * 2 + [0] * 50)   # m's V answered before other's V runs
    rows, ran = _drive(schedule, _checker(keys, volatile={("V", "other")}),
                       pick=lambda queue: min(next(order), len(queue) - 1))
    assert any(swept == "V" for swept, _, _ in schedule.seen_answers)   # then taken back
    names = [(swept, case.id) for swept, case, _ in ran]
    assert names.count(("V", "m")) + names.count(("V", "m-nhwc")) == 2, names
    assert not any("remembered" in row for key, row in rows.items() if key[0] == "V")
    assert schedule.memo.is_volatile("V")


def test_a_group_whose_input_moves_between_runs_is_checked_for_real():
    """m's checks see another input than its probe did (a prefix whose output moves): what
    memory answered there, from its twin, is checked again."""
    model, twin = _case("m"), _case("m-nhwc", "nhwc")
    todo = [(swept, twin, "legalized") for swept in ("P1", "P2", "P3")] + \
        [(swept, model, "legalized") for swept in ("P1", "P2", "P3", "P4")]
    schedule = Schedule(todo, Memo(), lambda case, point: "scope", None)
    keys = {("m", "legalized"): "C", ("m-nhwc", "legalized"): "C"}
    rows, ran = _drive(schedule, _checker(keys, moved=lambda item: item[1].id == "m"),
                       probe=_checker(keys))
    assert {swept for swept, case, _ in schedule.seen_answers} == {"P1", "P2", "P3"}
    assert not any("remembered" in row for key, row in rows.items() if key[1] == "m")
    assert len(ran) == 3 + 4


def test_an_unreachable_point_answers_every_pass_with_the_row_its_probe_says():
    keys = {("broken-nhwc", "fused"): None}
    schedule = _schedule(["P1", "P2", "P3"], [_case("broken-nhwc", "nhwc")], ["fused"])
    rows, ran = _drive(schedule, _checker(keys, unreachable={("broken-nhwc", "fused")}))
    assert ran == [] and schedule.probes == 1
    for swept in ("P1", "P2", "P3"):
        row = rows[(swept, "broken-nhwc", "fused")]
        assert row["pass"] == swept and row["detail"] == "from probe's result"
        assert row["remembered"] == {"case": "broken-nhwc", "layout": "nhwc", "point": "fused"}


def test_volatile_passes_named_by_the_registry_are_never_answered():
    """InstrumentProfileIntrinsics numbers its points from a process-wide counter: the
    registry says so (an entry on the run-twice check), so memory never answers it."""
    memo = Memo(volatile_in_registry({"tvm_version": "0.27.0.post1",
                                      "tvm_ffi_version": "0.1.14.post1"}))
    assert memo.is_volatile("s_tir.InstrumentProfileIntrinsics")
    assert not memo.is_volatile("Normalize")
    memo.store("s_tir.InstrumentProfileIntrinsics", ("K", "s", "p"), {}, None)
    assert memo.lookup("s_tir.InstrumentProfileIntrinsics", ("K", "s", "p")) is None


def _result(*violations, stages=("legalize-ops", "pass:P")):
    result = Result("m", options={"path": "pass"})
    result.stages = [StageRecord(name, 0.1) for name in stages]
    for violation in violations:
        result.add(violation)
    return result


def test_only_a_clean_pass_or_its_refusal_is_rememberable():
    refusal = Violation("error", "pass:P", "(exception)", "TVMError: no", "P", 1)
    mutation = Violation("mutated", "pass:P", "(pass input)", "changed", "P", 1)
    twice = Violation("error", "pass:P", "(outcome)", "two outputs", phase="determinism")
    prefix = Violation("mutated", "legalize-ops", "(pass input)", "changed", "Q", 3)
    assert seen_of("P", _result(), "K").rememberable
    assert seen_of("P", _result(refusal), "K").rememberable
    assert not seen_of("P", _result(mutation), "K").rememberable
    assert seen_of("P", _result(twice), "K").volatile
    # the prefix's own violation is part of the key, not a reason to forget
    with_prefix = seen_of("P", _result(prefix), "K")
    assert with_prefix.rememberable and with_prefix.prefix != seen_of("P", _result(), "K").prefix
    # a probe: the prefix failing as TVM decided makes the point unreachable, a crash not
    crash = Violation("crash", "legalize-ops", "(process)", "SIGSEGV")
    failed = Violation("error", "legalize-ops", "(exception)", "TVMError: no")
    assert probe_of(_result(failed, stages=("legalize-ops",)), None).unreachable
    assert not probe_of(_result(crash, stages=("legalize-ops",)), None).unreachable
    assert not probe_of(_result(stages=("legalize-ops",)), "K").unreachable


def test_the_batch_runs_what_a_finished_row_hands_back():
    handed = []

    def on_row(item, row):
        handed.append(row)
        return [item + 10] if item < 10 else None
    assert batch.run([1, 2], lambda item: item * 2, 2, on_row) is None
    assert sorted(handed) == [2, 4, 22, 24]


def _sweep(*args):
    code, out, err = cli("passes", *args, "--json")
    assert out.strip(), err
    return code, {(r["pass"], r["case"], r["point"]): r for r in json.loads(out)["rows"]}, err


def _as_checked(row: dict) -> dict:
    """The row's reading: not its time, where memory found it, or the result it keeps for a
    later night (`judged`, which a row answered from memory leaves out)."""
    return {key: value for key, value in row.items()
            if key not in ("seconds", "remembered", "judged")}


@pytest.mark.nightly   # 13 s, two sweeps; the default run's seeded memo fault is the span test
def test_an_input_swept_twice_is_remembered_with_the_row_its_check_gives():
    """node-concat's layouts give one module at legalized (ConvertLayout finds no conv): the
    second is answered from the first, byte for byte the row --no-memo computes; the
    seeded pass with hidden state is never answered from memory."""
    common = ("node-concat_2d_axis_1*", "--point", "legalized", "--register", SEEDED_SWEEP,
              "--pass", "Normalize", "--pass", "s_tir.CompactBufferAllocation",
              "--pass", "HarnessSeededHiddenState")
    code, remembered, err = _sweep(*common)
    assert code == 1 and "2 more answered from memory" in err, err
    code, checked, err = _sweep(*common, "--no-memo")
    assert code == 1 and "0 more answered from memory" in err, err
    assert {key: _as_checked(row) for key, row in remembered.items()} == {
        key: _as_checked(row) for key, row in checked.items()}
    by_memory = {key for key, row in remembered.items() if "remembered" in row}
    assert {key[0] for key in by_memory} == {"Normalize", "s_tir.CompactBufferAllocation"}
    assert {remembered[key]["verdict"] for key in by_memory} == {"pass", "rejected"}
    for swept, case, point in by_memory:
        origin = remembered[(swept, case, point)]["remembered"]
        assert origin["case"] != case and origin["point"] == point
        assert remembered[(swept, origin["case"], point)]["input"] == \
            remembered[(swept, case, point)]["input"]


def test_a_span_only_difference_between_two_inputs_is_not_merged(tmp_path):
    """Seeded: one module built in two files (identical: merged), and once more with the
    seeded span edit on main (tests/seeded.py). The structural hash cannot tell that one
    from the others; the memo must, or a fault the sweep would meet there is hidden."""
    (tmp_path / "plain.py").write_text(RELAX_MODULE_FILE)
    (tmp_path / "again.py").write_text(RELAX_MODULE_FILE)
    (tmp_path / "respanned.py").write_text(
        f"import sys\nsys.path.insert(0, {ROOT + '/tests'!r})\nfrom seeded import "
        f"respan_in_place\n\n{RELAX_MODULE_FILE}mod = respan_in_place(mod)\n")
    (tmp_path / "catalog.toml").write_text("".join(
        f'[[case]]\nid = "span-{name}"\nsource = "file:{name}.py"\n\n'
        for name in ("plain", "again", "respanned")))
    code, rows, err = _sweep("span-*", "--cases", str(tmp_path), "--pass", "Normalize",
                             "--point", "imported")
    assert code == 0, err
    plain, again, respanned = (rows[("Normalize", f"span-{name}", "imported")]
                               for name in ("plain", "again", "respanned"))
    assert "remembered" in plain or "remembered" in again, (plain, again)
    assert "remembered" not in respanned, respanned
    structural_hash, _, text_digest = respanned["input"].partition("-")
    assert plain["input"].partition("-")[0] == structural_hash
    assert plain["input"].partition("-")[2] != text_digest


@pytest.mark.parametrize("seed", [None, 7, 8])
def test_every_check_is_decided_whatever_order_they_finish_in(seed):
    import random
    cases = [_case(f"c{index}", source=f"builder:{index % 2}") for index in range(4)]
    keys = {(case.id, point): f"{int(case.id[1]) % 2}{point}" for case in cases
            for point in ("imported", "legalized")}
    schedule = _schedule([f"P{index}" for index in range(5)], cases, ["imported", "legalized"])
    rng = random.Random(seed)
    rows, ran = _drive(schedule, _checker(keys),
                       pick=(lambda queue: rng.randrange(len(queue))) if seed else
                       (lambda queue: 0))
    assert len(rows) == 5 * 4 * 2
    checked = [(swept, keys[(case.id, point)]) for swept, case, point in ran]
    assert len(checked) == len(set(checked)) == 5 * 4   # each (pass, input) once


@pytest.mark.nightly   # three real sweeps (10 s): the memo's own rules run by default above
def test_a_resumed_or_carried_sweep_answers_from_what_the_first_part_checked(tmp_path):
    """node-concat_2d_axis_1's layouts give one module at legalized; the nchw case alone is
    swept first, its rows journaled. Resumed (an interrupted run), the journal rebuilds the
    memo: the nhwc case is answered from the first part's check, with its row. Carried
    (`passes --carry DIR`, last night's rows of the same inputs; built-in cases, since a
    user's catalog is never carried): the row is taken, read against today's registry,
    and put back in the memo, so the nhwc case met only tonight is answered too."""
    common = ("--pass", "Normalize", "--point", "legalized")
    first_out = str(tmp_path / "first-part")
    code, rows, err = _sweep("node-concat_2d_axis_1", *common, "--out", first_out)
    assert code == 0 and "0 more answered from memory" in err, err
    first = rows[("Normalize", "node-concat_2d_axis_1", "legalized")]

    resumed = str(tmp_path / "resumed")
    shutil.copytree(first_out, resumed)
    code, rows, err = _sweep("node-concat_2d_axis_1*", *common, "--out", resumed, "--resume")
    assert code == 0 and "1 of them back in the memo" in err, err
    assert "0 checks in" in err and "1 more answered from memory" in err, err
    again = rows[("Normalize", "node-concat_2d_axis_1-nhwc", "legalized")]
    assert again["remembered"]["case"] == "node-concat_2d_axis_1", again
    assert _as_checked(again) == {**_as_checked(first), "case": "node-concat_2d_axis_1-nhwc"}

    code, rows, err = _sweep("node-concat_2d_axis_1*", *common, "--out",
                             str(tmp_path / "night2"), "--carry", first_out,
                             "--carry-refresh", "0")
    assert code == 0, err
    assert "1 carried from an earlier run with the same inputs (1 of them back in the memo)" \
        in err and "0 checks in" in err and "1 more answered from memory" in err, err
    nchw = rows[("Normalize", "node-concat_2d_axis_1", "legalized")]
    assert nchw["carried"] == first_out
    assert _as_checked(nchw) == {**_as_checked(first), "carried": first_out}
    nhwc = rows[("Normalize", "node-concat_2d_axis_1-nhwc", "legalized")]
    assert nhwc["remembered"]["case"] == "node-concat_2d_axis_1"

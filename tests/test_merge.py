"""`merge`: the --out folders of shards and release sets joined into one report and page,
the exit code on the merged rows, and what must not be joined refused (exit 2)."""
import json

from helpers import cli_here

import harness
from harness.cli.journal import Journal
from harness.cli.report import row_key

STACK_26 = {"tvm_version": "0.26.0", "tvm_ffi_version": "0.1.14.post1"}
STACK_27 = {"tvm_version": "0.27.0.post1", "tvm_ffi_version": "0.1.14.post1"}


def _row(case, status="pass", verdict="pass", exit_code=0):
    return {"case": case, "tags": [], "layout": "nchw", "path": "extract", "target": "llvm",
            "verdict": verdict, "status": status, "failing": status in ("new", "stale",
                                                                        "harness-error"),
            "exit": exit_code, "outcome_count": 3, "wall_seconds": 1.0, "stages": {},
            "violations": [] if verdict == "pass" else [f"{verdict} at stage x: (p): d"],
            "known": [], "tvm_version": None, "tvm_ffi_version": None}


def _folder(path, stack, rows):
    path.mkdir()
    with Journal(str(path), "report", resume=False, key=row_key, stack=stack) as journal:
        for row in rows:
            journal.append(row)
    return str(path)


def test_shards_and_release_sets_join_into_one_page(tmp_path):
    folders = [_folder(tmp_path / "a", STACK_27, [_row("conv-a"), _row("conv-b")]),
               _folder(tmp_path / "b", STACK_27, [_row("conv-c")]),
               _folder(tmp_path / "c", STACK_26, [_row("conv-a"), _row("conv-b"), _row("conv-c")])]
    out = tmp_path / "merged"
    code, _, err = cli_here("merge", *folders, "--out", str(out))
    assert code == 0, err
    merged = json.loads((out / "report.json").read_text())
    assert len(merged["rows"]) == 6 and len(merged["sets"]) == 2
    page = (out / "matrix.html").read_text()
    assert "tvm==0.26.0" in page and "tvm==0.27.0.post1" in page and "conv-c" in page
    assert (out / "report.md").read_text().count("# tvm==") == 2


def test_the_exit_code_is_the_merged_rows(tmp_path):
    new = _folder(tmp_path / "new", STACK_27, [_row("conv-a", "new", "mutated", 1)])
    fine = _folder(tmp_path / "fine", STACK_27, [_row("conv-b")])
    assert cli_here("merge", new, fine, "--out", str(tmp_path / "o1"))[0] == 1
    ours = _folder(tmp_path / "ours", STACK_26, [_row("conv-a", "harness-error",
                                                       "harness-error", 4)])
    assert cli_here("merge", new, ours, "--out", str(tmp_path / "o2"))[0] == 4


def test_what_must_not_be_joined_is_refused_before_anything_is_written(tmp_path):
    one = _folder(tmp_path / "one", STACK_27, [_row("conv-a")])
    out = tmp_path / "out"
    code, _, err = cli_here("merge", one, one, "--out", str(out))
    assert code == 2 and "overlapping shards" in err and not out.exists()
    other = _folder(tmp_path / "other", STACK_27, [_row("conv-b")])
    with open(f"{other}/report-rows.jsonl") as handle:
        line = json.loads(handle.readline())
    line["stack"]["harness"] = harness.__version__ + "-other"
    with open(f"{other}/report-rows.jsonl", "w") as handle:
        handle.write(json.dumps(line) + "\n")
    code, _, err = cli_here("merge", one, other, "--out", str(out))
    assert code == 2 and "two harness versions" in err
    code, _, err = cli_here("merge", str(tmp_path / "nosuch"), "--out", str(out))
    assert code == 2 and "not a folder" in err
    old_row = _row("conv-d")
    old_row["tasks"] = old_row.pop("outcome_count")   # as rows were before the rename
    older = _folder(tmp_path / "older", STACK_27, [old_row])
    code, _, err = cli_here("merge", one, older, "--out", str(out))
    assert code == 2 and "has no outcome_count" in err and not out.exists()


def test_guard_suite_records_of_several_runs_join_into_one_summary(tmp_path):
    from harness.verdict import Violation
    folders = []
    for shard, test in ((1, "t/test_a.py::test_one"), (2, "t/test_b.py::test_two")):
        records = tmp_path / f"gs{shard}" / "files" / "t"
        records.mkdir(parents=True)
        violation = Violation("mutated", "suite", "(its input)", "x", pass_name="P")
        (records / "records-main.jsonl").write_text(json.dumps(
            {"test": test, "outcome": "passed", "passes": 2, "pass_names": ["P"],
             "violations": [violation.to_json()], **STACK_27}) + "\n")
        folders.append(str(tmp_path / f"gs{shard}"))
    out = tmp_path / "merged"
    code, _, err = cli_here("merge", *folders, "--out", str(out))
    assert code == 1, err     # an unregistered mutation
    merged = json.loads((out / "guard-suite" / "summary.json").read_text())
    assert merged["tests"] == 2 and merged["findings"][0]["count"] == 2


def test_two_release_sets_that_resolved_one_stack_are_two_columns(tmp_path, monkeypatch):
    """`newest` resolves a pinned set's very stack between upstream releases: its rows are
    the same rows of the same stack, yet no overlapping shards; each set is its own column,
    named after it (the pinned set's door rows ran with torch, the newest's without)."""
    monkeypatch.setenv("HARNESS_RELEASE_SET", "tvm-0.27.0.post1")
    pinned = _folder(tmp_path / "pinned", STACK_27, [_row("conv-a"), _row("tv-a")])
    monkeypatch.setenv("HARNESS_RELEASE_SET", "newest")
    newest = _folder(tmp_path / "newest", STACK_27, [_row("conv-a"),
                                                     _row("tv-a", "unsupported", "unsupported")])
    code, _, err = cli_here("merge", pinned, newest, "--out", str(tmp_path / "out"))
    assert code == 0, err
    merged = json.loads((tmp_path / "out" / "report.json").read_text())
    assert merged["sets"] == ["tvm==0.27.0.post1 tvm-ffi==0.1.14.post1 (newest)",
                              "tvm==0.27.0.post1 tvm-ffi==0.1.14.post1 (tvm-0.27.0.post1)"]
    assert len(merged["rows"]) == 4
    # one set's shard given twice is still refused
    code, _, err = cli_here("merge", newest, newest, "--out", str(tmp_path / "again"))
    assert code == 2 and "overlapping shards" in err

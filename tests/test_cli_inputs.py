"""Bad input is exit 2 with one clear line on stderr, never a traceback."""
import json
import pytest

from helpers import cli


def _one_line_error(code, err):
    assert code == 2
    lines = [line for line in err.strip().splitlines() if line.startswith("harness: error:")]
    assert lines, err
    assert "Traceback" not in err
    return lines[0]


def test_garbage_bytes_as_onnx(tmp_path):
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\x00\xffnot a protobuf\x13\x37" * 20)
    code, _, err = cli("check", str(path))
    assert "not a" in _one_line_error(code, err)


def test_missing_path(tmp_path):
    code, _, err = cli("check", str(tmp_path / "missing.onnx"))
    assert "no such file" in _one_line_error(code, err)


def test_unknown_case_suggests_close_matches():
    code, _, err = cli("check", "yolov3-tiyn")
    line = _one_line_error(code, err)
    assert "unknown case" in line and "yolov3-tiny" in line


def test_bad_inject_spec():
    code, _, err = cli("check", "Conv2d", "--inject-pass", "no_such_module_xyz:f")
    assert "cannot import" in _one_line_error(code, err)


@pytest.mark.parametrize("args", [["check"], ["nonsense"], ["check", "Conv2d", "--layout", "abcd"]])
def test_usage_errors(args):
    _one_line_error(*cli(*args)[::2])


def test_list_prints_one_id_a_line():
    code, out, _ = cli("list")
    ids = out.split()
    assert code == 0 and "yolov3-tiny" in ids and "light_resnet50" in ids
    assert len(ids) == len(set(ids)) == len(out.strip().splitlines())


def test_user_onnx_file_is_checked(tmp_path):
    from harness.catalog import cases as catalog
    import onnx
    path = tmp_path / "mine.onnx"
    onnx.save(catalog.resolve("Conv2d").model(), str(path))
    code, out, err = cli("check", str(path), "--quiet", "--json")
    data = json.loads(out)
    assert code == 0 and data["case"] == str(path), out + err
    assert data["status"] in ("pass", "known"), data["violations"]
    if data["status"] == "known":   # registered issues exit 0; a bisect counts them
        code, out, err = cli("check", str(path), "--quiet", "--ignore-known")
        assert code == 1 and "known: mutated" in out, out + err


@pytest.mark.parametrize("args, says", [
    (["report", "conv-relu"], "no case matches 'conv-relu'; did you mean"),
    (["passes", "conv-relu", "--pass", "Normalize"], "no case matches 'conv-relu'"),
    (["passes", "--list", "--target", "nosuch"], "TVM cannot make this target"),
    (["passes", "conv-reshape-concat", "--pass", "tirx.ConvertSSA", "--point", "imported"],
     "no (pass, point) to run"),
])
def test_a_case_pattern_or_target_that_names_nothing(args, says):
    """Once an empty run that passed: a mistyped case glob ran zero checks, exit 0."""
    assert says in _one_line_error(*cli(*args)[::2])


@pytest.mark.parametrize("command, args", [
    ("report", ["conv-relu"]),
    ("passes", ["conv-reshape-concat", "--pass", "tirx.ConvertSSA", "--point", "imported"]),
])
def test_bad_input_leaves_an_earlier_runs_journal_alone(tmp_path, command, args):
    """Opening a fresh rows journal replaces the old one: bad input must stop first."""
    journal = tmp_path / f"{command}-rows.jsonl"
    journal.write_text('{"stack": {}, "row": {}}\n')
    _one_line_error(*cli(command, *args, "--out", str(tmp_path))[::2])
    assert journal.read_text() == '{"stack": {}, "row": {}}\n'

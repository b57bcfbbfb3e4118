"""Bad input is exit 2 with one clear line on stderr, never a traceback."""
import json

import pytest
from helpers import cli_here


def _one_line_error(code, err):
    assert code == 2
    lines = [line for line in err.strip().splitlines() if line.startswith("harness: error:")]
    assert lines, err
    assert "Traceback" not in err
    return lines[0]


def test_garbage_bytes_as_onnx(tmp_path):
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\x00\xffnot a protobuf\x13\x37" * 20)
    code, _, err = cli_here("check", str(path))
    assert "not a" in _one_line_error(code, err)


def test_missing_path(tmp_path):
    code, _, err = cli_here("check", str(tmp_path / "missing.onnx"))
    assert "no such file" in _one_line_error(code, err)


def test_an_unknown_door_prefix_is_named_not_read_as_a_missing_file(tmp_path):
    """`foo:model.onnx` where model.onnx exists: the door is what is wrong, said so."""
    model = tmp_path / "model.onnx"
    model.write_bytes(b"")
    code, _, err = cli_here("check", f"foo:{model}")
    line = _one_line_error(code, err)
    assert "unknown door 'foo'" in line and "torch-fx" in line and "no such file" not in line


def test_a_pytorch_file_missing_only_its_inputs_names_them(tmp_path):
    """A file with `model` but no `example_inputs` is no door's but the Relax one: it is
    refused naming what a PyTorch model file lacks, not "defines no IRModule"."""
    path = tmp_path / "net.py"
    path.write_text("import torch\nmodel = torch.nn.ReLU()\n")
    code, _, err = cli_here("check", str(path))
    line = _one_line_error(code, err)
    assert "does not define example_inputs" in line and "IRModule" not in line, line


def test_unknown_case_suggests_close_matches():
    code, _, err = cli_here("check", "yolov3-tiyn")
    line = _one_line_error(code, err)
    assert "unknown case" in line and "yolov3-tiny" in line


def test_bad_inject_spec():
    code, _, err = cli_here("check", "Conv2d", "--inject-pass", "no_such_module_xyz:f")
    assert "cannot import" in _one_line_error(code, err)


# ---- usage errors: exactly one line, naming the option and the command's --help --------

@pytest.mark.parametrize("args, says", [
    ([], "required: command; see python -m harness --help"),
    (["nonsense"], "invalid choice: 'nonsense'"),
    (["check"], "required: CASE_OR_FILE; see python -m harness check --help"),
    (["check", "Conv2d", "--layout", "abcd"], "argument --layout: invalid choice: 'abcd'"),
    (["check", "Conv2d", "--path", "x"], "argument --path: invalid choice: 'x'"),
    (["check", "Conv2d", "--bogus"], "unrecognized arguments: --bogus; see python -m "
                                     "harness check --help"),
    (["report", "--jobs", "0"], "argument --jobs: '0': must be 1 or more"),
    (["reduce", "Conv2d", "--resume", "--fresh"], "--fresh: not allowed with argument --resume"),
    (["passes", "--point", "nowhere"], "argument --point: invalid choice"),
    (["bisect", "Conv2d"], "required: --good, --bad; see python -m harness bisect --help"),
    (["bisect-step", "--source", "/tmp", "--untestable", "maybe"], "argument --untestable"),
    (["matrix"], "required: pattern"),
    (["envs", "clean"], "argument action: invalid choice: 'clean'"),
    (["fuzz", "--examples", "many"], "argument --examples: 'many' is not a number"),
    (["attrs", "--seed"], "argument --seed: expected one argument"),
    (["reproducers", "--bogus"], "unrecognized arguments: --bogus; see python -m harness "
                                 "reproducers --help"),
    (["reproducers", "extra"], "ENTRY_ID is for --run (running the reproducers)"),
    (["report", "Conv2d", "--", "-k", "x"], "only guard-suite passes arguments on"),
])
def test_a_usage_error_is_exactly_one_line(args, says):
    """The README promises one line on stderr naming the option and the fix: argparse's
    usage block (2-9 lines) is not printed, `--help` is named instead."""
    code, out, err = cli_here(*args)
    assert code == 2 and out == "", (code, out)
    assert len(err.splitlines()) == 1 and err.startswith("harness: error: "), err
    assert says in err, err


def test_every_command_gives_one_line_usage_errors():
    """Every subcommand's parser is the one-line kind (a new command added with another
    parser class would print argparse's usage block again)."""
    from harness.cli.main import _Parser, build_parser
    commands = build_parser().commands
    assert commands and all(isinstance(parser, _Parser) for parser in commands.values())
    for name in commands:
        code, _, err = cli_here(name, "--no-such-option")   # or a required one missing
        assert code == 2 and len(err.splitlines()) == 1, (name, err)
        assert err.rstrip().endswith(f"; see python -m harness {name} --help"), (name, err)


def test_a_usage_error_is_one_line_on_the_real_stderr():
    """The same through a real interpreter: nothing else (a warning, a usage block) is
    written to stderr around the line."""
    from helpers import cli
    code, out, err = cli("check", "Conv2d", "--path", "x", timeout=120)
    assert code == 2 and out == ""
    assert err.splitlines() == ["harness: error: argument --path: invalid choice: 'x' (choose "
                                "from 'extract', 'tune', 'compile'); see python -m harness "
                                "check --help"], err


def test_list_prints_one_id_a_line():
    code, out, _ = cli_here("list")
    ids = out.split()
    assert code == 0 and "yolov3-tiny" in ids and "light_resnet50" in ids
    assert len(ids) == len(set(ids)) == len(out.strip().splitlines())


def test_user_onnx_file_is_checked(tmp_path):
    import onnx

    from harness.catalog import cases as catalog
    path = tmp_path / "mine.onnx"
    onnx.save(catalog.resolve("Conv2d").model(), str(path))
    code, out, err = cli_here("check", str(path), "--quiet", "--json")
    data = json.loads(out)
    assert code == 0 and data["case"] == str(path), out + err
    assert data["status"] in ("pass", "known"), data["violations"]
    if data["status"] == "known":   # registered issues exit 0; a bisect counts them
        code, out, err = cli_here("check", str(path), "--quiet", "--ignore-known")
        assert code == 1 and "known: mutated" in out, out + err


@pytest.mark.in_process_tvm   # `passes` lists the registered passes in its own process
@pytest.mark.parametrize("args, says", [
    (["report", "conv-relu"], "no case matches 'conv-relu'; did you mean"),
    (["passes", "conv-relu", "--pass", "Normalize"], "no case matches 'conv-relu'"),
    (["passes", "--list", "--target", "nosuch"], "TVM refuses it"),
    (["passes", "conv-reshape-concat", "--pass", "tirx.ConvertSSA", "--point", "imported"],
     "no (pass, point) to run"),
])
def test_a_case_pattern_or_target_that_names_nothing(args, says):
    """Once an empty run that passed: a mistyped case glob ran zero checks, exit 0."""
    assert says in _one_line_error(*cli_here(*args)[::2])


@pytest.mark.in_process_tvm   # `passes` lists the registered passes in its own process
@pytest.mark.parametrize("command, args", [
    ("report", ["conv-relu"]),
    ("passes", ["conv-reshape-concat", "--pass", "tirx.ConvertSSA", "--point", "imported"]),
])
def test_bad_input_leaves_an_earlier_runs_journal_alone(tmp_path, command, args):
    """Opening a fresh rows journal replaces the old one: bad input must stop first."""
    journal = tmp_path / f"{command}-rows.jsonl"
    journal.write_text('{"stack": {}, "row": {}}\n')
    _one_line_error(*cli_here(command, *args, "--out", str(tmp_path))[::2])
    assert journal.read_text() == '{"stack": {}, "row": {}}\n'


# ---- every bad option value: exit 2, one line naming the option, before any work --------

@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return str(path)


UNWRITABLE = "/proc/harness-cannot-write-here"   # even root cannot create a folder in /proc


@pytest.mark.in_process_tvm   # `passes` lists the registered passes in its own process
@pytest.mark.parametrize("args, names", [
    (["report", "--jobs", "0"], "--jobs"),
    (["report", "--jobs", "-1"], "--jobs"),
    (["passes", "--jobs", "0"], "--jobs"),
    (["check", "Conv2d", "--timeout", "0"], "--timeout"),
    (["check", "Conv2d", "--timeout", "-5"], "--timeout"),
    (["check", "Conv2d", "--trials", "0"], "--trials"),
    (["fuzz", "--examples", "0"], "--examples"),
    (["attrs", "--examples", "0"], "--examples"),
    (["reduce", "Conv2d", "--budget", "0"], "--budget"),
    (["envs", "prune", "--keep", "-1"], "--keep"),
    (["report", "Conv2d", "--out", "{file}"], "--out"),
    (["report", "Conv2d", "--out", UNWRITABLE], "--out"),
    (["passes", "Conv2d", "--pass", "Normalize", "--out", "{file}"], "--out"),
    (["reduce", "Conv2d", "--out", "{file}"], "--out"),
    (["fuzz", "--examples", "1", "--out", "{file}"], "--out"),
    (["matrix", "Conv2d", "--set", "apache-tvm==0.27.0.post1", "--out", "{file}"], "--out"),
    (["check", "Conv2d", "--reduce", "--out", UNWRITABLE], "--out"),
    (["list", "nosuch*"], "no case matches"),
    (["check", "Conv2d", "--cases", "/no/such/folder"], "--cases"),
    (["bisect", "yolov3-tiyn", "--good", "0.26.0", "--bad", "0.27.0.post1"], "unknown case"),
    (["bisect", "Conv2d", "--good", "0.26.0", "--bad", "0.27.0.post1", "--match", "bogus"],
     "--match"),
    (["bisect-step", "--source", "/tmp", "--match", "oops:x"], "--match"),
])
def test_a_bad_option_value_is_exit_2_naming_it_before_any_work(a_file, args, names):
    from harness.versions import envs
    before = envs.list_envs()
    code, _, err = cli_here(*[arg.replace("{file}", a_file) for arg in args])
    assert code == 2, err
    lines = [line for line in err.strip().splitlines() if line.startswith("harness: error:")]
    assert len(lines) == 1 and names in lines[0], err
    assert "Traceback" not in err
    assert envs.list_envs() == before    # refused before building anything


@pytest.mark.parametrize("target, says", [
    ("foo", 'Target kind "foo" is not defined'),
    ("llvm -mcpu", None),                            # a flag: TVM says what mcpu wants
    ("{\"kind\": \"llvm\"", "not valid JSON"),
    ("llvm mcpu=skylake", "-KEY=VALUE"),
])
def test_a_target_tvm_refuses_is_exit_2_with_its_reason(target, says):
    code, _, err = cli_here("check", "conv-reshape-concat", "--quiet", "--target", target)
    assert code == 2, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("harness: error: --target") and "Traceback" not in err
    assert says is None or says in line, line


@pytest.mark.parametrize("target", ["cuda", "llvm -mcpu=skylake", '{"kind": "llvm"}'])
def test_targets_in_any_form_extract(target):
    """num-cores goes only where the kind takes it: a CUDA target extracts without a GPU."""
    code, out, err = cli_here("check", "conv-reshape-concat", "--quiet", "--target", target)
    assert code == 0, err + out


def test_attrs_type_glob_that_matches_nothing():
    code, _, err = cli_here("attrs", "--type", "NoSuch*", "--examples", "1")
    assert "--type" in _one_line_error(code, err)


# ---- reduce --out: a folder an earlier reduction used is refused, as report refuses rows ---

@pytest.fixture
def earlier_reduction(tmp_path):
    from harness.reduce.driver import STATE
    (tmp_path / STATE).write_text('{"case": "conv-dropout-nhwc"}')
    (tmp_path / "repro.py").write_text("# the earlier reduction's reproducer\n")
    return tmp_path


@pytest.mark.parametrize("command", [["reduce", "Conv2d"], ["check", "Conv2d", "--reduce"]])
def test_reduce_refuses_a_used_out_without_resume_or_fresh(earlier_reduction, command):
    """Once overwrote an earlier reduction's repro.py silently. Refused before any check
    (nothing on stdout: no check ran)."""
    code, out, err = cli_here(*command, "--out", earlier_reduction)
    assert code == 2 and out == "", out
    assert len(err.splitlines()) == 1, err
    assert f"--out {earlier_reduction} holds an earlier reduction" in err
    assert "--resume continues it, --fresh replaces it" in err
    assert (earlier_reduction / "repro.py").read_text() == "# the earlier reduction's reproducer\n"


def test_fresh_clears_only_the_reductions_own_files(earlier_reduction):
    from harness.cli import reduce
    (earlier_reduction / "notes.txt").write_text("mine")
    assert reduce.reduction_dir(str(earlier_reduction), resume=False, fresh=True)
    assert reduce.reduction_dir(str(earlier_reduction), resume=True, fresh=False)
    reduce.clear_earlier_reduction(str(earlier_reduction))
    assert sorted(path.name for path in earlier_reduction.iterdir()) == ["notes.txt"]


def test_an_onnx_opset_newer_than_any_onnx_release_is_refused(tmp_path):
    """It passed silently: no converter can know an opset that no ONNX release has."""
    import onnx
    from onnx import TensorProto, helper
    newest = onnx.defs.onnx_opset_version()
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", newest + 5)])
    path = tmp_path / "future.onnx"
    onnx.save(model, str(path))
    code, _, err = cli_here("check", str(path))
    line = _one_line_error(code, err)
    assert f"opset {newest + 5}" in line and f"newest {newest}" in line


def test_the_reproduce_line_names_a_layout_only_where_it_is_not_the_cases_own(tmp_path):
    """A PyTorch, JAX or TFLite file has no layout to name: `--layout nchw` there was
    noise a user copied; a case run in another layout than its own says it."""
    from harness.options import Options
    from harness.process.commands import reproduce_command
    path = tmp_path / "net.py"
    assert "--layout" not in reproduce_command(str(path), Options(layout="nchw"))
    assert "--layout" not in reproduce_command("yolov3-tiny-nhwc", Options(layout="nhwc"))
    assert "--layout nchw" in reproduce_command("yolov3-tiny-nhwc", Options(layout="nchw"))
    assert "--layout nhwc" in reproduce_command(str(path), Options(layout="nhwc"))

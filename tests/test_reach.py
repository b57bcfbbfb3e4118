"""The reach map (`python -m harness reach`): which converters of each TVM frontend the
catalog exercises, measured from what the frontend looked up, and why the others are not.

Real TVM, real ONNX models: the recording must note exactly the converters an import
runs, change nothing the import makes (a guard never changes what it guards), and put the
frontends back as they were; the map must say why a converter was not exercised.
"""
from __future__ import annotations

import json

import pytest
from helpers import cli_here
from onnx import TensorProto, helper

from harness.catalog import cases as catalog
from harness.catalog import onnx_node
from harness.reach import reach_map
from harness.tvmapi import calls, frontend_reach


def _relu_add():
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Add", ["y", "y"], ["z"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.in_process_tvm
def test_the_recording_notes_exactly_the_converters_run_and_changes_nothing_it_records():
    """yolov3-tiny's import, recorded and not: the same module (structure and JSON text);
    the frontend's map function is the same object afterwards."""
    import tvm
    import tvm_ffi
    from tvm.relax.frontend.onnx import onnx_frontend
    before = onnx_frontend._get_convert_map
    with frontend_reach.recording("onnx") as reached:
        recorded = calls.from_onnx(_relu_add())
    assert (reached.frontend, reached.used, reached.measurable) == ("onnx", ["Relu", "Add"],
                                                                   True)
    assert onnx_frontend._get_convert_map is before
    model = catalog.resolve("yolov3-tiny").model()
    with frontend_reach.recording("onnx") as reached:
        guarded = calls.from_onnx(model)
    plain = calls.from_onnx(model)
    assert tvm_ffi.structural_equal(guarded, plain)
    assert tvm.ir.save_json(guarded) == tvm.ir.save_json(plain)
    assert {"Conv", "BatchNormalization", "LeakyRelu", "MaxPool", "Concat",
            "Resize"} <= set(reached.used), reached.used
    assert tvm_ffi.structural_equal(recorded, calls.from_onnx(_relu_add()))


@pytest.mark.in_process_tvm
def test_a_refused_import_records_nothing_and_every_frontend_map_is_read():
    """ONNX refuses an operator it has no converter for before converting any: nothing is
    counted as exercised. Each frontend's converters are read on this TVM (the counts of
    0.27.0.post1; a release that renames a patch point reads 0, and this fails)."""
    model = _relu_add()
    model.graph.node[0].op_type = "NoSuchOperator"
    with frontend_reach.recording("onnx") as reached, \
            pytest.raises(Exception, match="NoSuchOperator"):
        calls.from_onnx(model)
    assert reached.used == []
    assert len(frontend_reach.converters("onnx")) >= 160
    assert len(frontend_reach.converters("stablehlo")) >= 20


def test_the_map_says_why_each_converter_was_not_exercised():
    """Built from rows as the command measures them: a used converter is exercised; one
    whose node tests failed to import says so with the failure; one whose tests were not
    measured says how to measure them; one no test uses says that."""
    totals = {"onnx": {"converters": ["Add", "Relu", "Slice", "Abs", "FastGelu"],
                       "notes": {}, "missing": ""}}
    rows = [{"case": "node-add", "frontend": "onnx", "used": ["Add"], "verdict": "pass",
             "detail": ""},
            {"case": "node-relu", "frontend": "onnx", "used": ["Relu"], "verdict": "pass",
             "detail": ""},
            {"case": "node-slice", "frontend": "onnx", "used": [], "verdict": "error",
             "detail": "ValueError: Node cannot handle ShapeExpr inputs."}]
    node_tests = {"node-add": ["Add"], "node-relu": ["Relu"], "node-slice": ["Slice"],
                  "node-abs": ["Abs"]}
    onnx = reach_map.build(rows, totals, node_tests)["onnx"].to_json()
    assert onnx["converters"] == 5 and onnx["exercised"] == ["Add", "Relu"]
    assert onnx["unexercised"]["Slice"].startswith(
        "its node tests fail to import before its converter runs: 1 of 1, e.g. node-slice: "
        "ValueError: Node cannot handle ShapeExpr")
    assert onnx["unexercised"]["Abs"].startswith("not in this selection")
    assert onnx["unexercised"]["FastGelu"] == "no ONNX node test uses it"
    assert onnx["failed"] == {"ValueError: Node cannot handle ShapeExpr inputs.": 1}


def test_reach_measures_cases_through_children_and_prints_the_promised_json():
    """Real children, real imports: the converters of the cases named, exercised; the
    other converters with reasons; a string-typed node test's import failure counted."""
    code, out, err = cli_here("reach", "node-add", "node-softmax_axis_1",
                              "node-string_concat_broadcasting", "--json", "--jobs", "1",
                              "--fresh")
    assert code == 0, err
    found = json.loads(out)["frontends"]
    assert set(found) == {"onnx", "torch", "torch-fx", "tflite", "stablehlo"}
    onnx = found["onnx"]
    assert onnx["exercised"] == ["Add", "Softmax"] and onnx["cases"] == 3
    assert onnx["converters"] == len(onnx["exercised"]) + len(onnx["unexercised"])
    assert onnx["unexercised"]["Relu"].startswith("not in this selection")
    assert sum(onnx["failed"].values()) == 1, onnx
    # the second run reads the cache of this stack: nothing measured again
    code, out, err = cli_here("reach", "node-add", "--jobs", "1")
    assert code == 0 and "measuring" not in err and "onnx: 1 of" in out, (out, err)


def test_reach_from_a_file_that_is_not_a_report_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text("{}")
    code, out, err = cli_here("reach", "node-add", "--from", str(bad))
    assert code == 2 and "not a report.json" in err and "Traceback" not in err, err


def test_the_onnx_node_rules_take_every_node_test_once():
    """The layout rule's operators, then `others = true`: every test of the onnx wheel is a
    case of exactly one rule (both layouts for the layout rule), `_expanded` included."""
    names = onnx_node.manifest()
    layout = [case for case in catalog.select(tags=["onnx-node"]) if case.layout == "nchw"]
    others = catalog.select(tags=["onnx-op"])
    sources = [case.source for case in layout + others]
    assert len(sources) == len(set(sources)) == len(names)
    assert sum("expanded" in case.tags for case in others) == sum("_expanded" in name
                                                                 for name in names)


def test_a_report_rows_import_is_read_apart_from_what_its_path_found_later():
    """`--from`: a row that imported and then met a compile mutation imported fine (its
    converters exercised, not a failed import); an import error is the import's."""
    from harness.cli import reach
    mutated = {"signatures": ["mutated:compile:tirx.AnnotateEntryFunc"],
               "violations": ["mutated at stage compile, pass tirx.AnnotateEntryFunc"]}
    failed = {"signatures": ["error:import:-:KeyError: '?'"],
              "violations": ["error at stage import: (frontend): KeyError: 'num_heads'"]}
    assert reach._import_of(mutated) == {"verdict": "pass", "detail": ""}
    assert reach._import_of(failed)["verdict"] == "error"

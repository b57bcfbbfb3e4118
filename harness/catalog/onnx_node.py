"""The ONNX project's single-operator models, as catalog cases tagged `onnx-node`.

Recent onnx wheels no longer ship `backend/test/data/node/`; they ship the
generators (`onnx.backend.test.case.node`), which build every node test model in
memory (about 12 s for all operators). The models are generated once per onnx
version into the harness cache, with a manifest of each model's operators, so
that listing the catalog reads one small JSON file and loads no model.

A node test feeds everything as graph inputs, shapes, pads, scales and weights
included; real models carry those as constants, and the frontend cannot convert
most ops with them as runtime values. So every input but the first is baked into
an initializer holding the test's own input data.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import warnings
from typing import TYPE_CHECKING

from harness import paths

if TYPE_CHECKING:
    import onnx

MANIFEST = "manifest.json"
FORMAT = 2   # bump when what is generated changes (2: inputs after the first baked)


def cache_folder() -> str:
    """Per onnx version, read from its metadata: listing the catalog never imports onnx."""
    version = importlib.metadata.version("onnx")
    return os.path.join(paths.cache_dir(), "onnx-node", f"{version}-v{FORMAT}")


def manifest() -> dict[str, list[str]]:
    """{model file name: its operators}, generating the models on first use."""
    folder = cache_folder()
    path = os.path.join(folder, MANIFEST)
    paths.made_once(folder, path, "generating the ONNX node test models (about 12 s)",
                    lambda: _generate(folder, path))
    with open(path) as handle:
        return json.load(handle)


def case_id(model_file: str) -> str:
    """The catalog id of a node test's model: test_resize_linear.onnx -> node-resize_linear."""
    return "node-" + model_file.removesuffix(".onnx").removeprefix("test_")


def operators_by_case() -> dict[str, list[str]]:
    """{catalog id: the operators its graph holds}, for every node test model."""
    return {case_id(name): operators for name, operators in manifest().items()}


def _generate(folder: str, path: str) -> None:
    import onnx
    from onnx.backend.test.case import node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the generators' numpy overflow warnings
        testcases = node.collect_testcases()
    ops = {}
    for testcase in testcases:
        if testcase.model is None:
            continue
        name = f"{testcase.name}.onnx"
        onnx.save(_bake_inputs(testcase), os.path.join(folder, name))
        ops[name] = sorted({n.op_type for n in testcase.model.graph.node})
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(ops, handle, indent=0, sort_keys=True)
    os.replace(tmp, path)                        # readers never see a half manifest


def model_path(name: str) -> str:
    return os.path.join(cache_folder(), name)


def _bake_inputs(testcase) -> onnx.ModelProto:
    """The test's model with inputs 2..n turned into initializers of the test's data."""
    import numpy
    import onnx
    from onnx import numpy_helper
    model = onnx.ModelProto()
    model.CopyFrom(testcase.model)
    if not testcase.data_sets or len(model.graph.input) < 2:
        return model
    values = testcase.data_sets[0][0]
    first, *others = model.graph.input
    kept = [first]
    for graph_input, value in zip(others, list(values)[1:], strict=False):
        # Tensors only: sequence and optional inputs stay inputs.
        if graph_input.name and isinstance(value, numpy.ndarray) and \
                graph_input.type.HasField("tensor_type"):
            model.graph.initializer.append(numpy_helper.from_array(value, graph_input.name))
        else:
            kept.append(graph_input)
    kept += others[len(values) - 1:]      # inputs the test gave no data for
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model

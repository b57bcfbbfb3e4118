"""The ONNX door: an .onnx file (or a catalog source that builds an ONNX graph) through
TVM's ONNX frontend (`relax.frontend.onnx.from_onnx`)."""
from __future__ import annotations

import os

from harness.doors.door import Cut, Door, ReferenceUnavailable
from harness.tvmapi import calls
from harness.verdict import BadInput


class OnnxDoor(Door):
    name = "onnx"
    frontend = "ONNX"
    suffixes = (".onnx",)
    onnx_graph = True
    reference = "onnxruntime"
    second_reference = "onnx.reference"
    reproducer = "onnx"
    converter_map = "onnx"

    def validate(self, path: str) -> None:
        load_file(path)

    def load(self, path: str):
        return load_file(path)

    def owns(self, model) -> bool:
        import onnx
        return isinstance(model, onnx.ModelProto)

    def to_relax(self, model):
        return calls.from_onnx(model)

    def answer(self, model, arrays: list) -> list:
        return onnxruntime_answer(model, arrays)

    def second_answer(self, model, arrays: list) -> list:
        return reference_answer(model, arrays)

    def inputs(self, path: str) -> dict:
        import onnx
        return graph_inputs(onnx.load(path, load_external_data=False))

    def cuts(self, model) -> list[Cut]:
        return cuts_of(model)


def cuts_of(model) -> list[Cut]:
    """The graph cut after each top-level node whose outputs ONNX's shape inference types:
    the same graph, those values its only outputs."""
    import onnx
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - onnx's own inference refusing: no cuts, said
        return []
    typed = {info.name: info for info in list(inferred.graph.value_info)
             + list(inferred.graph.output)}
    found = []
    for node in model.graph.node:
        outputs = [typed[name] for name in node.output if name in typed
                   and typed[name].type.HasField("tensor_type")]
        if not outputs:
            continue
        cut = onnx.ModelProto()
        cut.CopyFrom(model)
        del cut.graph.output[:]
        cut.graph.output.extend(outputs)   # every typed output: LayerNormalization's Mean too
        found.append(Cut(node.name, node.op_type, _attributes(node), cut))
    return found


def _attributes(node) -> str:
    """The attributes the node gives, `name=value`, values short (a tensor by its kind)."""
    from onnx import helper
    given = []
    for attribute in node.attribute:
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode(errors="replace")
        elif isinstance(value, (list, tuple)):
            value = list(value) if len(value) <= 4 else f"[{len(value)} values]"
        elif not isinstance(value, (int, float, str)):
            value = type(value).__name__
        given.append(f"{attribute.name}={value}")
    return ", ".join(sorted(given))


def _refuse_random(model) -> None:
    """A Dropout with a training_mode input may answer at random: no reference can be
    compared with it (each framework draws its own mask)."""
    if any(node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]
           for node in model.graph.node):
        raise ReferenceUnavailable("a Dropout with a training_mode input: its answer may be "
                                   "drawn at random (excluded by rule)")


def graph_inputs(model) -> dict:
    """{input name: shape (a symbolic dimension by its name)} of an ONNX graph."""
    initializers = {init.name for init in model.graph.initializer}
    return {value.name: [dim.dim_value or dim.dim_param
                         for dim in value.type.tensor_type.shape.dim]
            for value in model.graph.input if value.name not in initializers}


def onnxruntime_answer(model, arrays: list) -> list:
    """ONNX Runtime's answer (CPU) on the graph's inputs in order, all graph optimizations
    off: its own rewrites are not what is compared."""
    try:
        import onnxruntime
    except ImportError:
        raise ReferenceUnavailable("onnxruntime is not installed: pip install -e '.[test]'") \
            from None
    _refuse_random(model)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    names = list(graph_inputs(model))
    try:
        session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"])
        return session.run(None, dict(zip(names, arrays, strict=True)))
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime refusing the model is not TVM's
        raise ReferenceUnavailable(f"onnxruntime cannot run this model: "
                                   f"{type(exc).__name__}: {str(exc).strip()[:300]}") from None


# onnx.reference is plain numpy: a second opinion on small graphs only (a conv net's
# hundreds of nodes take minutes there)
REFERENCE_NODES = 64


def reference_answer(model, arrays: list) -> list:
    """The ONNX project's own reference implementation (`onnx.reference`), independent of
    ONNX Runtime's kernels."""
    if len(model.graph.node) > REFERENCE_NODES:
        raise ReferenceUnavailable(f"onnx.reference is asked about graphs of at most "
                                   f"{REFERENCE_NODES} nodes (this one has "
                                   f"{len(model.graph.node)})")
    _refuse_random(model)
    from onnx.reference import ReferenceEvaluator
    try:
        evaluator = ReferenceEvaluator(model)
        return [numpy_array(value) for value in evaluator.run(
            None, dict(zip(graph_inputs(model), arrays, strict=True)))]
    except Exception as exc:  # noqa: BLE001 - the reference refusing the model is not TVM's
        raise ReferenceUnavailable(f"onnx.reference cannot run this model: "
                                   f"{type(exc).__name__}: {str(exc).strip()[:300]}") from None


def numpy_array(value):
    """An output as numpy: a sequence output stays a list of arrays (ragged ones too)."""
    import numpy
    if isinstance(value, list):
        return [numpy.asarray(item) for item in value]
    return numpy.asarray(value)


def load_file(path: str):
    """A user's ONNX file, or a one-line reason why it cannot be one."""
    import onnx
    if not os.path.exists(path):
        raise BadInput(f"no such file: {path}")
    if os.path.isdir(path):
        raise BadInput(f"{path} is a directory; pass an .onnx file or a case id")
    try:
        model = onnx.load(path)
    except Exception as exc:  # noqa: BLE001 - only onnx reads the user's file here (protobuf
        # raises several types): no harness code runs in the try
        raise BadInput(f"{path} is not a readable ONNX model ({type(exc).__name__}: "
                       f"{str(exc).strip() or 'bad protobuf'}); re-export it from your "
                       "framework") from None
    if not model.graph.node:
        raise BadInput(f"{path} holds no ONNX graph (zero nodes); is it an ONNX model?")
    newest = onnx.defs.onnx_opset_version()
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx") and opset.version > newest:
            raise BadInput(f"{path} asks for ONNX opset {opset.version}, newer than any this "
                           f"onnx {onnx.__version__} knows (newest {newest}): no converter "
                           "can know its operators; export it with an opset <= "
                           f"{newest}")
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - only onnx's checker runs: the user's graph
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInput(f"{path} is not a valid ONNX model: {first}") from None
    return model


DOOR = OnnxDoor()

"""Reduction steps over an ONNX graph: each proposes smaller candidate models.

In the order they pay off on a real 50-layer model: cut the graph at an
intermediate tensor (the tail, then the head: a binary search over the
topological order, O(log n) checks), drop single nodes (rewiring a consumer to
an input of the same shape), turn initializers into graph inputs (the imported
module then has parameters, not constants, and prints as short TVMScript), and
drop what nothing uses. Candidates are valid by construction: every tensor's
shape comes from ONNX shape inference on the original. onnx is imported where a step
needs it, not by every CLI start (0.7 s): the models handed in are onnx's already.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnx


def value_infos(model: onnx.ModelProto) -> dict[str, onnx.ValueInfoProto]:
    """Every tensor's type (inputs, outputs, intermediates), from shape inference."""
    from onnx import helper, shape_inference
    inferred = shape_inference.infer_shapes(model, strict_mode=False)
    graph = inferred.graph
    infos = {vi.name: vi for vi in list(graph.value_info) + list(graph.input) + list(graph.output)}
    for init in graph.initializer:
        infos.setdefault(init.name, helper.make_tensor_value_info(
            init.name, init.data_type, list(init.dims)))
    return infos


def _known(info: onnx.ValueInfoProto | None) -> bool:
    if info is None or not info.type.tensor_type.HasField("shape"):
        return False
    return all(d.HasField("dim_value") for d in info.type.tensor_type.shape.dim)


def size(model: onnx.ModelProto) -> int:
    return len(model.graph.node)


def prune(model: onnx.ModelProto) -> onnx.ModelProto:
    """Drop nodes, initializers and inputs that no graph output depends on."""
    graph = model.graph
    needed = {out.name for out in graph.output}
    kept = []
    for node in reversed(graph.node):
        if any(name in needed for name in node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    kept.reverse()
    out = copy.deepcopy(model)
    del out.graph.node[:]
    out.graph.node.extend(kept)
    inits = [i for i in out.graph.initializer if i.name in needed]
    del out.graph.initializer[:]
    out.graph.initializer.extend(inits)
    inputs = [i for i in out.graph.input if i.name in needed]
    del out.graph.input[:]
    out.graph.input.extend(inputs)
    return out


def with_outputs(model, names, infos) -> onnx.ModelProto | None:
    """The graph truncated to end at tensors `names`."""
    if not all(_known(infos.get(n)) for n in names):
        return None
    out = copy.deepcopy(model)
    del out.graph.output[:]
    out.graph.output.extend(copy.deepcopy(infos[n]) for n in names)
    return prune(out)


def with_input_at(model, name, infos) -> onnx.ModelProto | None:
    """The graph cut at tensor `name`: it becomes a graph input, its producers go."""
    info = infos.get(name)
    if not _known(info) or name in {i.name for i in model.graph.input}:
        return None
    out = copy.deepcopy(model)
    nodes = [n for n in out.graph.node if name not in n.output]
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.graph.input.append(copy.deepcopy(info))
    return prune(out)


def without_node(model, index, infos) -> onnx.ModelProto | None:
    """Node `index` removed; its (first) output is fed by an input of the same type."""
    node = model.graph.node[index]
    if len(node.output) != 1:
        return None
    target = infos.get(node.output[0])
    same = [name for name in node.input if name and infos.get(name) is not None
            and infos[name].type == target.type] if target is not None else []
    if not same:
        return None
    out = copy.deepcopy(model)
    del out.graph.node[index]
    for other in list(out.graph.node):
        for position, name in enumerate(other.input):
            if name == node.output[0]:
                other.input[position] = same[0]
    for output in out.graph.output:
        if output.name == node.output[0]:
            return None   # the graph output itself: truncation handles it
    return prune(out)


CONSTANT_OPS = ("Constant", "ConstantOfShape")


def weights_as_inputs(model) -> onnx.ModelProto | None:
    """Weights become graph inputs (initializers, and Constant / ConstantOfShape nodes of
    a known shape): the imported module has parameters, not constants, and prints as
    short TVMScript with no metadata blob."""
    from onnx import helper
    graph = model.graph
    infos = value_infos(model)
    constants = [node for node in graph.node if node.op_type in CONSTANT_OPS
                 and len(node.output) == 1 and _known(infos.get(node.output[0]))]
    if not graph.initializer and not constants:
        return None
    out = copy.deepcopy(model)
    for init in graph.initializer:
        out.graph.input.append(helper.make_tensor_value_info(init.name, init.data_type,
                                                             list(init.dims)))
    del out.graph.initializer[:]
    produced = {node.output[0] for node in constants}
    kept = [node for node in out.graph.node if not (node.output and node.output[0] in produced)]
    del out.graph.node[:]
    out.graph.node.extend(kept)
    out.graph.input.extend(copy.deepcopy(infos[name]) for name in sorted(produced))
    return prune(out)


def topological_outputs(model) -> list[str]:
    """Each node's first output, in graph order (the cut points)."""
    return [node.output[0] for node in model.graph.node if node.output]

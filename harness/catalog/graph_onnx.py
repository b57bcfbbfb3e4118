"""An ONNX graph built node by node: what catalog.graphs' op table writes its ops with.

Names are numbered in the order tensors are made (c1, conv2, ...), so the same spec
always gives the same bytes.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class OnnxGraph:
    def __init__(self, shape: tuple[int, int, int], layout: str):
        self.shape, self.layout = shape, layout      # C, H, W of the batch-1 input; NCHW/NHWC
        self.nodes, self.initializers, self.count = [], [], 0

    def _name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, array) -> str:
        name = self._name("c")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], outputs: int = 1, **attrs):
        """A node of `op`; its output's name (a list of them when it has several)."""
        names = [self._name(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=names[0], **attrs))
        return names if outputs > 1 else names[0]

    def input(self) -> str:
        """The input, NCHW inside the graph (an NHWC input is transposed first)."""
        if self.layout == "NHWC":
            return self.node("Transpose", ["x"], perm=[0, 3, 1, 2])
        return "x"

    def finish(self, outputs: list[str]) -> onnx.ModelProto:
        c, h, w = self.shape
        shape = [1, h, w, c] if self.layout == "NHWC" else [1, c, h, w]
        graph = helper.make_graph(
            self.nodes, "hypothesis",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)

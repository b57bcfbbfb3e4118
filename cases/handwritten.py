"""Hand-written ONNX graphs for the layout-sensitive corners.

Each builder returns a checked ONNX model; the manifest in catalog.toml names it.
Weights come from a fixed seed so a case is the same bytes on every run.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class _G:
    def __init__(self, seed=0):
        self.rng, self.nodes, self.inits, self.n = np.random.RandomState(seed), [], [], 0

    def const(self, array, dtype=np.float32):
        self.n += 1
        name = f"c{self.n}"
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype=dtype), name))
        return name

    def weight(self, *shape, dtype=np.float32):
        return self.const(self.rng.standard_normal(shape) * 0.1, dtype)

    def op(self, op_type, inputs, **attrs):
        self.n += 1
        out = f"{op_type.lower()}{self.n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def model(self, inputs, outputs, elem=TensorProto.FLOAT):
        graph = helper.make_graph(
            self.nodes, "handwritten",
            [helper.make_tensor_value_info(n, elem, s) for n, s in inputs],
            [helper.make_tensor_value_info(o, elem, None) for o in outputs],
            initializer=self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        onnx.checker.check_model(model, full_check=True)
        return model


def nhwc_input():
    """An NHWC graph input transposed into a conv, and the result back to NHWC."""
    g = _G()
    x = g.op("Transpose", ["x"], perm=[0, 3, 1, 2])
    y = g.op("Conv", [x, g.weight(8, 3, 3, 3), g.weight(8)], pads=[1, 1, 1, 1])
    y = g.op("Relu", [y])
    y = g.op("Transpose", [y], perm=[0, 2, 3, 1])
    return g.model([("x", [1, 32, 32, 3])], [y])


def grouped_depthwise():
    """Grouped then depthwise (groups == channels, multiplier 2) convolutions."""
    g = _G()
    y = g.op("Conv", ["x", g.weight(16, 4, 3, 3)], group=4, pads=[1, 1, 1, 1])
    y = g.op("Conv", [y, g.weight(32, 1, 3, 3), g.weight(32)], group=16, pads=[1, 1, 1, 1],
             strides=[2, 2])
    y = g.op("Conv", [y, g.weight(32, 1, 3, 3)], group=32, pads=[2, 2, 2, 2], dilations=[2, 2])
    return g.model([("x", [1, 16, 28, 28])], [y])


def conv_transpose():
    """conv2d_transpose with stride 2 and output padding, after a strided conv."""
    g = _G()
    y = g.op("Conv", ["x", g.weight(8, 4, 3, 3)], strides=[2, 2], pads=[1, 1, 1, 1])
    y = g.op("ConvTranspose", [y, g.weight(8, 4, 3, 3), g.weight(4)], strides=[2, 2],
             pads=[1, 1, 1, 1], output_padding=[1, 1])
    return g.model([("x", [1, 4, 32, 32])], [y])


def conv_reshape_concat():
    """The seed bug's shape: conv, reshape across the channel axis, concat on channels."""
    g = _G()
    a = g.op("Conv", ["x", g.weight(12, 6, 1, 1)])
    b = g.op("Conv", ["x", g.weight(6, 6, 3, 3)], pads=[1, 1, 1, 1])
    cat = g.op("Concat", [a, b], axis=1)
    r = g.op("Reshape", [cat, g.const([1, 3, 6, 16, 16], np.int64)])
    t = g.op("Transpose", [r], perm=[0, 1, 3, 4, 2])
    flat = g.op("Reshape", [t, g.const([1, -1, 6], np.int64)])
    return g.model([("x", [1, 6, 16, 16])], [flat])


def split_add_pool():
    """Split on channels, broadcasting add, avg and max pools with asymmetric padding."""
    g = _G()
    y = g.op("Conv", ["x", g.weight(16, 8, 3, 3)], pads=[0, 1, 2, 1])
    a, b = "split_a", "split_b"
    g.nodes.append(helper.make_node("Split", [y], [a, b], axis=1, name="split"))
    s = g.op("Add", [a, g.weight(8, 1, 1)])
    p = g.op("MaxPool", [s], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    q = g.op("AveragePool", [b], kernel_shape=[2, 2], strides=[2, 2])
    q = g.op("Resize", [q, "", g.const([1, 1, 1, 1])], mode="nearest")
    out = g.op("Concat", [p, q], axis=1)
    return g.model([("x", [1, 8, 16, 16])], [out])


def conv_float16():
    """A float16 conv + batchnorm + relu block."""
    g = _G()
    f16 = np.float16
    y = g.op("Conv", ["x", g.weight(8, 4, 3, 3, dtype=f16)], pads=[1, 1, 1, 1])
    y = g.op("BatchNormalization", [y, g.const(np.ones(8), f16), g.const(np.zeros(8), f16),
                                    g.const(np.zeros(8), f16), g.const(np.ones(8), f16)])
    y = g.op("Relu", [y])
    return g.model([("x", [1, 4, 16, 16])], [y], elem=TensorProto.FLOAT16)


def conv_int8_qdq():
    """A quantize / dequantize-wrapped conv, as ONNX QDQ exporters write it."""
    g = _G()
    scale, zero = g.const(0.05), g.const(0, np.int8)
    q = g.op("QuantizeLinear", ["x", scale, zero])
    dq = g.op("DequantizeLinear", [q, scale, zero])
    w = g.const(np.random.RandomState(1).randint(-8, 8, size=(8, 4, 3, 3)), np.int8)
    wdq = g.op("DequantizeLinear", [w, g.const(0.02), g.const(0, np.int8)])
    y = g.op("Conv", [dq, wdq], pads=[1, 1, 1, 1])
    return g.model([("x", [1, 4, 16, 16])], [y])


def _conv_block(g):
    return g.op("Conv", ["x", g.weight(8, 4, 3, 3)], pads=[1, 1, 1, 1])


def conv_dropout():
    """conv then Dropout: relax.nn.dropout returns a tuple (found failing ConvertLayout)."""
    g = _G()
    y = g.op("Dropout", [_conv_block(g)])
    return g.model([("x", [1, 4, 16, 16])], [y])


def conv_sum():
    """Two convs joined by ONNX Sum, as resnet50 and shufflenet do (found failing ConvertLayout)."""
    g = _G()
    y = g.op("Sum", [_conv_block(g), _conv_block(g)])
    return g.model([("x", [1, 4, 16, 16])], [y])

"""A generated graph built directly as Relax (BlockBuilder): the TVM side of the ops of
harness.catalog.graphs, keyed by the same names, so the ONNX frontend is not the only
door into the path. `RelaxGraph` is the graph `graphs.emit` builds on; `BUILDERS` has
one builder per op: (graph, inputs, weights, params, input shape) -> binding(s).
"""
from __future__ import annotations

import numpy as np

from harness.tvmapi import ir
from harness.tvmapi.loading import tvm


class RelaxGraph:
    """main(x) in one dataflow block, its bindings emitted as the spec is walked."""

    def __init__(self, shape: tuple[int, int, int], layout: str):
        self.layout = layout
        self.relax, self.op = tvm().relax, ir.relax_op()
        self.builder = ir.block_builder()
        c, h, w = shape
        full = (1, h, w, c) if layout == "NHWC" else (1, c, h, w)
        self.x = self.relax.Var("x", ir.tensor_annotation(full, "float32"))
        self.main = ir.DataflowMain(self.builder, [self.x])

    def emit(self, expr):
        return self.builder.emit(expr)

    def const(self, array):
        return self.relax.const(np.asarray(array))

    def input(self):
        if self.layout == "NHWC":
            return self.emit(self.op.permute_dims(self.x, [0, 3, 1, 2]))
        return self.x

    def with_bias(self, y, bias):
        if bias is None:
            return y
        return self.emit(self.op.add(y, self.const(bias.reshape(1, -1, 1, 1))))

    def item(self, expr, index: int):
        return self.emit(self.relax.TupleGetItem(expr, index))

    def finish(self, outputs: list):
        return self.main.finish(outputs)


def _conv(g: RelaxGraph, xs, ws, p, shape):
    w, bias = ws
    y = g.emit(g.op.nn.conv2d(xs[0], g.const(w), strides=p["stride"], dilation=p["dilation"],
                              padding=tuple(p["pads"]), groups=p["groups"]))
    return g.with_bias(y, bias)


def _conv_transpose(g: RelaxGraph, xs, ws, p, shape):
    w, bias = ws
    return g.with_bias(g.emit(g.op.nn.conv2d_transpose(
        xs[0], g.const(w), strides=p["stride"], padding=p["pad"])), bias)


def _pool(name: str):
    def build(g: RelaxGraph, xs, ws, p, shape):
        pool = getattr(g.op.nn, name)
        return g.emit(pool(xs[0], pool_size=p["k"], strides=p["stride"], padding=p["pad"]))
    return build


def _batch_norm(g: RelaxGraph, xs, ws, p, shape):
    out = g.emit(g.op.nn.batch_norm(xs[0], *(g.const(a) for a in ws), axis=1, training=False))
    return g.item(out, 0)


def _split(g: RelaxGraph, xs, ws, p, shape):
    parts = g.emit(g.op.split(xs[0], 2, axis=1))
    return [g.item(parts, index) for index in range(2)]


def _reshape_transpose(g: RelaxGraph, xs, ws, p, shape):
    c, h, w = shape
    y = g.emit(g.op.reshape(xs[0], (1, c, h * w)))
    y = g.emit(g.op.permute_dims(y, [0, 2, 1]))
    y = g.emit(g.op.permute_dims(y, [0, 2, 1]))
    return g.emit(g.op.reshape(y, (1, c, h, w)))


def _resize(g: RelaxGraph, xs, ws, p, shape):
    _, h, w = shape
    return g.emit(g.op.image.resize2d(xs[0], (2 * h, 2 * w), method="nearest_neighbor",
                                      coordinate_transformation_mode="asymmetric"))


BUILDERS = {
    "conv": _conv,
    "conv_transpose": _conv_transpose,
    "max_pool": _pool("max_pool2d"),
    "avg_pool": _pool("avg_pool2d"),
    "batch_norm": _batch_norm,
    "relu": lambda g, xs, ws, p, shape: g.emit(g.op.nn.relu(xs[0])),
    "leaky_relu": lambda g, xs, ws, p, shape: g.emit(g.op.nn.leakyrelu(xs[0], p["alpha"])),
    "add_bias": lambda g, xs, ws, p, shape: g.emit(g.op.add(xs[0], g.const(ws[0]))),
    "reshape_transpose": _reshape_transpose,
    "add": lambda g, xs, ws, p, shape: g.emit(g.op.add(*xs)),
    "concat": lambda g, xs, ws, p, shape: g.emit(g.op.concat(xs, axis=1)),
    "split": _split,
    "resize": _resize,
}

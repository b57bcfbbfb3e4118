"""Random conv/layout graphs for hypothesis, valid by construction.

A `GraphSpec` is plain data (so hypothesis can shrink it and a reproducer can
print it): an input shape and layout, a list of layers each reading earlier
tensors, and the ConvertLayout desired layouts. Every layer's parameters are
drawn from what the shapes at that point allow, so no example is wasted on an
invalid graph. The same spec is emitted two ways, as ONNX (through the
frontend) and directly as Relax (BlockBuilder), so the frontend is not the only
door into the path.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

from harness.tvmapi import ir, loading

CONV_LAYOUTS = [["NCHW", "OIHW"], ["NHWC", "OHWI"], ["NHWC", "HWIO"]]
# Pools take no desired layout in ConvertLayout (0.27 refuses one: NoDesiredLayout);
# they follow their producer, which is what the conv entries exercise.


@dataclasses.dataclass(frozen=True)
class Layer:
    op: str            # conv, conv_transpose, max_pool, avg_pool, batch_norm, relu,
                       # leaky_relu, add, add_bias, concat, split, reshape_transpose, resize
    inputs: tuple[int, ...]
    params: tuple[tuple[str, object], ...] = ()

    def p(self, name, default=None):
        return dict(self.params).get(name, default)


@dataclasses.dataclass(frozen=True)
class GraphSpec:
    shape: tuple[int, int, int]          # C, H, W of the (batch 1) input
    input_layout: str                    # NCHW or NHWC
    layers: tuple[Layer, ...]
    desired: tuple[tuple[str, tuple[str, ...]], ...] = ()   # ConvertLayout, () = none
    seed: int = 0

    def desired_layouts(self) -> dict | None:
        return {op: list(layouts) for op, layouts in self.desired} or None


def _out(size, k, s, d, pad_a, pad_b):
    return (size + pad_a + pad_b - ((k - 1) * d + 1)) // s + 1


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def graph_specs(draw, max_layers: int = 6) -> GraphSpec:
    c, h, w = draw(st.integers(1, 8)), draw(st.integers(4, 12)), draw(st.integers(4, 12))
    shapes = [(c, h, w)]          # shape (C, H, W) of every tensor, NCHW
    layers = []
    for _ in range(draw(st.integers(1, max_layers))):
        src = draw(st.integers(0, len(shapes) - 1))
        c, h, w = shapes[src]
        same_hw = [i for i, s in enumerate(shapes) if s[1:] == (h, w) and i != src]
        same = [i for i in same_hw if shapes[i][0] == c]
        choices = ["conv", "conv", "conv_transpose", "max_pool", "avg_pool", "batch_norm",
                   "relu", "leaky_relu", "add_bias", "reshape_transpose"]
        choices += ["add"] * bool(same) + ["concat"] * bool(same_hw) + ["split"] * (c % 2 == 0)
        choices += ["resize"] * (h <= 8 and w <= 8)
        op = draw(st.sampled_from(choices))
        params: dict = {}
        inputs = (src,)
        if op == "conv":
            groups = draw(st.sampled_from(_divisors(c)))
            out_c = groups * draw(st.integers(1, max(1, 8 // groups)))
            k = draw(st.sampled_from([1, 3]))
            s, d = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
            pads = tuple(draw(st.integers(0, 2)) for _ in range(4))   # top, left, bottom, right
            oh, ow = _out(h, k, s, d, pads[0], pads[2]), _out(w, k, s, d, pads[1], pads[3])
            if oh < 1 or ow < 1:
                k, d = 1, 1
                oh, ow = _out(h, 1, s, 1, pads[0], pads[2]), _out(w, 1, s, 1, pads[1], pads[3])
            params = dict(out_c=out_c, k=k, stride=s, dilation=d, pads=pads, groups=groups,
                          bias=draw(st.booleans()))
            shape = (out_c, oh, ow)
        elif op == "conv_transpose":
            out_c = draw(st.integers(1, 8))
            k, s = draw(st.sampled_from([2, 3])), draw(st.sampled_from([1, 2]))
            # Output (in - 1) * s - 2 * pad + k must stay >= 1 (pad k-1 on a 2-pixel input
            # after a stride-2 conv gave a zero-size tensor that does not import).
            pad = draw(st.integers(0, min(k - 1, ((min(h, w) - 1) * s + k - 1) // 2)))
            params = dict(out_c=out_c, k=k, stride=s, pad=pad, bias=draw(st.booleans()))
            shape = (out_c, (h - 1) * s - 2 * pad + k, (w - 1) * s - 2 * pad + k)
        elif op in ("max_pool", "avg_pool"):
            k = draw(st.sampled_from([k for k in (2, 3) if k <= min(h, w)] or [1]))
            s, pad = draw(st.sampled_from([1, 2])), draw(st.integers(0, k // 2))
            params = dict(k=k, stride=s, pad=pad)
            shape = (c, _out(h, k, s, 1, pad, pad), _out(w, k, s, 1, pad, pad))
        elif op == "add":
            inputs, shape = (src, draw(st.sampled_from(same))), (c, h, w)
        elif op == "concat":
            other = draw(st.sampled_from(same_hw))
            inputs, shape = (src, other), (c + shapes[other][0], h, w)
        elif op == "split":
            shape = (c // 2, h, w)   # the first half; the second half becomes its own tensor
        elif op == "resize":
            shape = (c, 2 * h, 2 * w)
        elif op == "leaky_relu":
            params, shape = dict(alpha=draw(st.sampled_from([0.1, 0.2]))), (c, h, w)
        else:   # batch_norm, relu, add_bias, reshape_transpose keep the shape
            shape = (c, h, w)
        layers.append(Layer(op, inputs, tuple(sorted(params.items()))))
        shapes.append(shape)
        if op == "split":
            shapes.append(shape)
    desired = ()
    if draw(st.booleans()):
        desired = (("relax.nn.conv2d", tuple(draw(st.sampled_from(CONV_LAYOUTS)))),)
    return GraphSpec(shapes[0], draw(st.sampled_from(["NCHW", "NHWC"])), tuple(layers),
                     desired, draw(st.integers(0, 2 ** 16)))


def shapes_of(spec: GraphSpec) -> list[tuple[int, int, int]]:
    """Shapes of every tensor the spec produces, in order (input first)."""
    shapes = [spec.shape]
    for layer in spec.layers:
        c, h, w = shapes[layer.inputs[0]]
        p = layer.p
        if layer.op == "conv":
            pads = p("pads")
            shapes.append((p("out_c"),
                           _out(h, p("k"), p("stride"), p("dilation"), pads[0], pads[2]),
                           _out(w, p("k"), p("stride"), p("dilation"), pads[1], pads[3])))
        elif layer.op == "conv_transpose":
            k, s, pad = p("k"), p("stride"), p("pad")
            shapes.append((p("out_c"), (h - 1) * s - 2 * pad + k, (w - 1) * s - 2 * pad + k))
        elif layer.op in ("max_pool", "avg_pool"):
            k, s, pad = p("k"), p("stride"), p("pad")
            shapes.append((c, _out(h, k, s, 1, pad, pad), _out(w, k, s, 1, pad, pad)))
        elif layer.op == "concat":
            shapes.append((c + shapes[layer.inputs[1]][0], h, w))
        elif layer.op == "split":
            shapes += [(c // 2, h, w)] * 2
        elif layer.op == "resize":
            shapes.append((c, 2 * h, 2 * w))
        else:
            shapes.append((c, h, w))
    return shapes


def _weights(spec: GraphSpec):
    rng = np.random.RandomState(spec.seed)
    return lambda *shape: (rng.standard_normal(shape) * 0.1).astype(np.float32)


def _outputs(spec: GraphSpec) -> list[int]:
    """Tensors no layer reads: the graph's outputs (so nothing is dead code)."""
    count = len(shapes_of(spec))
    read = {i for layer in spec.layers for i in layer.inputs}
    return [i for i in range(1, count) if i not in read] or [count - 1]


class _Emitter:
    """Walks a spec once, asking a backend to emit each layer; shared by both doors."""

    def __init__(self, spec: GraphSpec, backend):
        self.spec, self.b, self.weight = spec, backend, _weights(spec)

    def run(self):
        spec, b = self.spec, self.b
        shapes = shapes_of(spec)
        tensors = [b.input()]
        for layer in spec.layers:
            x = tensors[layer.inputs[0]]
            c = shapes[layer.inputs[0]][0]
            p = layer.p
            if layer.op == "conv":
                w = self.weight(p("out_c"), c // p("groups"), p("k"), p("k"))
                bias = self.weight(p("out_c")) if p("bias") else None
                tensors.append(b.conv(x, w, bias, p("stride"), p("dilation"), p("pads"),
                                      p("groups")))
            elif layer.op == "conv_transpose":
                w = self.weight(c, p("out_c"), p("k"), p("k"))
                bias = self.weight(p("out_c")) if p("bias") else None
                tensors.append(b.conv_transpose(x, w, bias, p("stride"), p("pad")))
            elif layer.op in ("max_pool", "avg_pool"):
                tensors.append(b.pool(layer.op, x, p("k"), p("stride"), p("pad")))
            elif layer.op == "batch_norm":
                tensors.append(b.batch_norm(x, self.weight(c) + 1, self.weight(c), self.weight(c),
                                            np.abs(self.weight(c)) + 1))
            elif layer.op == "add_bias":
                tensors.append(b.add(x, b.const(self.weight(c, 1, 1))))
            elif layer.op == "add":
                tensors.append(b.add(x, tensors[layer.inputs[1]]))
            elif layer.op == "concat":
                tensors.append(b.concat([x, tensors[layer.inputs[1]]]))
            elif layer.op == "split":
                tensors += b.split(x)
            elif layer.op == "reshape_transpose":
                _, h, w = shapes[layer.inputs[0]]
                tensors.append(b.reshape_transpose(x, (c, h, w)))
            elif layer.op == "resize":
                tensors.append(b.resize(x, shapes[layer.inputs[0]]))
            else:
                tensors.append(getattr(b, layer.op)(x, **dict(layer.params)))
        return b.finish([tensors[i] for i in _outputs(spec)])


class _OnnxBackend:
    def __init__(self, spec):
        from onnx import TensorProto, helper, numpy_helper
        self.h, self.np_h, self.TP = helper, numpy_helper, TensorProto
        self.spec, self.nodes, self.inits, self.n = spec, [], [], 0

    def _name(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def const(self, array):
        name = self._name("c")
        self.inits.append(self.np_h.from_array(np.asarray(array), name))
        return name

    def _op(self, op, inputs, outputs=1, **attrs):
        outs = [self._name(op.lower()) for _ in range(outputs)]
        self.nodes.append(self.h.make_node(op, inputs, outs, name=outs[0], **attrs))
        return outs if outputs > 1 else outs[0]

    def input(self):
        if self.spec.input_layout == "NHWC":
            return self._op("Transpose", ["x"], perm=[0, 3, 1, 2])
        return "x"

    def conv(self, x, w, bias, stride, dilation, pads, groups):
        inputs = [x, self.const(w)] + ([self.const(bias)] if bias is not None else [])
        return self._op("Conv", inputs, strides=[stride] * 2, dilations=[dilation] * 2,
                        pads=list(pads), group=groups, kernel_shape=list(w.shape[2:]))

    def conv_transpose(self, x, w, bias, stride, pad):
        inputs = [x, self.const(w)] + ([self.const(bias)] if bias is not None else [])
        return self._op("ConvTranspose", inputs, strides=[stride] * 2, pads=[pad] * 4)

    def pool(self, kind, x, k, stride, pad):
        op = "MaxPool" if kind == "max_pool" else "AveragePool"
        return self._op(op, [x], kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4)

    def batch_norm(self, x, scale, bias, mean, var):
        return self._op("BatchNormalization",
                        [x] + [self.const(a) for a in (scale, bias, mean, var)])

    def relu(self, x):
        return self._op("Relu", [x])

    def leaky_relu(self, x, alpha):
        return self._op("LeakyRelu", [x], alpha=alpha)

    def add(self, x, y):
        return self._op("Add", [x, y])

    def concat(self, xs):
        return self._op("Concat", xs, axis=1)

    def split(self, x):
        return self._op("Split", [x], outputs=2, axis=1)

    def reshape_transpose(self, x, chw):
        c, h, w = chw
        y = self._op("Reshape", [x, self.const(np.array([1, c, h * w], np.int64))])
        y = self._op("Transpose", [y], perm=[0, 2, 1])
        y = self._op("Transpose", [y], perm=[0, 2, 1])
        return self._op("Reshape", [y, self.const(np.array([1, c, h, w], np.int64))])

    def resize(self, x, chw):
        return self._op("Resize", [x, "", self.const(np.array([1, 1, 2, 2], np.float32))],
                        mode="nearest")

    def finish(self, outputs):
        import onnx
        c, h, w = self.spec.shape
        shape = [1, h, w, c] if self.spec.input_layout == "NHWC" else [1, c, h, w]
        graph = self.h.make_graph(
            self.nodes, "hypothesis", [self.h.make_tensor_value_info("x", self.TP.FLOAT, shape)],
            [self.h.make_tensor_value_info(o, self.TP.FLOAT, None) for o in outputs],
            initializer=self.inits)
        model = self.h.make_model(graph, opset_imports=[self.h.make_opsetid("", 13)])
        model.ir_version = 8
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)


class _RelaxBackend:
    def __init__(self, spec):
        self.spec = spec
        self.relax, self.op = loading.tvm().relax, ir.relax_op()
        self.bb = ir.block_builder()
        c, h, w = spec.shape
        shape = (1, h, w, c) if spec.input_layout == "NHWC" else (1, c, h, w)
        self.x = self.relax.Var("x", ir.tensor_annotation(shape, "float32"))
        self._fn = self.bb.function("main", [self.x])
        self._fn.__enter__()
        self._df = self.bb.dataflow()
        self._df.__enter__()

    def emit(self, expr):
        return self.bb.emit(expr)

    def const(self, array):
        return self.relax.const(np.asarray(array))

    def input(self):
        if self.spec.input_layout == "NHWC":
            return self.emit(self.op.permute_dims(self.x, [0, 3, 1, 2]))
        return self.x

    def _bias(self, y, bias):
        if bias is None:
            return y
        return self.emit(self.op.add(y, self.const(bias.reshape(1, -1, 1, 1))))

    def conv(self, x, w, bias, stride, dilation, pads, groups):
        y = self.emit(self.op.nn.conv2d(x, self.const(w), strides=stride, dilation=dilation,
                                        padding=tuple(pads), groups=groups))
        return self._bias(y, bias)

    def conv_transpose(self, x, w, bias, stride, pad):
        return self._bias(self.emit(self.op.nn.conv2d_transpose(
            x, self.const(w), strides=stride, padding=pad)), bias)

    def pool(self, kind, x, k, stride, pad):
        fn = self.op.nn.max_pool2d if kind == "max_pool" else self.op.nn.avg_pool2d
        return self.emit(fn(x, pool_size=k, strides=stride, padding=pad))

    def batch_norm(self, x, scale, bias, mean, var):
        out = self.emit(self.op.nn.batch_norm(x, *(self.const(a) for a in (scale, bias, mean, var)),
                                              axis=1, training=False))
        return self.emit(self.relax.TupleGetItem(out, 0))

    def relu(self, x):
        return self.emit(self.op.nn.relu(x))

    def leaky_relu(self, x, alpha):
        return self.emit(self.op.nn.leakyrelu(x, alpha))

    def add(self, x, y):
        return self.emit(self.op.add(x, y))

    def concat(self, xs):
        return self.emit(self.op.concat(xs, axis=1))

    def split(self, x):
        parts = self.emit(self.op.split(x, 2, axis=1))
        return [self.emit(self.relax.TupleGetItem(parts, i)) for i in range(2)]

    def reshape_transpose(self, x, chw):
        c, h, w = chw
        y = self.emit(self.op.reshape(x, (1, c, h * w)))
        y = self.emit(self.op.permute_dims(y, [0, 2, 1]))
        y = self.emit(self.op.permute_dims(y, [0, 2, 1]))
        return self.emit(self.op.reshape(y, (1, c, h, w)))

    def resize(self, x, chw):
        _, h, w = chw
        return self.emit(self.op.image.resize2d(x, (2 * h, 2 * w), method="nearest_neighbor",
                                                coordinate_transformation_mode="asymmetric"))

    def finish(self, outputs):
        out = outputs[0] if len(outputs) == 1 else self.emit(self.relax.Tuple(outputs))
        gv = self.bb.emit_output(out)
        self._df.__exit__(None, None, None)
        self.bb.emit_func_output(gv)
        self._fn.__exit__(None, None, None)
        return self.bb.get()


def to_onnx(spec: GraphSpec):
    return _Emitter(spec, _OnnxBackend(spec)).run()


def to_relax(spec: GraphSpec):
    return _Emitter(spec, _RelaxBackend(spec)).run()

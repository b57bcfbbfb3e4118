"""Random conv/layout graphs, valid by construction: the spec and the op table (data).

A `GraphSpec` is plain data (so hypothesis can shrink it and a reproducer can print it):
an input shape and layout, a list of layers each reading earlier tensors, and the
ConvertLayout desired layouts. Every layer's parameters are drawn from what the shapes
at that point allow, so no example is wasted on an invalid graph.

`OPS` has one entry per op, all the generator and the ONNX builder need of it: when it
can follow a tensor (`fits`), how its parameters are drawn (`draw`, through a Chooser:
hypothesis's draws in harness.fuzz.fuzz_graphs), its output shapes, its weights and its
ONNX nodes. The same spec is built as Relax directly (harness.tvmapi.graph_relax, keyed
by the same names: the catalog calls no TVM), so the frontend is not the only door into
the path; `emit` walks a spec once for either builder.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Protocol, Sequence

import numpy as np

from harness.catalog.graph_onnx import OnnxGraph

CONV_LAYOUTS = [["NCHW", "OIHW"], ["NHWC", "OHWI"], ["NHWC", "HWIO"]]
# Pools take no desired layout in ConvertLayout (0.27 refuses one: NoDesiredLayout);
# they follow their producer, which is what the conv entries exercise.


@dataclasses.dataclass(frozen=True)
class Layer:
    op: str            # a name of OPS
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


class Chooser(Protocol):
    """Where a spec's choices come from (hypothesis's draws, so it can shrink them)."""

    def integer(self, low: int, high: int) -> int: ...
    def choice(self, options: Sequence): ...
    def boolean(self) -> bool: ...


@dataclasses.dataclass(frozen=True)
class Site:
    """Where a new layer reads: tensor `src` of shape (C, H, W), and the other tensors of
    the same shape (`same`) or the same height and width (`same_hw`)."""
    src: int
    shape: tuple[int, int, int]
    same: list[int]
    same_hw: list[int]

    @classmethod
    def at(cls, shapes: list, src: int) -> "Site":
        c, h, w = shapes[src]
        same_hw = [i for i, s in enumerate(shapes) if s[1:] == (h, w) and i != src]
        return cls(src, (c, h, w), [i for i in same_hw if shapes[i][0] == c], same_hw)


def _out(size, k, s, d, pad_a, pad_b):
    return (size + pad_a + pad_b - ((k - 1) * d + 1)) // s + 1


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


# ---- each op's rules: draw (choose, site) -> (inputs, params); shape (input shapes,
# params) -> output shapes; weights (weight, input shape, params) -> arrays, drawn in
# order; onnx (graph, inputs, weights, params, input shape) -> tensor(s) --------------

def _draw_conv(choose: Chooser, site: Site):
    c, h, w = site.shape
    groups = choose.choice(_divisors(c))
    out_c = groups * choose.integer(1, max(1, 8 // groups))
    k = choose.choice([1, 3])
    s, d = choose.choice([1, 2]), choose.choice([1, 2])
    pads = tuple(choose.integer(0, 2) for _ in range(4))   # top, left, bottom, right
    if _out(h, k, s, d, pads[0], pads[2]) < 1 or _out(w, k, s, d, pads[1], pads[3]) < 1:
        k, d = 1, 1
    return (site.src,), dict(out_c=out_c, k=k, stride=s, dilation=d, pads=pads,
                             groups=groups, bias=choose.boolean())


def _shape_conv(ins, p):
    (_, h, w), k, s, d, pads = ins[0], p["k"], p["stride"], p["dilation"], p["pads"]
    return [(p["out_c"], _out(h, k, s, d, pads[0], pads[2]), _out(w, k, s, d, pads[1], pads[3]))]


def _onnx_conv(g, xs, ws, p, shape):
    w, bias = ws
    inputs = [xs[0], g.const(w)] + ([g.const(bias)] if bias is not None else [])
    return g.node("Conv", inputs, strides=[p["stride"]] * 2, dilations=[p["dilation"]] * 2,
                  pads=list(p["pads"]), group=p["groups"], kernel_shape=list(w.shape[2:]))


def _draw_conv_transpose(choose: Chooser, site: Site):
    _, h, w = site.shape
    out_c = choose.integer(1, 8)
    k, s = choose.choice([2, 3]), choose.choice([1, 2])
    # Output (in - 1) * s - 2 * pad + k must stay >= 1 (pad k-1 on a 2-pixel input after
    # a stride-2 conv gave a zero-size tensor that does not import).
    pad = choose.integer(0, min(k - 1, ((min(h, w) - 1) * s + k - 1) // 2))
    return (site.src,), dict(out_c=out_c, k=k, stride=s, pad=pad, bias=choose.boolean())


def _shape_conv_transpose(ins, p):
    (_, h, w), k, s, pad = ins[0], p["k"], p["stride"], p["pad"]
    return [(p["out_c"], (h - 1) * s - 2 * pad + k, (w - 1) * s - 2 * pad + k)]


def _onnx_conv_transpose(g, xs, ws, p, shape):
    w, bias = ws
    inputs = [xs[0], g.const(w)] + ([g.const(bias)] if bias is not None else [])
    return g.node("ConvTranspose", inputs, strides=[p["stride"]] * 2, pads=[p["pad"]] * 4)


def _draw_pool(choose: Chooser, site: Site):
    k = choose.choice([k for k in (2, 3) if k <= min(site.shape[1:])] or [1])
    s, pad = choose.choice([1, 2]), choose.integer(0, k // 2)
    return (site.src,), dict(k=k, stride=s, pad=pad)


def _shape_pool(ins, p):
    (c, h, w), k, s, pad = ins[0], p["k"], p["stride"], p["pad"]
    return [(c, _out(h, k, s, 1, pad, pad), _out(w, k, s, 1, pad, pad))]


def _onnx_pool(kind: str):
    def build(g, xs, ws, p, shape):
        return g.node(kind, xs, kernel_shape=[p["k"]] * 2, strides=[p["stride"]] * 2,
                      pads=[p["pad"]] * 4)
    return build


def _onnx_reshape_transpose(g, xs, ws, p, shape):
    c, h, w = shape
    y = g.node("Reshape", [xs[0], g.const(np.array([1, c, h * w], np.int64))])
    y = g.node("Transpose", [y], perm=[0, 2, 1])
    y = g.node("Transpose", [y], perm=[0, 2, 1])
    return g.node("Reshape", [y, g.const(np.array([1, c, h, w], np.int64))])


def _one_input(choose: Chooser, site: Site):
    return (site.src,), {}


def _same_shape(ins, p):
    return [ins[0]]


def _no_weights(weight, shape, p):
    return ()


def _conv_weights(weight, shape, p):   # OIHW, and the bias
    return (weight(p["out_c"], shape[0] // p["groups"], p["k"], p["k"]),
            weight(p["out_c"]) if p["bias"] else None)


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    onnx: Callable                       # its ONNX nodes
    draw: Callable = _one_input          # its inputs and parameters
    shape: Callable = _same_shape        # its output shapes
    weights: Callable = _no_weights      # its weights, drawn from the spec's seed in order
    fits: Callable = lambda site: True   # it can read the site's tensor
    frequency: int = 1                   # its share of the draws (conv: twice the others)


# In the order hypothesis draws from (a shrunk example ends at the first: conv).
OPS = {op.name: op for op in (
    Op("conv", _onnx_conv, _draw_conv, _shape_conv, _conv_weights, frequency=2),
    Op("conv_transpose", _onnx_conv_transpose, _draw_conv_transpose, _shape_conv_transpose,
       lambda weight, shape, p: (weight(shape[0], p["out_c"], p["k"], p["k"]),
                                 weight(p["out_c"]) if p["bias"] else None)),
    Op("max_pool", _onnx_pool("MaxPool"), _draw_pool, _shape_pool),
    Op("avg_pool", _onnx_pool("AveragePool"), _draw_pool, _shape_pool),
    Op("batch_norm", lambda g, xs, ws, p, shape: g.node(
        "BatchNormalization", xs + [g.const(a) for a in ws]),
       weights=lambda weight, shape, p: (weight(shape[0]) + 1, weight(shape[0]),
                                         weight(shape[0]), np.abs(weight(shape[0])) + 1)),
    Op("relu", lambda g, xs, ws, p, shape: g.node("Relu", xs)),
    Op("leaky_relu", lambda g, xs, ws, p, shape: g.node("LeakyRelu", xs, alpha=p["alpha"]),
       lambda choose, site: ((site.src,), dict(alpha=choose.choice([0.1, 0.2])))),
    Op("add_bias", lambda g, xs, ws, p, shape: g.node("Add", [xs[0], g.const(ws[0])]),
       weights=lambda weight, shape, p: (weight(shape[0], 1, 1),)),
    Op("reshape_transpose", _onnx_reshape_transpose),
    Op("add", lambda g, xs, ws, p, shape: g.node("Add", xs),
       lambda choose, site: ((site.src, choose.choice(site.same)), {}),
       fits=lambda site: bool(site.same)),
    Op("concat", lambda g, xs, ws, p, shape: g.node("Concat", xs, axis=1),
       lambda choose, site: ((site.src, choose.choice(site.same_hw)), {}),
       lambda ins, p: [(ins[0][0] + ins[1][0],) + ins[0][1:]],
       fits=lambda site: bool(site.same_hw)),
    Op("split", lambda g, xs, ws, p, shape: g.node("Split", xs, outputs=2, axis=1),
       shape=lambda ins, p: [(ins[0][0] // 2,) + ins[0][1:]] * 2,   # two halves
       fits=lambda site: site.shape[0] % 2 == 0),
    Op("resize", lambda g, xs, ws, p, shape: g.node(
        "Resize", [xs[0], "", g.const(np.array([1, 1, 2, 2], np.float32))], mode="nearest"),
       shape=lambda ins, p: [(ins[0][0], 2 * ins[0][1], 2 * ins[0][2])],
       fits=lambda site: max(site.shape[1:]) <= 8),
)}


# ---- a spec: drawn, its shapes, built ------------------------------------------------

def draw_spec(choose: Chooser, max_layers: int = 6) -> GraphSpec:
    """A spec whose every choice comes from `choose`, each layer one that fits."""
    c, h, w = choose.integer(1, 8), choose.integer(4, 12), choose.integer(4, 12)
    shapes = [(c, h, w)]          # shape (C, H, W) of every tensor, NCHW
    layers = []
    for _ in range(choose.integer(1, max_layers)):
        site = Site.at(shapes, choose.integer(0, len(shapes) - 1))
        names = [op.name for op in OPS.values() if op.fits(site) for _ in range(op.frequency)]
        op = OPS[choose.choice(names)]
        inputs, params = op.draw(choose, site)
        layers.append(Layer(op.name, inputs, tuple(sorted(params.items()))))
        shapes += op.shape([shapes[i] for i in inputs], params)
    desired = ()
    if choose.boolean():
        desired = (("relax.nn.conv2d", tuple(choose.choice(CONV_LAYOUTS))),)
    return GraphSpec(shapes[0], choose.choice(["NCHW", "NHWC"]), tuple(layers), desired,
                     choose.integer(0, 2 ** 16))


def shapes_of(spec: GraphSpec) -> list[tuple[int, int, int]]:
    """Shapes of every tensor the spec produces, in order (input first)."""
    shapes = [spec.shape]
    for layer in spec.layers:
        shapes += OPS[layer.op].shape([shapes[i] for i in layer.inputs], dict(layer.params))
    return shapes


def _weights(spec: GraphSpec):
    rng = np.random.RandomState(spec.seed)
    return lambda *shape: (rng.standard_normal(shape) * 0.1).astype(np.float32)


def outputs(spec: GraphSpec) -> list[int]:
    """Tensors no layer reads: the graph's outputs (so nothing is dead code)."""
    count = len(shapes_of(spec))
    read = {i for layer in spec.layers for i in layer.inputs}
    return [i for i in range(1, count) if i not in read] or [count - 1]


def emit(spec: GraphSpec, graph, builders: dict):
    """The spec built once on `graph` (input(), finish(outputs)), each layer by its op's
    builder in `builders` (graph, inputs, weights, params, input shape) -> tensor(s)."""
    weight, shapes = _weights(spec), shapes_of(spec)
    tensors = [graph.input()]
    for layer in spec.layers:
        params, shape = dict(layer.params), shapes[layer.inputs[0]]
        weights = OPS[layer.op].weights(weight, shape, params)
        built = builders[layer.op](graph, [tensors[i] for i in layer.inputs], weights, params,
                                  shape)
        tensors += built if isinstance(built, list) else [built]
    return graph.finish([tensors[i] for i in outputs(spec)])


def to_onnx(spec: GraphSpec):
    return emit(spec, OnnxGraph(spec.shape, spec.input_layout),
                {name: op.onnx for name, op in OPS.items()})

"""Turn a darknet .cfg description into a valid ONNX graph with deterministic weights.

The architecture stays data (cases/darknet/*.cfg, as darknet ships it); this is
the one builder. Layers: convolutional (+batchnorm, leaky 0.1), maxpool (stride-1
pools pad right/bottom like darknet), route (concat, or `groups`/`group_id`
channel slices as in yolov4-tiny), upsample (Resize), and the yolo/region heads
(reshape across the channel axis, then transpose: the shape of the seed bug).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def parse_cfg(text: str) -> list[tuple[str, dict[str, str]]]:
    sections: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            sections.append((line.strip("[]").strip(), {}))
        elif "=" in line:
            if not sections:
                raise ValueError(f"cfg key outside any section: {raw!r}")
            key, value = line.split("=", 1)
            sections[-1][1][key.strip()] = value.strip()
        else:
            raise ValueError(f"cannot parse cfg line: {raw!r}")
    if not sections or sections[0][0] not in ("net", "network"):
        raise ValueError("a darknet cfg starts with a [net] section")
    return sections


class _Graph:
    def __init__(self, seed: int):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, stem: str, array: np.ndarray) -> str:
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out


def _conv(g: _Graph, x: str, c_in: int, opts: dict) -> tuple[str, int]:
    filters, size = int(opts["filters"]), int(opts.get("size", 1))
    stride = int(opts.get("stride", 1))
    pad = size // 2 if int(opts.get("pad", 0)) else int(opts.get("padding", 0))
    weight = (g.rng.standard_normal((filters, c_in, size, size)) * 0.1).astype(np.float32)
    inputs = [x, g.const("w", weight)]
    bn = int(opts.get("batch_normalize", 0))
    if not bn:
        inputs.append(g.const("b", (g.rng.standard_normal(filters) * 0.1).astype(np.float32)))
    y = g.node("Conv", inputs, kernel_shape=[size, size], strides=[stride, stride],
               pads=[pad] * 4)
    if bn:
        scale = (1 + 0.1 * g.rng.standard_normal(filters)).astype(np.float32)
        bias = (0.1 * g.rng.standard_normal(filters)).astype(np.float32)
        mean = (0.1 * g.rng.standard_normal(filters)).astype(np.float32)
        var = (1 + g.rng.random_sample(filters)).astype(np.float32)
        y = g.node("BatchNormalization",
                   [y] + [g.const(s, a) for s, a in
                          (("bn_scale", scale), ("bn_bias", bias), ("bn_mean", mean),
                           ("bn_var", var))],
                   epsilon=1e-5)
    activation = opts.get("activation", "linear")
    if activation == "leaky":
        y = g.node("LeakyRelu", [y], alpha=0.1)
    elif activation != "linear":
        raise ValueError(f"unsupported darknet activation {activation!r}")
    return y, filters


def _head(g: _Graph, x: str, c: int, opts: dict) -> str:
    anchors = len(opts["mask"].split(",")) if "mask" in opts else int(opts.get("num", 1))
    attributes = 5 + int(opts.get("classes", 80))
    if anchors * attributes != c:
        raise ValueError(f"head expects {anchors}x{attributes} channels, got {c}")
    shape = g.const("shape", np.array([0, anchors, attributes, -1], dtype=np.int64))
    y = g.node("Reshape", [x, shape])
    return g.node("Transpose", [y], perm=[0, 1, 3, 2])


INPUT = "data"


def input_shape(text: str, batch: int = 1) -> list[int]:
    """The model's input shape, NCHW, from the cfg's [net] section (nothing built)."""
    net = parse_cfg(text)[0][1]
    return [batch, int(net.get("channels", 3)), int(net.get("height", 416)),
            int(net.get("width", 416))]


def build(text: str, seed: int = 0, batch: int = 1) -> onnx.ModelProto:
    """ONNX model (opset 13) for a darknet cfg; same text and seed, same bytes."""
    sections = parse_cfg(text)
    _, c, h, w = input_shape(text, batch)
    g = _Graph(seed)
    outputs: list[tuple[str, int]] = []   # per layer: (tensor, channels)
    heads: list[str] = []
    x, channels = "data", c
    for index, (kind, opts) in enumerate(sections[1:]):
        if kind == "convolutional":
            x, channels = _conv(g, x, channels, opts)
        elif kind == "maxpool":
            size, stride = int(opts.get("size", 2)), int(opts.get("stride", 2))
            extra = size - 1 if stride == 1 else 0   # darknet keeps the size when stride is 1
            x = g.node("MaxPool", [x], kernel_shape=[size, size], strides=[stride, stride],
                       pads=[0, 0, extra, extra])
        elif kind == "upsample":
            scale = float(opts.get("stride", 2))
            scales = g.const("scales", np.array([1, 1, scale, scale], dtype=np.float32))
            x = g.node("Resize", [x, "", scales], mode="nearest")
        elif kind == "route":
            layers = [int(v) for v in opts["layers"].split(",")]
            picked = [outputs[i if i >= 0 else index + i] for i in layers]
            if "groups" in opts:
                (src, src_c), = picked
                groups, gid = int(opts["groups"]), int(opts.get("group_id", 0))
                part = src_c // groups
                starts = g.const("starts", np.array([gid * part], dtype=np.int64))
                ends = g.const("ends", np.array([(gid + 1) * part], dtype=np.int64))
                axes = g.const("axes", np.array([1], dtype=np.int64))
                x, channels = g.node("Slice", [src, starts, ends, axes]), part
            elif len(picked) == 1:
                x, channels = picked[0]
            else:
                x = g.node("Concat", [p[0] for p in picked], axis=1)
                channels = sum(p[1] for p in picked)
        elif kind in ("yolo", "region"):
            heads.append(_head(g, x, channels, opts))
        else:
            raise ValueError(f"unsupported darknet layer [{kind}] (layer {index})")
        outputs.append((x, channels))
    graph_outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in heads]
    graph = helper.make_graph(
        g.nodes, "darknet",
        [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, [batch, c, h, w])],
        graph_outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tvm-harness-darknet")
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model

"""The Relax operators this TVM build registers, and how each builder is called: reflection.

No per-op rules live here. `tvm.ir.Op.list_op_names()` gives the `relax.*` ops; each one's
Python builder is found under `tvm.relax.op` by its name (`relax.nn.conv2d` ->
`tvm.relax.op.nn.conv2d`); each builder parameter gets the kinds of value the generator
may draw for it, read from (in order) the op's registered argument info (`Op.arguments`:
Tensor, Shape, PrimExpr...), the builder's annotation, and the op's attrs type field
schema of the same name. Whether an application is valid, and its output shapes, is left
to TVM's own struct-info inference (harness.tvmapi.op_program_relax).

An op the generator cannot call honestly (no builder, impure, an argument it cannot draw:
a GlobalVar, a callable, a type, free text) is in `skipped()` with its reason, never
dropped silently.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

from harness.tvmapi import reflection
from harness.tvmapi.loading import tvm

# Kinds of drawn value (harness.catalog.op_programs draws each): a read of a tensor, a
# tuple of them, a shape, scalars and lists of them, a dtype; `none` allows None.
TENSOR, TENSORS, SHAPE = "tensor", "tensors", "shape"
INT, INTS, FLOAT, FLOATS, BOOL, DTYPE, NONE = "int", "ints", "float", "floats", "bool", \
    "dtype", "none"

_TENSOR_INFOS = {"Tensor", "ffi::Optional<Tensor>"}
_TENSORS_INFOS = {"Tuple of Tensors", "List of Tensors", "Tuple"}


@dataclasses.dataclass(frozen=True)
class Param:
    """One builder parameter: the kinds of value drawn for it (() = its default only)."""
    name: str
    kinds: tuple[str, ...]
    has_default: bool


@dataclasses.dataclass(frozen=True)
class OpSignature:
    """How to call one op's builder: plain data (the catalog draws from it)."""
    op: str                     # relax.nn.conv2d
    params: tuple[Param, ...]

    @property
    def tensor_params(self) -> int:
        return sum(1 for p in self.params if TENSOR in p.kinds or TENSORS in p.kinds)


class Undrivable(Exception):
    """Why the generator cannot call an op's builder (the skip reason)."""


def relax_op_names() -> list[str]:
    return sorted(str(n) for n in tvm().ir.Op.list_op_names() if str(n).startswith("relax."))


def builder(op: str):
    """The op's Python builder under tvm.relax.op (None when there is none)."""
    found = tvm().relax.op
    for part in op.split(".")[1:]:
        found = getattr(found, part, None)
        if found is None:
            return None
    return found if callable(found) else None


def _alternatives(annotation) -> set[str]:
    """The kinds an annotation names, one per union member; `other:TEXT` for the rest."""
    if annotation is inspect.Parameter.empty:
        return set()
    found = set()
    for text in _split_union(inspect.formatannotation(annotation)):
        text = text.strip()
        inner = text.partition("[")[2]
        if text == "None":
            found.add(NONE)
        elif text in ("int", "float", "bool", "str"):
            found.add(text)
        elif text.endswith("._dtype.dtype") or text.endswith("PrimType"):
            found.add(DTYPE)
        elif text.endswith("expr.Expr") or text.endswith("RelaxExpr"):
            found.add("expr")
        elif text.split("[")[0] in ("list", "tuple", "collections.abc.Sequence"):
            if inner.startswith("int"):
                found.add(INTS)
            elif inner.startswith("float"):
                found.add(FLOATS)
            elif "expr.Expr" in inner:
                found.add("exprs")
            else:
                found.add(f"other:{text}")
        else:
            found.add(f"other:{text}")
    return found


def _split_union(text: str) -> list[str]:
    """`a | list[b | c] | None` -> [a, list[b | c], None] (bars inside brackets kept)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def _from_schema(schema: dict) -> set[str]:
    """Kinds for an attrs field's reflected type schema (as the attrs sweep reads them)."""
    kind, args = schema.get("type"), schema.get("args", [])
    if kind in ("int", "ir.IntImm", "ir.PrimExpr"):
        return {INT}
    if kind in ("float", "ir.FloatImm"):
        return {FLOAT}
    if kind == "bool":
        return {BOOL}
    if kind == "DataType":
        return {DTYPE}
    if kind == "ffi.String":
        return {"str"}
    if kind == "Optional" and args:
        return _from_schema(args[0]) | {NONE}
    if kind == "ffi.Array" and args:
        element = _from_schema(args[0])
        return {INTS} if INT in element else {FLOATS} if FLOAT in element else set()
    if kind == "ffi.Object":   # SplitAttrs.indices_or_sections: a count or indices
        return {INT, INTS}
    return set()


def _param(name: str, parameter: inspect.Parameter, info: dict[str, str],
           fields: dict[str, dict]) -> Param:
    has_default = parameter.default is not inspect.Parameter.empty
    alternatives = _alternatives(parameter.annotation)
    relax_info = info.get(name, "")
    scalars = alternatives & {INT, INTS, FLOAT, FLOATS, BOOL, DTYPE}
    if not alternatives:   # no annotation: the op's argument info, then its attrs field
        if relax_info in _TENSOR_INFOS:
            alternatives = {"expr"}
        elif relax_info in _TENSORS_INFOS:
            alternatives = {"exprs", "expr"}
        elif name in fields:
            alternatives = _from_schema(fields[name])
        elif relax_info in ("Shape", "PrimExpr"):
            alternatives = {"expr"}
        if not alternatives and not has_default:
            raise Undrivable(f"argument {name!r}: no annotation, no relax argument info and "
                             "no attrs field to draw it from, and no default")
        scalars = alternatives & {INT, INTS, FLOAT, FLOATS, BOOL, DTYPE}
    if "expr" in alternatives and not scalars:
        if relax_info == "Shape":
            return Param(name, (SHAPE,), has_default)
        if relax_info == "PrimExpr":
            return Param(name, (FLOAT,), has_default)
        if "exprs" in alternatives or relax_info in _TENSORS_INFOS:
            return Param(name, (TENSORS,), has_default)
        if relax_info in _TENSOR_INFOS or not relax_info:
            optional = NONE in alternatives or parameter.default is None
            return Param(name, (TENSOR,) + ((NONE,) if optional else ()), has_default)
        raise Undrivable(f"argument {name!r} is a relax {relax_info} expression")
    if relax_info == "Shape" and (INTS in scalars or INT in scalars):
        return Param(name, (SHAPE,), has_default)
    if DTYPE in alternatives or name in ("dtype", "out_dtype"):
        if DTYPE in alternatives or "str" in alternatives:
            return Param(name, (DTYPE,) + ((NONE,) if NONE in alternatives else ()),
                         has_default)
    drawn = tuple(sorted(scalars)) + ((NONE,) if NONE in alternatives and scalars else ())
    if drawn:
        return Param(name, drawn, has_default)
    if has_default:
        return Param(name, (), True)   # its default only: free text, an object...
    others = sorted(a.removeprefix("other:") for a in alternatives)
    if "str" in alternatives:
        raise Undrivable(f"argument {name!r} is free text with no default")
    raise Undrivable(f"argument {name!r} takes {' | '.join(others) or 'nothing drawable'}")


# Ops a pass inserts and removes itself, which nothing lowers: a program that keeps one
# fails tvm.compile by design (found by `fuzz --generator ops --path compile`).
_PASS_MARKERS = {
    "relax.wrap_param": "a marker ToMixedPrecision inserts and removes itself "
                        "(src/relax/transform/to_mixed_precision.cc:108): no pass lowers it, "
                        "so a program keeping it never compiles (CodeGenVM cannot emit it)",
}


def _signature(op: str) -> OpSignature:
    found = builder(op)
    if found is None:
        raise Undrivable("no Python builder under tvm.relax.op")
    registered = tvm().ir.Op.get(op)
    if not bool(registered.get_attr("FPurity")):
        raise Undrivable("impure: not allowed in a dataflow block")
    if op in _PASS_MARKERS:
        raise Undrivable(_PASS_MARKERS[op])
    if op.startswith("relax.grad."):
        # Their inference returns an argument's type unchecked (src/relax/op/tensor/grad.cc):
        # almost every draw is an invalid program TVM accepts, then LegalizeOps refuses.
        raise Undrivable("a gradient op: inference does not check its arguments")
    try:
        signature = inspect.signature(found)
    except (TypeError, ValueError) as exc:
        raise Undrivable(f"the builder has no Python signature: {exc}") from None
    info = {str(a.name): str(a.type_info) for a in registered.arguments}
    attrs_key = str(registered.attrs_type_key or "")
    fields = dict(reflection.fields_of_type(attrs_key)) if attrs_key else {}
    params = []
    for name, parameter in signature.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise Undrivable(f"the builder takes *{name}: a variable argument list")
        params.append(_param(name, parameter, info, fields))
    return OpSignature(op, tuple(params))


@functools.cache
def _survey() -> tuple[tuple[OpSignature, ...], tuple[tuple[str, str], ...]]:
    signatures, skipped = [], []
    for op in relax_op_names():
        try:
            signatures.append(_signature(op))
        except Undrivable as reason:
            skipped.append((op, str(reason)))
    return tuple(signatures), tuple(skipped)


def signatures() -> list[OpSignature]:
    """Every relax op whose builder the generator can call, with its parameters' kinds."""
    return list(_survey()[0])


def skipped() -> dict[str, str]:
    """{op: why the generator cannot call its builder} for every other relax op."""
    return dict(_survey()[1])

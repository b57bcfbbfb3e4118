"""Reflection over TVM's object system: attrs types, their fields and schemas, and
builders for the object-valued fields the attrs sweep generates."""
from __future__ import annotations

import json
import math
from typing import Iterator

from harness.tvmapi.loading import ffi, tvm
from harness.tvmapi.targets import make_target


def is_object(value) -> bool:
    return isinstance(value, ffi().Object)


def type_key(obj) -> str:
    return obj.__tvm_ffi_type_info__.type_key


def _type_info(key: str):
    ffi()  # the relax attrs types register when tvm.relax is imported
    from tvm_ffi.core import _lookup_or_register_type_info_from_type_key
    return _lookup_or_register_type_info_from_type_key(str(key))


def _chain(info) -> Iterator:
    while info is not None:
        yield info
        info = info.parent_type_info


def fields_of_type(key: str) -> list[tuple[str, dict]]:
    """(name, type_schema) of every reflected field, inherited ones included."""
    out = []
    for info in reversed(list(_chain(_type_info(key)))):
        for field in info.fields:
            schema = field.metadata.get("type_schema")
            out.append((field.name, json.loads(schema) if schema else {"type": "Any"}))
    return out


def field_names(obj) -> list[str]:
    return [name for name, _ in fields_of_type(type_key(obj))]


def get_field(obj, name: str):
    if name == "__dict__":  # DictAttrs keeps its payload in a reflected map
        return dict(obj.items()) if hasattr(obj, "items") else getattr(obj, name)
    return getattr(obj, name)


def registered_attrs_types() -> list[str]:
    """Every registered type whose ancestors include ir.Attrs."""
    ffi_mod = ffi()
    keys = []
    for key in ffi_mod.registry.get_registered_type_keys():
        chain = [info.type_key for info in _chain(_type_info(key))]
        if "ir.Attrs" in chain[1:]:
            keys.append(str(key))
    return sorted(keys)


def make_object(key: str, **fields):
    """Construct a reflected object by type key (used by the attrs strategies)."""
    return tvm().ir.make_node(key, **fields)


def device_mesh(shape: tuple[int, ...]):
    return tvm().relax.distributed.DeviceMesh(tuple(shape), list(range(math.prod(shape))))


def placement(text: str):
    """e.g. "S[0]R": one entry per mesh axis, Replica or Sharded along a tensor axis."""
    return tvm().relax.distributed.Placement.from_text(text)


def permutation_index_map(order: list[int]):
    """The layout transform that permutes axes (NCHW -> NHWC is [0, 2, 3, 1])."""
    return tvm().tirx.IndexMap.from_func(lambda *axes: [axes[i] for i in order],
                                         ndim=len(order))


def vdevice(vdevice_id: int, memory_scope: str):
    return tvm().relax.VDevice(make_target("llvm", 1), vdevice_id, memory_scope)


def int_imm(value: int, dtype: str = "int64"):
    tir = tvm().tirx if hasattr(tvm(), "tirx") else tvm().tir
    return tir.IntImm(dtype, value)


def float_imm(value: float, dtype: str = "float32"):
    t = tvm()
    return t.tirx.FloatImm(dtype, value) if hasattr(t, "tirx") else t.tir.FloatImm(dtype, value)

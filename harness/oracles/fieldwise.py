"""Field-by-field comparison of attrs objects, driven by reflection.

Fields are enumerated from `__tvm_ffi_type_info__`, never from a hand list, so a
field added to any attrs type upstream is compared without editing this file.
"""
from __future__ import annotations

import struct

from harness.tvmapi import ir, reflection, structure

_MISSING = object()


def _kind(value) -> type:
    """The scalar kind, whatever class carries it (tvm_ffi's String is a str)."""
    for kind in (bool, int, float, str, bytes):
        if isinstance(value, kind):
            return kind
    return type(value)


def _same(a, b) -> bool:
    """Exact: 1, 1.0 and True differ (kind), 0.0 and -0.0 differ, NaNs compare by bits."""
    if reflection.is_object(a) or reflection.is_object(b):
        if not (reflection.is_object(a) and reflection.is_object(b)):
            return False
        return structure.structural_equal(a, b, map_free_vars=True)   # a copy has its own vars
    if _kind(a) is not _kind(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def _read(obj, name):
    try:
        return reflection.get_field(obj, name)
    except AttributeError:
        return _MISSING


def compare_attrs(a, b) -> tuple[str, str] | None:
    """(field, detail) of the first difference between two attrs objects, or None."""
    if a is None or b is None:
        if a is None and b is None:
            return None
        return ("(attrs)", f"one side has no attrs: {a!r} vs {b!r}")
    key_a, key_b = reflection.type_key(a), reflection.type_key(b)
    if key_a != key_b:
        return ("(type)", f"attrs type {key_a} became {key_b}")
    for name in reflection.field_names(a):
        left, right = _read(a, name), _read(b, name)
        if right is _MISSING and left is not _MISSING:
            return (name, f"field {name} of {key_a} is missing from the copy")
        if isinstance(left, dict) and isinstance(right, dict):
            for key in left.keys() | right.keys():
                if key not in right:
                    return (f"{name}[{key}]", f"entry {key!r} is missing from the copy")
                if key not in left:
                    return (f"{name}[{key}]", f"entry {key!r} appeared in the copy")
                if not _same(left[key], right[key]):
                    return (f"{name}[{key}]", f"{left[key]!r} became {right[key]!r}")
        elif not _same(left, right):
            return (name, f"field {name} of {key_a}: {left!r} became {right!r}")
    return None


def compare_module_attrs(original, copy) -> tuple[str, str] | None:
    """(path, detail) of the first attrs field that differs between two modules."""
    left, right = ir.call_attrs(original), ir.call_attrs(copy)
    if len(left) != len(right):
        return ("(attrs count)", f"{len(left)} attrs objects became {len(right)}")
    for (loc, attrs_a), (loc_b, attrs_b) in zip(left, right, strict=False):
        if loc != loc_b:
            return (loc, f"attrs site {loc} became {loc_b}")
        found = compare_attrs(attrs_a, attrs_b)
        if found:
            field, detail = found
            return (f"{loc}.{field}", detail)
    return None

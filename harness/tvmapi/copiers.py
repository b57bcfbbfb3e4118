"""The ways a module is copied: deepcopy (TVM's is save_json + load_json), JSON, TVMScript."""
from __future__ import annotations

import copy

from harness.tvmapi.loading import tvm
from harness.verdict import first_line


def save_json(obj) -> str:
    return tvm().ir.save_json(obj)


def load_json(text: str):
    return tvm().ir.load_json(text)


def deepcopy(obj):
    return copy.deepcopy(obj)


def tvmscript(mod) -> str:
    """The module as TVMScript that parses back (`show_meta` carries the constants)."""
    return mod.script(show_meta=True)


class CopierUnsupported(Exception):
    """This copier cannot carry this module (a construct it cannot print or parse)."""


def tvmscript_copy(mod):
    """Print to TVMScript and parse back: a copy that does not go through save_json for the
    IR itself (constants still travel in the printed metadata section, as JSON; measured:
    without show_meta they are not printed at all and the text does not parse)."""
    try:
        text = tvmscript(mod)
    except Exception as exc:
        raise CopierUnsupported(f"TVMScript cannot print it: {first_line(exc)[:300]}") from exc
    try:
        return tvm().script.from_source(text)
    except Exception as exc:
        raise CopierUnsupported(
            f"TVMScript cannot parse its own text: {first_line(exc)[:300]}") from exc

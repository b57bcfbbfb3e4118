"""The ways a module is copied: deepcopy (TVM's is save_json + load_json), JSON, TVMScript."""
from __future__ import annotations

import concurrent.futures
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


_parser_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tvmscript")


def parse_tvmscript(text: str):
    """`tvm.script.from_source(text)`, on a thread of its own: the parser keeps the stack it
    was called from (`inspect.stack()` in `I.ir_module`, freed only by the cycle collector),
    and from a pass instrument that stack holds the pass's input, which a copy-on-write
    pass would then copy instead of changing in place (the suite guard must not)."""
    return _parser_thread.submit(tvm().script.from_source, text).result()


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
        return parse_tvmscript(text)
    except Exception as exc:
        raise CopierUnsupported(
            f"TVMScript cannot parse its own text: {first_line(exc)[:300]}") from exc

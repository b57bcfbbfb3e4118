"""How repro.py carries a Relax module: as TVMScript where that round-trips, else as JSON.

TVMScript is the form upstream issues and TVM's own tests use, so it is the default.
But TVM cannot parse some modules back from its own TVMScript (registered bugs: the
paged-KV TIR kernels relax.frontend.nn exports for nn-llama-tiny print an sblock region
over their own alloc buffer, which the parser refuses; `R.call_inplace_packed(...,
ty_args=R.Any)` prints as a name the parser passes on uncalled), and some parse back
as another module. A reproducer holding such a text cannot load its module (it exits
2, "cannot run here") or runs on a module that is not the one that failed. So the
writer tries the round trip first and, where TVM refuses or changes the module, embeds
the module's save_json text instead, and repro.py says why in a comment.

The decision goes through the one classifier (`Call.of`): TVM refusing to print, parse
or compare is the fallback to JSON; an exception of our own leaves as a HarnessBug
(harness-error), never read as "this module's TVMScript does not round-trip".
"""
from __future__ import annotations

import dataclasses

from harness.classify import Call
from harness.tvmapi import copiers, structure

STAGE = "reproducer"   # the stage a HarnessBug of this decision names
DETAIL_LIMIT = 300     # characters of TVM's message kept in repro.py's comment


@dataclasses.dataclass(frozen=True)
class Embedding:
    """The module as repro.py holds it: `text`, which `loader` ("tvmscript" or "json";
    the template load_LOADER) reads back, and `why` it is not TVMScript ("" when it is)."""
    loader: str
    text: str
    why: str = ""


def embed(module) -> Embedding:
    """The module as TVMScript when TVM prints it, parses the text back and the parsed
    module is structurally the same (free variables mapped, as the copiers compare);
    otherwise its save_json text, with the first line of what TVM said."""
    printed = Call.of(STAGE, copiers.tvmscript, module)
    if not printed.ok:
        return as_json(module, f"TVM cannot print this module as TVMScript ({_cut(printed)})")
    text = printed.value.strip()
    parsed = Call.of(STAGE, copiers.parse_tvmscript, text)
    if not parsed.ok:
        return as_json(module, "this module's TVMScript does not parse back on this TVM "
                               f"({_cut(parsed)})")
    compared = Call.of(STAGE, structure.first_mismatch, module, parsed.value,
                       map_free_vars=True)
    if not compared.ok:
        return as_json(module, "TVM cannot compare this module with its TVMScript parsed "
                               f"back ({_cut(compared)})")
    if compared.value is not None:
        return as_json(module, "this module's TVMScript parses back as another module on "
                               f"this TVM (first difference at {compared.value})")
    return Embedding("tvmscript", text)


def as_json(module, why: str) -> Embedding:
    """The module's save_json text (what tvm.ir.load_json reads back). TVM failing to
    save it leaves as TVM's exception: then no form of this module can be embedded, and
    the reproducer is not written (its caller classifies that failure)."""
    return Embedding("json", copiers.save_json(module), " ".join(why.split()))


def _cut(call: Call) -> str:
    """The first line of TVM's message, short enough for a comment line."""
    detail = call.detail
    return detail if len(detail) <= DETAIL_LIMIT else detail[:DETAIL_LIMIT - 3] + "..."

"""Seeded passes registered under relax.transform, as a plugin would register them.

`python -m harness passes --register tests/seeded_sweep.py` imports this file in
the parent and in every child, so the sweep enumerates these five with the rest.
"""
import os
import sys

import tvm
import tvm_ffi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seeded import mutate_in_place, respan_in_place


class _Counter:
    calls = 0


def _hidden_state(mod, _ctx):
    """Answers differently every time it runs: it stamps a call counter on the module."""
    _Counter.calls += 1
    return mod.with_attr("harness_seeded_calls", _Counter.calls)


def _mutator(mod, _ctx):
    return mutate_in_place(mod)


def _unserializable(mod, _ctx):
    """Returns a module that neither save_json nor structural hashing accepts: the seed's
    own bug class (a copy that cannot be made), in the pass's output."""
    return mod.with_attr("harness_seeded_function", tvm_ffi.convert(lambda value: value))


def _respanner(mod, _ctx):
    """Changes only a span of its input in place: invisible to structural hashing."""
    return respan_in_place(mod)


def _refusal(mod, _ctx):
    """Refuses every module, as an internal check failing on an input of its phase would:
    a relax pass's phase is any well-formed module, so no rule makes this a precondition."""
    raise ValueError("seeded refusal: Check failed: (false) is false")


for _name, _body in (("HarnessSeededHiddenState", _hidden_state),
                     ("HarnessSeededRefusal", _refusal),
                     ("HarnessSeededMutator", _mutator),
                     ("HarnessSeededRespanner", _respanner),
                     ("HarnessSeededUnserializable", _unserializable)):
    def _make(body=_body, name=_name):
        return tvm.transform.module_pass(body, opt_level=0, name=name)
    tvm_ffi.register_global_func(f"relax.transform.{_name}", _make, override=True)
    setattr(tvm.relax.transform, _name, _make)

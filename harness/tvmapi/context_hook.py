"""Put one pass instrument into every PassContext of a process: the suite guard's hook.

A test builds its own PassContext (nested ones too) or none at all; TVM runs the
instruments of the innermost context only. So for a session the guard
  * wraps `PassContext.__init__`: every context made from now on gets the instrument
    after its own ones (a context made with `instruments=[...]` keeps them, first);
  * wraps `override_instruments` the same way (a test replacing its instruments);
  * enters one base context holding it, for the passes a test runs with no context.
The instrument only records (pass_guard.py), so the passes run as they would without
it. `uninstall` puts everything back, in the reverse order.
"""
from __future__ import annotations

import functools
import inspect

from harness.tvmapi.loading import tvm


class Installed:
    def __init__(self, instrument):
        self.instrument = instrument
        self.context_class = tvm().transform.PassContext
        self.original_init = self.context_class.__init__
        self.original_override = self.context_class.override_instruments
        self.base = None

    def _with_ours(self, instruments) -> list:
        chosen = list(instruments or [])
        return chosen if any(item.same_as(self.instrument) for item in chosen) \
            else chosen + [self.instrument]

    def install(self) -> None:
        hook, original_init = self, self.original_init
        signature = inspect.signature(original_init)

        @functools.wraps(original_init)
        def init(context, *args, **kwargs):
            bound = signature.bind(context, *args, **kwargs)
            bound.arguments["instruments"] = hook._with_ours(
                bound.arguments.get("instruments"))
            original_init(*bound.args, **bound.kwargs)

        original_override = self.original_override

        @functools.wraps(original_override)
        def override_instruments(context, instruments):
            original_override(context, hook._with_ours(instruments))

        self.context_class.__init__ = init
        self.context_class.override_instruments = override_instruments
        self.base = self.context_class()
        self.base.__enter__()

    def uninstall(self) -> None:
        if self.base is not None:
            self.base.__exit__(None, None, None)
            self.base = None
        self.context_class.__init__ = self.original_init
        self.context_class.override_instruments = self.original_override


def install(instrument) -> Installed:
    """Every PassContext from now on runs `instrument` (a `calls.pass_instrument` object)."""
    installed = Installed(instrument)
    installed.install()
    return installed

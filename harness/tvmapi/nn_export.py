"""`relax.frontend.nn` models into Relax: the model and its spec checked, then `export_tvm`.

MLC-LLM and the projects built like it write models as `tvm.relax.frontend.nn.Module`s
and make the IRModule with `Module.export_tvm(spec)`: every method the spec names becomes
a Relax function (symbolic dimensions where the spec says a name, such as "seq_len"),
parameters become function parameters (no weights are bound), effects such as
`nn.KVCache` become extra parameters and results. This is the TVM half of the nn door
(harness.doors.nn_door): the door decides what a user's mistake is, this module makes the
TVM calls.

`spec.ModuleSpec.from_raw` pops each method's `"$"` options out of the caller's dict, so
a second export of the same dict silently loses `param_mode` / `effect_mode`: the spec is
made a ModuleSpec once, from copies of its dicts, and every export reuses that.
"""
from __future__ import annotations

import inspect

from harness.tvmapi.loading import tvm

DEFAULT_SPEC = "get_default_spec"   # MLC-LLM's models say their own spec


class SpecMisfit(ValueError):
    """The spec does not fit the model's methods (the user's to fix)."""


def _nn():
    tvm()   # imported the harness's way (torch hidden where unused, provenance checked)
    from tvm.relax.frontend import nn
    return nn


def is_module(value) -> bool:
    """`value` is an instance of `relax.frontend.nn.Module`."""
    return isinstance(value, _nn().Module)


def has_default_spec(model) -> bool:
    return callable(getattr(model, DEFAULT_SPEC, None))


def default_spec(model):
    """The model's own spec (MLC-LLM's `get_default_spec()`): the model's code runs."""
    return getattr(model, DEFAULT_SPEC)()


def module_spec(model, raw):
    """`raw` (a dict as export_tvm takes it, or a ModuleSpec) as a ModuleSpec of `model`,
    made from copies of its method dicts (from_raw pops their `"$"` options).
    SpecMisfit: the spec does not fit the model (TVM's own checks raise theirs)."""
    nn = _nn()
    if isinstance(raw, nn.spec.ModuleSpec):
        spec = raw
    elif isinstance(raw, dict):
        for method, arguments in raw.items():
            _check_method(model, method, arguments)
        copied = {method: dict(arguments) if isinstance(arguments, dict) else arguments
                  for method, arguments in raw.items()}
        spec = nn.spec.ModuleSpec.from_raw(copied, model)
    else:
        raise SpecMisfit(f"the spec must be a dict {{method: {{argument: nn.spec...}}}} or "
                         f"an nn.spec.ModuleSpec, not a {type(raw).__name__}")
    for name, method in zip(spec.method_names, spec.method_specs, strict=True):
        _check_arity(name, method)
    return spec


def _check_method(model, method: str, arguments) -> None:
    """What from_raw and export_tvm pass over in silence: a misspelled argument is dropped,
    and the specs are then given to the method's arguments in order, whatever their names."""
    function = getattr(model, method, None)
    if not callable(function):
        raise SpecMisfit(f"the spec names method {method!r}, which the model "
                         f"({type(model).__name__}) does not have")
    if isinstance(arguments, _nn().spec.MethodSpec):
        return
    if not isinstance(arguments, dict):
        raise SpecMisfit(f"the spec of {method!r} must be a dict {{argument: nn.spec...}}, "
                         f"not a {type(arguments).__name__}")
    names = list(inspect.signature(function).parameters)
    given = [name for name in arguments if name != "$"]
    if sorted(given) != sorted(names[:len(given)]):
        raise SpecMisfit(f"the spec of {method!r} gives {', '.join(given) or 'nothing'}; "
                         f"{method}() takes {', '.join(names) or 'nothing'}: give its "
                         "arguments from the first, by their names")


def _check_arity(name: str, method) -> None:
    """Every argument without a default has a spec (export_tvm calls the method with one
    value per spec'd argument, in order)."""
    parameters = inspect.signature(method.method).parameters.values()
    required = [parameter.name for parameter in parameters
                if parameter.default is inspect.Parameter.empty
                and parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)]
    if len(method.arg_specs) < len(required):
        raise SpecMisfit(f"the spec of {name!r} gives {len(method.arg_specs)} arguments; "
                         f"{name}() needs {', '.join(required)}")


def export(model, spec):
    """`model.export_tvm(spec)`'s IRModule. Extern modules (nn.add_extern: code compiled
    outside TVM) come back in the list, for the door to refuse."""
    module, _params, extern = model.export_tvm(spec, allow_extern=True)
    return module, list(extern)

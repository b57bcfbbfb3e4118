"""Edits of a Relax module's `main` for the Relax-level reducer (harness.reduce).

Each edit returns a new module, or None when it does not apply: its result would not be
well formed (tvm.relax.analysis.well_formed), or TVM refused to build it. Every edit is
one call through the classifier (`classify.Call.of`), so an exception of our own code in
an edit leaves as a HarnessBug (the reducer stops: harness-error), never as "does not
apply", which would quietly reduce worse. `main`'s bindings are numbered in order across
its blocks; the module's size is their count, and the elements of the constants that
print in the metadata section (not the scalars TVMScript writes inline) break ties.

- `cut(mod, i)`: main ends at binding i, whose var becomes the output; later bindings go,
  and dead code elimination removes what the output no longer needs.
- `start_after(mod, i)`: main starts after binding i: every value bound up to i that a
  later binding (or the output) uses becomes a new parameter with its type, and everything
  before goes (binding i's var is one of them: a cut of the whole graph, so the latest
  failing start is found by a binary search).
- `drop(mod, i, by)`: binding i goes; its uses read one of its arguments of the very same
  type (`by="arg"`: a shape-preserving op skipped) or a fresh parameter of its type
  (`by="param"`).
- `constants_to_params(mod, which)`: constants (all, or the `which`-th ones) become
  parameters; `constants_to_zeros(mod)`: zeros of the same shape and dtype (the metadata
  then compresses to a run of `A`s).

Parameters nothing uses any more are removed (the number of inputs, `num_input`, follows).
Only `main` is edited (harness.tvmapi.relax_rewrite rebuilds it; a module without one,
a relax.frontend.nn export's, has its largest public function edited: `forward`);
functions it no longer calls go with dead code elimination. A module file is read by the Relax door.
"""
from __future__ import annotations

import functools
import os

from harness import classify
from harness.tvmapi import copiers
from harness.tvmapi.ir import constant_data, expr_type, var_name
from harness.tvmapi.loading import tvm
from harness.tvmapi.relax_rewrite import key, main_of, rebuild
from harness.tvmapi.structure import structural_equal

STAGE = "reduce"   # what a HarnessBug of an edit names


def save(mod, stem: str, form: str = "tvmscript") -> str:
    """Write `mod` to STEM.py (TVMScript, constants in its metadata section) or STEM.json;
    the path written. TVMScript that cannot print the module raises."""
    if form == "json":
        path, text = stem + ".json", copiers.save_json(mod)
    else:
        path, text = stem + ".py", copiers.tvmscript(mod)
    with open(path + ".partial", "w") as handle:
        handle.write(text)
    os.replace(path + ".partial", path)
    return path


def values(const):
    """A constant's values as a numpy array."""
    return constant_data(const).numpy()


def bindings(mod) -> list:
    _, func = main_of(mod)
    if func is None:
        return []
    return [binding for block in func.body.blocks for binding in block.bindings]


def _constant_type():
    t = tvm()
    return getattr(t.ir, "GenericConst", None) or t.relax.Constant


def _shape(const) -> tuple[int, ...] | None:
    shape = getattr(expr_type(const), "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return None
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        return None


def constants(mod) -> list:
    """main's tensor constants of at least one dimension, distinct, in order of use."""
    _, func = main_of(mod)
    if func is None:
        return []
    found, seen, kind = [], set(), _constant_type()

    def visit(expr):
        if isinstance(expr, kind) and _shape(expr) and expr.__hash__() not in seen:
            seen.add(expr.__hash__())
            found.append(expr)
    tvm().relax.analysis.post_order_visit(func, visit)
    return found


def size(mod) -> tuple[int, int]:
    """(main's bindings, elements of its constants)."""
    elements = 0
    for const in constants(mod):
        count = 1
        for dim in _shape(const):
            count *= dim
        elements += count
    return len(bindings(mod)), elements


def _op_name(value) -> str:
    op = getattr(value, "op", None)
    name = getattr(op, "name", None) or getattr(op, "name_hint", None)
    return str(name) if name is not None else type(value).__name__


def describe(mod, index: int) -> str:
    """'lv3 = relax.nn.relu' for binding `index`."""
    binding = bindings(mod)[index]
    return f"{var_name(binding.var)} = {_op_name(binding.value)}"


def _classified(edit):
    """`edit` through the classifier: TVM's exception is None (the edit does not apply);
    ours leaves as a HarnessBug."""
    @functools.wraps(edit)
    def classified(*args, **kwargs):
        call = classify.Call.of(STAGE, edit, *args, **kwargs)
        return call.value if call.ok else None
    return classified


def _fresh_param(var, name: str | None = None):
    return tvm().relax.Var(name or var_name(var), expr_type(var))


@_classified
def cut(mod, index: int):
    """main ending at binding `index` (its var the output); None if nothing changes."""
    found = bindings(mod)
    if not 0 <= index < len(found) - 1:
        return None
    return rebuild(mod, keep=index, output=found[index].var)


def _uses(mod, after: int) -> set[int]:
    """Vars read by the bindings after `after` and by main's output."""
    relax = tvm().relax
    _, func = main_of(mod)
    used = set()
    for binding in bindings(mod)[after + 1:]:
        used |= {key(v) for v in relax.analysis.free_vars(binding.value)}
    used |= {key(v) for v in relax.analysis.free_vars(func.body.body)}
    return used


@_classified
def start_after(mod, index: int):
    """main starting after binding `index`: what the rest reads of bindings 0..index
    becomes parameters; None if nothing changes."""
    found = bindings(mod)
    if not 0 <= index < len(found) - 1:
        return None
    used = _uses(mod, index)
    remap, params = [], []
    for binding in found[:index + 1]:
        if key(binding.var) in used:
            param = _fresh_param(binding.var)
            remap.append((binding.var, param))
            params.append(param)
    if not params:
        return None
    return rebuild(mod, drop=[b.var for b in found[:index + 1]], remap=remap,
                   new_params=params)


@_classified
def drop(mod, index: int, by: str = "arg"):
    """Binding `index` gone: its uses read an argument of its exact type (`arg`), or a
    new parameter of its type (`param`); None when there is no such argument."""
    relax = tvm().relax
    found = bindings(mod)
    if not 0 <= index < len(found):
        return None
    binding = found[index]
    var = binding.var
    if by == "arg":
        value = binding.value
        # a call's arguments, a tuple's fields, or the var an alias binding (gv = lv) reads
        args = [value] if isinstance(value, relax.Var) else \
            list(getattr(value, "args", []) or getattr(value, "fields", []) or [])
        same = [a for a in args if isinstance(a, (relax.Var, _constant_type()))
                and structural_equal(expr_type(a), expr_type(var))]
        if not same:
            return None
        replacement, params = same[0], []
    elif by == "param":
        replacement = _fresh_param(var)
        params = [replacement]
    else:
        raise ValueError(f"drop by {by!r}: arg or param")
    return rebuild(mod, drop=[var], remap=[(var, replacement)], new_params=params)


@_classified
def constants_to_params(mod, which: list[int] | None = None):
    """main's constants (all, or the `which`-th of `constants(mod)`) as new parameters."""
    found = constants(mod)
    chosen = [found[i] for i in which if 0 <= i < len(found)] if which is not None else found
    if not chosen:
        return None
    _, func = main_of(mod)
    taken = {var_name(param) for param in func.params}
    names = (f"c{n}" for n in range(len(taken) + len(found) + 1) if f"c{n}" not in taken)
    params = [tvm().relax.Var(name, expr_type(const))
              for name, const in zip(names, chosen, strict=False)]
    return rebuild(mod, new_params=params,
                   replace_constants={key(c): p for c, p in zip(chosen, params, strict=True)})


@_classified
def constants_to_zeros(mod):
    """main's constants as zeros of their shape and dtype; None if all already are."""
    import numpy as np
    relax = tvm().relax
    replaced = {}
    for const in constants(mod):
        read = classify.Call.of(STAGE, values, const)
        if not read.ok:   # TVM cannot give it to numpy (its dtype): left as it is
            continue
        array = read.value
        if not array.any():
            continue
        replaced[key(const)] = relax.const(np.zeros_like(array))
    if not replaced:
        return None
    return rebuild(mod, replace_constants=replaced)

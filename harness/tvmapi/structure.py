"""Structural identity of IR: hashes, equality, the first mismatch, identity maps.

Structural equality lives in `tvm_ffi` (not `tvm.ir`) on every supported release.
"""
from __future__ import annotations

import functools

from harness.tvmapi.copiers import save_json
from harness.tvmapi.loading import ffi, tvm


def structural_hash(obj, map_free_vars: bool = False, skip_tensor_content: bool = False) -> int:
    """`skip_tensor_content`: a tensor's shape and dtype only, not its bytes (every release's
    tvm_ffi has it): the per-pass guard hashes weights apart, once each."""
    return ffi().structural_hash(obj, map_free_vars=map_free_vars,
                                 skip_tensor_content=skip_tensor_content)


def holds_address_hashed(mod, copy) -> bool:
    """`mod` holds an object its structural hash takes by address (a free buffer or var):
    a structurally equal `copy` hashes otherwise, as a whole or in one of its TIR
    functions hashed alone (a function referring to a buffer another function defines:
    the module hashes it by position while that function is there). Relax functions are
    not hashed alone: their GlobalVars are free there by design."""
    if structural_hash(mod) != structural_hash(copy):
        return True
    from harness.tvmapi.loading import tvm
    prim_func = tvm().tirx.PrimFunc if hasattr(tvm(), "tirx") else tvm().tir.PrimFunc
    return any(structural_hash(func) != structural_hash(copy[gv.name_hint])
               for gv, func in mod.functions.items() if isinstance(func, prim_func))


def structural_equal(a, b, map_free_vars: bool = False) -> bool:
    return bool(ffi().structural_equal(a, b, map_free_vars))


def first_pass_apart(one: list, other: list) -> str | None:
    """The pass that makes two runs over equal inputs part (lists of (pass name, input,
    output), calls.pass_applications): the first application whose inputs agree and whose
    outputs do not, when the runs part for which objects they are and not for what the
    inputs carry. Free variables are matched (each input has its own). None when the runs
    agree throughout, or part where no pass runs (an input differing first: code between
    passes, or before them)."""
    for (name, before, after), (other_name, other_before, other_after) in zip(
            one, other, strict=False):
        if name != other_name or not structural_equal(before, other_before, True):
            return None
        if not structural_equal(after, other_after, True):
            return name
    return None


def first_mismatch(a, b, map_free_vars: bool = False) -> str | None:
    """Access path (as text) of the first structural difference, or None."""
    found = ffi().get_first_structural_mismatch(a, b, map_free_vars)
    if found is None:
        return None
    return str(found[0])


# A pass instrument's callback sees a module the pass alone holds with this many
# references: the caller's and the callback argument's (measured on 0.25, 0.26, 0.27).
USE_COUNT_IN_CALLBACK = 2


@functools.cache
def _use_count():
    return tvm().get_global_func("testing.object_use_count")


def use_count(obj) -> int:
    """How many references hold this TVM object (TVM's own testing.object_use_count)."""
    return int(_use_count()(obj))


def held_elsewhere(mod) -> bool:
    """Inside a pass instrument's callback: does anyone besides the pass hold `mod`? If not,
    an in-place change is invisible (copy-on-write semantics: `mod._move()` into a pass)."""
    return use_count(mod) > USE_COUNT_IN_CALLBACK


def module_identity(mod) -> tuple:
    """Which objects the module maps to, by identity: cheap (no IR walk), and it moves
    when a pass rebinds a function in place (`mod[gv] = f`), even to an equal function
    with another span, which structural hashing cannot see. Compare two with
    `identity_changes`, which tells a real rebinding from a no-op one.

    The module's function map and global infos map themselves, kept: held, an in-place
    update of either (`Add`, `Update`, `UpdateGlobalInfo` all go through copy-on-write)
    copies the map, and the module's field then points at another one. So comparing two
    identities is one handle per map; the functions are compared one by one only when
    their map moved."""
    attrs = getattr(mod, "attrs", None)
    return (mod.functions, attrs.__chandle__() if attrs is not None else None,
            getattr(mod, "global_infos", None))


def _by_handle(functions) -> dict:
    return {gv.__chandle__(): (gv, func) for gv, func in functions.items()}


def identity_changes(before: tuple, after: tuple) -> list[str]:
    """Names of the functions rebound in place to something else (JSON text differs).

    The module's attrs count when they are another object; its global infos when they are
    another map with other contents. Some TVM passes rebind a function to an identical
    copy (tirx.AnnotateEntryFunc's `mod->Update` re-adding an attribute the function
    already has): same text, same hash, nothing any holder could observe. Those are not
    mutations.
    """
    (map_before, attrs_before, infos_before) = before
    (map_after, attrs_after, infos_after) = after
    changed = []
    same_map = map_before.same_as(map_after)
    functions_before = {} if same_map else _by_handle(map_before)
    functions_after = {} if same_map else _by_handle(map_after)
    for handle in functions_before.keys() | functions_after.keys():
        old, new = functions_before.get(handle), functions_after.get(handle)
        if old is None or new is None:
            changed.append((old or new)[0].name_hint)
        elif old[1].__chandle__() != new[1].__chandle__() and \
                save_json(old[1]) != save_json(new[1]):
            changed.append(new[0].name_hint)
    if attrs_before != attrs_after:
        changed.append("(module attrs)")
    if infos_before is not None and infos_after is not None \
            and not infos_before.same_as(infos_after) \
            and structural_hash(infos_before) != structural_hash(infos_after):
        changed.append("(global infos)")
    return sorted(changed)


def functions_sharing_variables(mod) -> list[str]:
    """Names of the functions whose parameters are the very objects another function of the
    module also takes (a pass that cloned a PrimFunc without renewing its variables, as the
    Adreno backend's texture specialization does): one object in two functions, which a
    JSON graph keeps and a text cannot say."""
    owners: dict[int, str] = {}
    sharing: set[str] = set()
    for global_var, func in mod.functions_items():
        for param in getattr(func, "params", ()):
            other = owners.setdefault(param.__chandle__(), global_var.name_hint)
            if other != global_var.name_hint:
                sharing.update((other, global_var.name_hint))
    return sorted(sharing)


def equal_function_by_function(original, copy) -> bool:
    """The same functions by name, each structurally equal on its own (free variables
    mapped), and equal module attrs and global infos: the modules differ, if at all, only
    in which objects their functions share."""
    names = sorted(gv.name_hint for gv in original.get_global_vars())
    if names != sorted(gv.name_hint for gv in copy.get_global_vars()):
        return False
    return (all(first_mismatch(original[name], copy[name], map_free_vars=True) is None
                for name in names)
            and structural_equal(original.attrs, copy.attrs)
            and structural_equal(original.global_infos, copy.global_infos))

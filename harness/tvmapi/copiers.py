"""The ways a module is copied: deepcopy (TVM's is save_json + load_json), JSON, TVMScript."""
from __future__ import annotations

import concurrent.futures
import copy
import copyreg
import functools
import types

from harness.classify import Call
from harness.tvmapi import ir
from harness.tvmapi.loading import ffi, tvm


def save_json(obj) -> str:
    return tvm().ir.save_json(obj)


def load_json(text: str):
    return tvm().ir.load_json(text)


def deepcopy(obj):
    return copy.deepcopy(obj)


def deepcopy_from_text(obj, json_text: str):
    """The copy `deepcopy(obj)` makes, made from `json_text`, save_json's text of `obj`,
    instead of serializing `obj` a second time: a weight-heavy module's save is about half
    its deepcopy, and the guard has the text already (its fingerprint).

    Only where TVM's deepcopy is tvm_ffi's pickling protocol, as on every release
    supported: the state is `to_json_graph_str(obj, None)`, the same serializer's graph as
    save_json's without its metadata, which loading never reads, and the copy is
    `_new_object(cls)` given that state (tests/test_roundtrip_guard.py compares the two
    texts). Anything else, a `__deepcopy__` or `__reduce__` of the class's own, say: a
    real copy.deepcopy."""
    rebuild = _json_graph_pickling(type(obj))
    return deepcopy(obj) if rebuild is None else _rebuild_as_deepcopy(rebuild, json_text)


def _rebuild_as_deepcopy(new_object, json_text: str):
    """What copy.deepcopy does with tvm_ffi's reduction, given the state's text."""
    copied = new_object()
    copied.__setstate__({"handle": json_text})
    return copied


def _json_graph_pickling(cls):
    """A no-argument constructor of an empty `cls` when copy.deepcopy of a `cls` is
    tvm_ffi's JSON-graph pickling and nothing else; None otherwise."""
    core = getattr(ffi(), "core", None)
    ffi_object = getattr(core, "Object", None)
    new_object = getattr(core, "_new_object", None)
    if ffi_object is None or new_object is None or not issubclass(cls, ffi_object):
        return None
    if copyreg.dispatch_table.get(cls) is not None or getattr(cls, "__deepcopy__", None):
        return None
    if cls.__reduce_ex__ is not object.__reduce_ex__ or any(
            getattr(cls, name) is not getattr(ffi_object, name)
            for name in ("__reduce__", "__getstate__", "__setstate__")):
        return None
    return functools.partial(new_object, cls)


def tvmscript(mod) -> str:
    """The module as TVMScript that parses back (`show_meta` carries the constants)."""
    return mod.script(show_meta=True)


_parser_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tvmscript")


def parse_tvmscript(text: str):
    """`tvm.script.from_source(text)`, on a thread of its own: the parser keeps the stack it
    was called from (`inspect.stack()` in `I.ir_module`, freed only by the cycle collector),
    and from a pass instrument that stack holds the pass's input, which a copy-on-write
    pass would then copy instead of changing in place (the suite guard must not). The
    names the text is parsed with are TVM's own but for the decorators' stack capture
    (`_parse_namespace`)."""
    return _parser_thread.submit(tvm().script.from_source, text,
                                 extra_vars=_parse_namespace()).result()


# The dialect decorators that capture their caller's stack when called with options
# (`@T.prim_func(private=True)`, `@R.function(pure=False)`, `@I.ir_module(...)`).
_STACK_CAPTURING_DECORATORS = ("prim_func", "function", "ir_module")
_namespace: dict | None = None


def _parse_namespace() -> dict | None:
    """The parser's default names (T, R, I, ...) with each dialect's decorator answering
    option calls without `inspect.stack()`. Parsing printed text, the parser calls a
    function's decorator only to read its dispatch token (purity and privacy it reads from
    the syntax tree), yet the real decorator first captures the whole calling stack with
    source context: half of a parse (57 of 109 ms for a module of six private PrimFuncs;
    about 80 ms a module under pytest's deeper stack). The module parsed is the same
    (tests/test_roundtrip_guard.py). None, TVM's own defaults, where a TVM release lacks
    the private `_default_globals`."""
    global _namespace
    if _namespace is None:
        entry = _parser_entry()
        if entry is None or not hasattr(entry, "_default_globals"):
            return None
        proxies: dict[int, types.ModuleType] = {}
        namespace = dict(entry._default_globals())
        for name, value in namespace.items():
            if isinstance(value, types.ModuleType):
                if id(value) not in proxies:
                    proxies[id(value)] = _with_token_only_decorators(value)
                namespace[name] = proxies[id(value)]
        _namespace = namespace
    return _namespace


def _parser_entry():
    try:
        import tvm.script.parser.core.entry as entry
    except ImportError:
        return None
    return entry


def _with_token_only_decorators(module: types.ModuleType) -> types.ModuleType:
    """A copy of a dialect module whose stack-capturing decorators skip the capture when
    called with options only; applied to a function they are the real ones."""
    proxy = types.ModuleType(module.__name__, module.__doc__)
    proxy.__dict__.update(vars(module))
    for name in _STACK_CAPTURING_DECORATORS:
        decorator = getattr(module, name, None)
        if decorator is not None and hasattr(decorator, "dispatch_token"):
            setattr(proxy, name, _token_only(decorator))
    return proxy


def _token_only(decorator):
    token = decorator.dispatch_token

    @functools.wraps(decorator)
    def options_only(*args, **options):
        if args:   # applied to a function or class: the real decorator
            return decorator(*args, **options)

        def apply(function):
            return decorator(**options)(function)
        apply.dispatch_token = token
        return apply
    options_only.dispatch_token = token
    return options_only


class CopierUnsupported(Exception):
    """This copier cannot carry this module (a construct TVMScript cannot print)."""


class CopierUnparsable(CopierUnsupported):
    """TVMScript printed the module as text its own parser refuses: the printer and the
    parser disagree, invariant 2 failing (a lossy round trip), not a limit of the copier."""


def tvmscript_copy(mod):
    """Print to TVMScript and parse back, the tensor constants bound outside the text.

    The copier's job is the IR text; the constants' bytes are JSON's (show_meta prints
    them as a JSON metadata section, most of a weight-heavy model's copy time: docs'
    benchmarks). Each relax function's non-scalar tensor constants become extra
    parameters (`_harness_constant_N`) before printing and are bound back, the same
    objects, after parsing (Function.bind_params); scalars and other literals (a dtype)
    stay in the text, where the printer writes them inline. A copy that then differs
    from the original is checked again by `tvmscript_copy_with_meta`
    (`tvmscript_copy.confirm`), the whole module printed, so a difference is reported
    only as plain TVMScript shows it."""
    lifted, constants = lift_constants(mod)
    if not constants:   # none, or a function not normalized yet (lifting would normalize it)
        return tvmscript_copy_with_meta(mod)
    try:
        parsed = _printed_and_parsed(lifted, show_meta=False)
    except CopierUnparsable:
        # A tensor the lifting does not reach (a frontend's weights in a function's
        # "params" attribute: TFLite's, from_fx's keep_params) is printed as
        # metadata[...], which text without its metadata section cannot define: the
        # whole module printed with it decides whether TVMScript round-trips.
        return tvmscript_copy_with_meta(mod)
    return _bind_constants(parsed, constants)


def lift_constants(mod):
    """(mod with each relax function's non-scalar tensor constants as trailing parameters,
    {function name: {parameter name: the Constant}}); (mod, {}) when a function is not
    normalized yet. A mutator normalizes what it visits, in place (the types of hand-built
    expressions): it runs only over functions a read-only walk found normalized and
    holding a tensor constant, so the copier never edits the module it copies."""
    relax = tvm().relax
    needs_lifting = []
    for global_var, func in mod.functions_items():
        if isinstance(func, relax.Function):
            has_constant, normalized = _scan(func)
            if not normalized:
                return mod, {}
            if has_constant:
                needs_lifting.append((global_var, func))
    if not needs_lifting:
        return mod, {}
    from tvm.relax.expr_functor import PyExprMutator, mutator

    @mutator
    class Lift(PyExprMutator):
        def __init__(self):
            super().__init__()
            self.found = {}       # id of a Constant -> its parameter (shared uses: one)
            self.params, self.by_name = [], {}

        def visit_constant_(self, op):
            tensor = ir.constant_tensor(op)   # None: a dtype or other literal, printed inline
            if tensor is None or len(tensor.shape) == 0:
                return op
            key = op.__hash__()
            if key not in self.found:
                name = f"_harness_constant_{len(self.params)}"
                var = relax.Var(name, ir.expr_type(op))
                self.found[key], self.by_name[name] = var, op
                self.params.append(var)
            return self.found[key]

        visit_generic_const_ = visit_constant_   # 0.27's name: relax.Constant is GenericConst

    out, constants = mod, {}
    for global_var, func in needs_lifting:
        lift = Lift()
        body = lift.visit_expr(func.body)
        if not lift.params:
            continue
        out = ir.with_function(out, global_var, relax.Function(
            list(func.params) + lift.params, body, ir.return_type(func), func.is_pure,
            func.attrs, func.span))
        constants[global_var.name_hint] = lift.by_name
    return out, constants


def _scan(func) -> tuple[bool, bool]:
    """(has a non-scalar tensor constant, every expression has its type), read only."""
    found = {"constant": False, "untyped": False}
    untyped_by_design = (tvm().ir.Op, tvm().ir.GlobalVar)   # an operator, a callee

    def visit(expr):
        if isinstance(expr, untyped_by_design):
            return
        if not ir.has_type(expr):
            found["untyped"] = True
        else:
            tensor = ir.tensor_of(expr)
            found["constant"] = found["constant"] or (tensor is not None
                                                      and len(tensor.shape) > 0)
    tvm().relax.analysis.post_order_visit(func.body, visit)
    for param in func.params:
        visit(param)
    return found["constant"], not found["untyped"]


def _bind_constants(mod, constants: dict):
    for global_var, func in mod.functions_items():
        by_name = constants.get(global_var.name_hint)
        if by_name:
            mod = ir.with_function(mod, global_var, func.bind_params(
                {param: by_name[ir.var_name(param)] for param in func.params
                 if ir.var_name(param) in by_name}))
    return mod


def tvmscript_copy_with_meta(mod):
    """Print the whole module to TVMScript (constants in its JSON metadata section: without
    show_meta they are not printed at all and the text does not parse) and parse it."""
    return _printed_and_parsed(mod, show_meta=True)


def _printed_and_parsed(mod, show_meta: bool):
    """`mod` printed to TVMScript and parsed back; CopierUnsupported where TVM refuses
    either (an exception of ours leaves as a HarnessBug: never "unsupported"). The stage
    is the caller's: "" leaves it to the copy's own classified call."""
    printed = Call.of("", mod.script, show_meta=show_meta)
    if not printed.ok:
        raise CopierUnsupported(f"TVMScript cannot print it: {printed.detail[:300]}") \
            from printed.error
    parsed = Call.of("", parse_tvmscript, printed.value)
    if not parsed.ok:
        reason = f"TVMScript cannot parse its own text: {parsed.detail[:300]}"
        if _WELL_FORMED_REFUSAL in str(parsed.error):
            checked = Call.of("", ir.module_well_formed, mod)   # TVM failing it: not blamed
            if not (checked.ok and checked.value):
                # the parser checks well-formedness, and the module is not (a pass run out
                # of its phase): no text carries a variable used outside its scope
                raise CopierUnsupported(f"{reason} (the module itself is not well-formed)") \
                    from parsed.error
        raise CopierUnparsable(reason) from parsed.error
    return parsed.value


# The words of the parser's own well-formedness check (tvm/script/parser/core/entry.py).
_WELL_FORMED_REFUSAL = "Program is not well-formed"

tvmscript_copy.confirm = tvmscript_copy_with_meta

"""Seeded violations: passes and copiers that break an invariant on purpose.

They prove each guard bites. Loaded by the tests and, through --inject-pass
tests/seeded.py:NAME, by the CLI in a child process.
"""
from __future__ import annotations

import json
import os
import signal
import time

import tvm


def mutate_in_place(mod):
    """Rebind `main` inside the module it was handed: every holder sees the change."""
    gv = mod.get_global_var("main")
    mod[gv] = mod[gv].with_attr("harness_seeded", "mutated")
    return mod


def fresh_module(mod):
    """The same rewrite, done right: a new module, the input left alone."""
    out = tvm.ir.IRModule(dict(mod.functions.items()), attrs=mod.attrs)
    gv = out.get_global_var("main")
    out[gv] = out[gv].with_attr("harness_seeded", "fresh")
    return out


@tvm.transform.module_pass(opt_level=0, name="SeededMutatingPass")
def mutating_pass(mod, _ctx):
    """The same mutation as a tvm.transform.Pass object."""
    return mutate_in_place(mod)


def abort(mod):
    os.abort()


def killed(mod):
    """What the kernel's out-of-memory killer does to a process: SIGKILL, no last word."""
    os.kill(os.getpid(), signal.SIGKILL)


def hang(mod):
    time.sleep(3600)
    return mod


def _edit_json(mod, edit):
    graph = json.loads(tvm.ir.save_json(mod))
    edit(graph)
    return tvm.ir.load_json(json.dumps(graph))


def drop_field(type_key: str, field: str):
    """A JSON copier that loses `field` of every `type_key` node (the seed bug's shape)."""
    def copier(mod):
        def edit(graph):
            for node in graph["nodes"]:
                if node["type"] == type_key:
                    node["data"].pop(field, None)
        return _edit_json(mod, edit)
    return copier


def change_string_field(type_key: str, field: str, value: str):
    """A JSON copier that rewrites a string field of every `type_key` node."""
    def copier(mod):
        def edit(graph):
            graph["nodes"].append({"type": "ffi.String", "data": value})
            for node in graph["nodes"]:
                if node["type"] == type_key:
                    node["data"][field] = len(graph["nodes"]) - 1
        return _edit_json(mod, edit)
    return copier


# A mutator hidden inside a pipeline: its input is an intermediate module that
# no stage-level fingerprint ever sees. Only a per-pass guard can name it.
hidden_mutator = tvm.transform.Sequential(
    [tvm.relax.transform.Normalize(), mutating_pass, tvm.relax.transform.Normalize()],
    name="SeededPipeline")


@tvm.transform.module_pass(opt_level=0, name="SeededMutatesThenNests")
def mutates_then_nests(mod, _ctx):
    """Mutates its input in its own body, then runs a nested pass (as SplitHostDevice's
    `mod->Update` before its ConvertSSA): the nested pass ends first, but did nothing."""
    gv = mod.get_global_var("main")
    mod[gv] = mod[gv].with_attr("harness_seeded", "mutated, then nested")
    return tvm.relax.transform.Normalize()(mod)


# Two mutators in one stage: the first must not hide the second (a registered bug early in
# tvm.compile hid a new one after it).
two_mutators = tvm.transform.Sequential([mutating_pass, mutates_then_nests],
                                        name="SeededTwoMutators")


def respan_in_place(mod):
    """Rebind `main` to the same function with another span: the structural hash does
    not move (spans are outside structural equality), the JSON text does."""
    gv = mod.get_global_var("main")
    func = mod[gv]
    span = tvm.ir.Span(tvm.ir.SourceName("harness-seeded"), 1, 1, 1, 1)
    mod[gv] = tvm.relax.Function(func.params, func.body, func.ret_ty, func.is_pure,
                                 func.attrs, span)
    return mod


@tvm.transform.module_pass(opt_level=0, name="SeededSpanPass")
def span_pass(mod, _ctx):
    return respan_in_place(mod)


def respan_a_call_through_its_field(mod):
    """Writes another span into a call deep inside `main`, through tvm_ffi's field setter
    (what a C++ pass does through a const_cast): no function rebound, so no identity map
    moves; spans are outside structural equality, so no hash moves; only the JSON text
    does. The source's JSON text compared at the end of the path alone sees it."""
    call = next(binding.value for block in mod["main"].body.blocks
                for binding in block.bindings if isinstance(binding.value, tvm.relax.Call))
    setter = next(vars(klass)["span"] for klass in type(call).__mro__
                  if "span" in vars(klass))
    setter.set(call, tvm.ir.Span(tvm.ir.SourceName("harness-seeded"), 7, 7, 1, 1))
    return mod


@tvm.transform.module_pass(opt_level=0, name="SeededDeepSpanPass")
def deep_span_pass(mod, _ctx):
    return respan_a_call_through_its_field(mod)


def global_info_in_place(mod):
    """Adds a global info to the module it was handed: no function is rebound (identity
    maps see nothing), only the structural hash of the pass's input moves."""
    vdevice = tvm.relax.VDevice(tvm.target.Target("llvm"), 0, "global")
    mod.update_global_info("harness_seeded", [vdevice])
    return mod


@tvm.transform.module_pass(opt_level=0, name="SeededGlobalInfoPass")
def global_info_pass(mod, _ctx):
    return global_info_in_place(mod)


# Hidden in a pipeline: its input is an intermediate module, so no stage-level fingerprint
# and no identity map sees the edit; the per-pass hash of each pass's input alone does.
hidden_global_info = tvm.transform.Sequential(
    [tvm.relax.transform.Normalize(), global_info_pass, tvm.relax.transform.Normalize()],
    name="SeededGlobalInfoPipeline")


def write_a_weight_in_place(mod):
    """Writes new bytes into a weight of the module it was handed, through the tensor: no
    function rebound, no copy-on-write; every module sharing that constant (the pass's
    output, the source) changes with it. Only a deep hash sees it."""
    tensor_type = getattr(tvm.runtime, "Tensor", None) or tvm.runtime.NDArray

    def weights(expr):   # a call's arguments, and the fields of tuples among them
        payload = getattr(expr, "value", getattr(expr, "data", None))
        if isinstance(payload, tensor_type):
            yield payload
        for inner in list(getattr(expr, "args", [])) + list(getattr(expr, "fields", [])):
            yield from weights(inner)

    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            for weight in weights(binding.value):
                weight.copyfrom(weight.numpy() + 1)
                return mod
    raise AssertionError("seeded: no weight to write in this module")


@tvm.transform.module_pass(opt_level=0, name="SeededWeightWritePass")
def weight_write_pass(mod, _ctx):
    return write_a_weight_in_place(mod)


@tvm.transform.module_pass(opt_level=0, name="SeededFreshCopyPass")
def fresh_copy_pass(mod, _ctx):
    """Hands on a copy sharing nothing with its input (every constant new)."""
    return tvm.ir.load_json(tvm.ir.save_json(mod))


# A weight written in place inside a pipeline, in a copy no stage fingerprint sees: only
# the deep check of what the passes were handed sees it, and its replay names the pass.
hidden_weight_write = tvm.transform.Sequential(
    [tvm.relax.transform.Normalize(), fresh_copy_pass, weight_write_pass,
     tvm.relax.transform.Normalize()], name="SeededWeightPipeline")


# Two pipelines of one name handed one input: the per-pass guard takes the second for a
# repeat of the first (it watches a repeat's passes by identity only) until a name differs;
# from there on it hashes as usual, so the weight write inside the second is still seen.
twin_pipelines = tvm.transform.Sequential(
    [tvm.transform.Sequential([tvm.relax.transform.Normalize()], name="SeededTwin"),
     tvm.transform.Sequential([tvm.relax.transform.Normalize(), fresh_copy_pass,
                               weight_write_pass], name="SeededTwin")],
    name="SeededTwinPipelines")


def raise_value_error(mod):
    """A pass that fails as TVM passes do (an exception, not a crash)."""
    raise ValueError("seeded failure inside a pass")


def drop_a_primfunc(mod):
    """A copier whose copy lacks one PrimFunc: extracting tasks from it raises, as the
    seed's copy did ("cannot find field axis" surfaced while optimizing the copy)."""
    copy = tvm.ir.load_json(tvm.ir.save_json(mod))
    victims = [gv for gv, func in copy.functions.items()
               if func.__tvm_ffi_type_info__.type_key.endswith(".PrimFunc")]
    if not victims:
        return copy
    kept = {gv: func for gv, func in copy.functions.items() if not gv.same_as(victims[0])}
    return tvm.ir.IRModule(kept, attrs=copy.attrs)


def respan_copy(mod):
    """A JSON copy that differs from the original only in a span: structurally equal, every
    attrs field equal; only the total JSON comparison can see it."""
    return respan_in_place(tvm.ir.load_json(tvm.ir.save_json(mod)))


def faulty_tvmscript(mod):
    """A TVMScript printer that flips a conv's data_layout in the text: the JSON copiers stay
    right, only the third copier goes through it."""
    text = mod.script(show_meta=True).replace('data_layout="NCHW"', 'data_layout="NHWC"', 1)
    return tvm.script.from_source(text)


def fail_on_softmax_of_matmul(mod):
    """Raises when `main` holds a softmax of a matmul's result, wherever it sits: a fault
    in a module with no ONNX graph behind it, which only the Relax-level reducer shrinks
    (tests/test_relax_reduce.py)."""
    made_by = {}
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            value = binding.value
            op = getattr(getattr(value, "op", None), "name", None)
            made_by[binding.var.__hash__()] = op
            if op == "relax.nn.softmax" and \
                    made_by.get(value.args[0].__hash__()) == "relax.matmul":
                raise ValueError(f"seeded failure: softmax of a matmul ({binding.var.name})")
    return mod


def compile_by_address(compile_module):
    """`compile_module` whose code follows the module's object identity, as VMShapeLower's
    order does (docs/explanation/findings.md): the VM function takes its name from the address of
    `main`. A copy is structurally equal and its JSON text the same, so only compiling the
    copy and comparing what it compiles to sees it."""
    def compile_named_by_address(mod, target):
        main = mod["main"]
        named = main.with_attr("global_symbol", f"main_{main.__chandle__():x}")
        return compile_module(tvm.IRModule({**dict(mod.functions_items()),
                                            mod.get_global_var("main"): named},
                                           attrs=mod.attrs), target)
    return compile_named_by_address

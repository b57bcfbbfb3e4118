"""Every pass TVM registers, found by reflection: relax's and the TIR passes compile runs.

The list comes from the FFI registry (`relax.transform.*`, `tirx.transform.*`,
`s_tir.transform.*` global functions), never from a hand-written list of names,
so a pass added upstream is swept without editing this file. Each is built
through its Python wrapper with the wrapper's defaults; the few that need
arguments take them from ARGUMENTS; a pass that still cannot be built (it needs a
database, a pattern, a codegen, a function to differentiate) is listed as skipped
with the reason TVM gave.

TIR has many passes the CPU pipelines never run (GPU, Hexagon, profiling); the
sweep's default takes the TIR passes `tvm.compile` really runs, recorded by an
instrument on a one-conv compile (`pipeline_pass_names`), so the selection
follows TVM's pipelines as they change. `--pass` reaches every registered one.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable

from harness import classify
from harness.options import LAYOUTS
from harness.tvmapi import calls, inject, ir, loading, targets, tir_phase
from harness.verdict import BadInput, first_line

RELAX = "relax.transform"
# TIR namespaces, newest first (0.25 has tir.transform; later trees split it).
TIR = ("tirx.transform", "s_tir.transform", "tir.transform")
# Arguments for passes whose wrapper has no defaults: the sweep's one table.
ARGUMENTS: dict[str, tuple] = {
    "ConvertLayout": (LAYOUTS["nhwc"],),   # the catalog's own NHWC rewrite
    "BindParams": ("main", {}),
    "BindSymbolicVars": ({},),
    "AlterOpImpl": ({}, {}),
}
# Where each pass is run: on the module held at a point of the extract path, and on the
# input tvm.compile itself hands it (`compiled`, tvmapi.compile_prefix; for the passes on
# its pipeline only).
COMPILED = "compiled"
POINTS = ("imported", "legalized", "fused", COMPILED)
# TIR passes see PrimFuncs, which appear at legalization: as imported there are none.
TIR_POINTS = ("legalized", "fused")


@dataclasses.dataclass(frozen=True)
class RegisteredPass:
    name: str                      # relax: FoldConstant; TIR: namespace.constructor
    make: Callable[[], Any] | None  # builds the Pass; None when skipped
    call: str                      # the constructor as a Python expression (reproducers)
    skipped: str = ""              # why it cannot run in the sweep
    tir: bool = False
    # What pipelines and instruments call it: usually `name`, but not always
    # (tirx.ForceNarrowIndexToInt32() builds a pass named tirx.NarrowDataType).
    info_name: str = ""

    def on(self, pipeline: frozenset[str]) -> bool:
        return (self.info_name or self.name) in pipeline

    @property
    def points(self) -> tuple[str, ...]:
        """The extract path's points (TIR passes from legalized on)."""
        return TIR_POINTS if self.tir else POINTS[:3]

    def points_on(self, pipeline: frozenset[str]) -> tuple[str, ...]:
        """Its points, and `compiled` when tvm.compile runs it."""
        return self.points + ((COMPILED,) if self.on(pipeline) else ())


def _build(name: str, wrapper, args: tuple, call: str, tir: bool) -> RegisteredPass:
    tvm = loading.tvm()
    if wrapper is None:
        return RegisteredPass(name, None, call, "no Python wrapper", tir)
    try:   # a constructor that wants arguments says so without being called
        inspect.signature(wrapper).bind(*args)
    except TypeError as exc:
        return RegisteredPass(name, None, call, f"needs arguments: {first_line(exc)[:200]}",
                              tir)
    except ValueError:   # no signature to read (a builtin): the call below answers
        pass
    construction = classify.Call.of(f"pass:{name}", wrapper, *args)   # ours: a HarnessBug
    if not construction.ok:   # TVM's reason is the report
        return RegisteredPass(name, None, call,
                              f"needs arguments: {construction.detail[:200]}", tir)
    built = construction.value
    if not isinstance(built, tvm.transform.Pass):
        return RegisteredPass(name, None, call,
                              f"not a pass constructor (returns {type(built).__name__})", tir)
    return RegisteredPass(name, lambda: wrapper(*args), call, "", tir, str(built.info.name))


def _python_module(namespace: str):
    """tvm.tirx.transform for "tirx.transform" (None when this TVM has no such module)."""
    module = loading.tvm()
    for part in namespace.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


@functools.cache
def registered() -> tuple[RegisteredPass, ...]:
    names = loading.ffi().registry.list_global_func_names()
    found = []
    for namespace in (RELAX, *TIR):
        module = _python_module(namespace)
        if module is None:
            continue
        tir = namespace != RELAX
        prefix = namespace + "."
        for short in sorted(n[len(prefix):] for n in names
                            if n.startswith(prefix) and "." not in n[len(prefix):]):
            args = ARGUMENTS.get(short, ()) if not tir else ()
            if tir:
                name = f"{namespace.split('.')[0]}.{short}"
                call = f"tvm.{namespace}.{short}()"
            else:
                name = short
                call = f"relax.transform.{short}({', '.join(repr(a) for a in args)})"
            found.append(_build(name, getattr(module, short, None), args, call, tir))
    return tuple(found)


class PipelineUnknown(Exception):
    """TVM could not compile the one-conv module that records its pipeline's passes."""


@functools.cache
def compile_phases(target: str = "llvm") -> dict[str, frozenset[str]]:
    """Each pass `tvm.compile` runs on a one-conv module (about 0.1 s), with the facts
    (tvmapi.tir_phase) true of the input it is first given there: what the passes before
    it made true, which an input outside the pipeline may lack.

    A target TVM cannot make is the user's error (BadInput); a compile that fails
    is TVM's (PipelineUnknown): either way no default selection can be made."""
    made_target = targets.make_target(target, 1)   # BadInput with TVM's reason
    targets.require_codegen(made_target)   # no code generator here: cannot test (exit 125)
    tvm = loading.tvm()
    relax, op = tvm.relax, ir.relax_op()
    builder = ir.block_builder()
    data = relax.Var("data", ir.tensor_annotation((1, 3, 8, 8), "float32"))
    weight = relax.Var("weight", ir.tensor_annotation((4, 3, 3, 3), "float32"))
    with builder.function("main", [data, weight]):
        with builder.dataflow():
            out = builder.emit_output(builder.emit(op.nn.relu(op.nn.conv2d(data, weight))))
        builder.emit_func_output(out)
    seen: dict[str, frozenset[str]] = {}

    def record(mod, info):
        if str(info.name) not in seen:
            seen[str(info.name)] = tir_phase.facts(mod)

    def compile_one_conv():
        recorder = calls.pass_instrument("Recorder", record)
        with calls.pass_context([recorder]):
            calls.compile_module(builder.get(), made_target)

    compiled = classify.Call.of("compile", compile_one_conv)   # ours leaves as a HarnessBug
    if not compiled.ok:
        raise PipelineUnknown(
            f"tvm.compile failed on a one-conv module for target {target!r}, so the TIR "
            f"passes it runs are unknown: {compiled.detail[:300]}; name passes with "
            "--pass GLOB instead") from compiled.error
    return seen


def pipeline_pass_names(target: str = "llvm") -> frozenset[str]:
    """The names of the passes `tvm.compile` runs on a one-conv module."""
    return frozenset(compile_phases(target))


def default_selection(target: str = "llvm") -> list[RegisteredPass]:
    """Every relax pass, and the TIR passes compile runs for `target`."""
    on_pipeline = pipeline_pass_names(target)
    return [p for p in registered() if not p.tir or p.on(on_pipeline)]


def lookup(name: str) -> RegisteredPass:
    for registered_pass in registered():
        if registered_pass.name == name:
            return registered_pass
    raise KeyError(name)


def for_sweep(name: str, register: str | None = None) -> RegisteredPass:
    """The pass the sweep's `pass` path runs: looked up here, where passes are known,
    after loading the user's `--register` file (which may register more)."""
    if register:
        inject.load_module(register, flag="--register")
        registered.cache_clear()
    try:
        swept = lookup(name)
    except KeyError:
        raise BadInput(f"no pass {name!r} is registered (relax passes by "
                       "short name, TIR passes as tirx.NAME / s_tir.NAME)") from None
    if swept.make is None:
        raise BadInput(f"{swept.name} cannot run in the sweep: {swept.skipped}")
    return swept

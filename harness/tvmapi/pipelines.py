"""The paths TVM users take, as lists of named stages, each one real TVM call.

- `extract`: the front of `relax.pipeline.static_shape_tuning_pipeline` up to the
  point where meta_schedule extracts tuning tasks (the seed bug's path).
- `tune`: `static_shape_tuning_pipeline` itself (TVM's definition, not a copy) with
  a small budget, with or without `cpu_weight_prepack` (the layout-rewrite passes).
- `compile`: `tvm.compile` to a VM executable (the seed's fallback after optimize), for a
  GPU target through that target's own pipeline (dlight's schedules); a target that cannot
  compile here (targets.probe: no code generator or toolchain) cannot be tested (exit 125).
- `pass`: one registered relax or TIR pass (`sweep_pass`) on the module the extract path holds at
  `sweep_point` (imported, legalized, fused; after ConvertLayout for a case with a layout):
  the pass sweep's unit of work; for a GPU target run inside the target, as compile runs it.

Every stage takes the module the path holds and returns the next one; the final
stage returns the path's outcome (tasks, tuned workloads, an executable), which
`summarize` turns into comparable signatures. The standalone reproducer is
generated from these same definitions (`describe`).
"""
from __future__ import annotations

import dataclasses
import shutil
import tempfile
from typing import Any, Callable

from harness.options import LAYOUTS, PATH_NAMES, Options
from harness.tvmapi import calls, compile_prefix, inject, loading, passes, structure, targets
from harness.verdict import BadInput

EXTRACT = "extract-tasks"
TUNE = "tune"
COMPILE = "compile"
INJECTED = inject.INJECTED
@dataclasses.dataclass
class Stage:
    name: str
    run: Callable[[Any], Any]
    call: str = ""       # the TVM call as a Python expression over `mod` (the reproducer's)


@dataclasses.dataclass
class Pipeline:
    name: str
    stages: list[Stage]
    summarize: Callable[[Any], list]   # the final outcome -> comparable signatures
    run_twice: bool = False            # also run the final stage again on the same input
    # The pass sweep: round-trip the final stage's output (and check its input's JSON)
    # rather than the source, which is the same for every pass of a case (`check` has it).
    round_trip_output: bool = False
    # Why this path cannot test a module ("" when it can): a precondition TVM documents
    refusal: Callable[[Any], str] = lambda mod: ""
    target: Any = None                 # the Target it compiles for (set by `build`)

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    def names(self) -> list[str]:
        return [stage.name for stage in self.stages]


def _pass_stage(name: str, make_pass: Callable[[], Any], call: str) -> Stage:
    return Stage(name, lambda mod: calls.run_pass(make_pass(), mod), f"{call}(mod)")


def transform_stage(name: str, transform: str, *args) -> Stage:
    """A stage running `relax.transform.TRANSFORM(*args)`: its run and the text its
    reproducer runs come from this one definition (tests/test_paths.py runs both)."""
    call = f"relax.transform.{transform}({', '.join(map(repr, args))})"
    return _pass_stage(name, lambda: calls.relax_transform(transform, *args), call)


def _zero_pipeline_stage() -> Stage:
    return _pass_stage("zero-pipeline", calls.zero_pipeline, 'relax.get_pipeline("zero")')


def _front(options: Options) -> list[Stage]:
    if options.layout not in LAYOUTS:
        raise BadInput(f"--layout must be one of {', '.join(LAYOUTS)}, got {options.layout!r}")
    desired = options.desired_layouts or LAYOUTS[options.layout]
    if not desired:
        return []
    return [transform_stage("convert-layout", "ConvertLayout", desired)]


def _extract_path(options: Options, target) -> Pipeline:
    stages = _front(options) + [
        transform_stage("decompose-ops-for-inference", "DecomposeOpsForInference"),
        transform_stage("canonicalize-bindings", "CanonicalizeBindings"),
        _zero_pipeline_stage(),
        transform_stage("attach-attr-layout-free-buffers", "AttachAttrLayoutFreeBuffers"),
        Stage(EXTRACT, lambda mod: calls.extract_tasks(mod, target),
              "list(meta_schedule().relax_integration.extract_tasks(mod, TARGET))"),
    ]
    return Pipeline("extract", stages, calls.task_signatures)


@dataclasses.dataclass
class Tuned:
    module: Any
    workloads: list


def _tune(options: Options, target):
    """The tuning pipeline into a fresh work_dir per run (so a copy's run is its own)."""
    def run(mod):
        work_dir = tempfile.mkdtemp(prefix="harness-tune-")
        try:
            tuned = calls.run_pass(calls.static_shape_tuning_pipeline(
                options.trials, target, work_dir, options.prepack, max_trials_per_task=1), mod)
            return Tuned(tuned, calls.tuned_workloads(work_dir))
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
    return run


def _tune_path(options: Options, target) -> Pipeline:
    missing = calls.tune_dependencies_missing()
    if missing:
        raise loading.TVMUnavailable(f"--path tune needs {missing} (meta_schedule's tuner; "
                                    "apache-tvm does not declare them): pip install -e '.[tune]'")
    call = (f"relax.pipeline.static_shape_tuning_pipeline(total_trials={options.trials}, "
            f"target=TARGET, work_dir=tempfile.mkdtemp(), cpu_weight_prepack={options.prepack}, "
            "max_trials_per_task=1)(mod)")
    stages = _front(options) + [Stage(TUNE, _tune(options, target), call)]
    return Pipeline("tune", stages, lambda tuned: sorted(tuned.workloads),
                    refusal=_static_shapes_only)


def runs_here(pipeline: Pipeline) -> bool:
    """Its outcome is an executable this machine's CPU runs (the compile path for llvm)."""
    return pipeline.name == "compile" and pipeline.target is not None and \
        pipeline.target.kind.name == "llvm"


def _static_shapes_only(mod) -> str:
    """static_shape_tuning_pipeline tunes "the static shape model" (its docstring): on a
    module with symbolic dimensions its tuner fails inside (measured on nn-mlp, 0.27:
    `Check failed: (old_rv != nullptr && new_rv != nullptr)`), which is not a finding."""
    dims = calls.symbolic_dims(mod)
    return (f"static_shape_tuning_pipeline tunes static-shape models; this module has "
            f"symbolic dimensions ({', '.join(dims)})") if dims else ""


def _compile_path(options: Options, target) -> Pipeline:
    stages = _front(options) + [
        Stage(COMPILE, lambda mod: calls.compile_module(mod, target),
              "tvm.compile(mod, target=TARGET)")]
    return Pipeline("compile", stages, calls.executable_signature)


def _sweep_path(options: Options, target) -> Pipeline:
    """One pass on the module held at one point of the extract path; its outcome is the
    output module's structural hash, and it runs on two fresh copies too (determinism)."""
    swept = passes.for_sweep(options.sweep_pass or "", options.sweep_register)
    # A case with a layout (-nhwc) starts, as its extract path does, with ConvertLayout:
    # every point is then on the converted module (the layout pass's output, the seed
    # bug's ground); a case ConvertLayout fails on cannot reach any point (skipped).
    front = _front(options)
    prefixes = {
        "imported": front,
        "legalized": front + [transform_stage("legalize-ops", "LegalizeOps")],
        "fused": front + [_zero_pipeline_stage()],
        # as tvm.compile hands it the pass: an input of the pass's own phase
        "compiled": front + [Stage(
            "compile-until", lambda mod: compile_prefix.compile_until(
                mod, target, swept.info_name or swept.name),
            f"compile_until(mod, TARGET, {swept.info_name or swept.name!r})")],
    }
    if options.sweep_point not in prefixes:
        raise BadInput(f"sweep point must be one of {', '.join(prefixes)}")
    stages = prefixes[options.sweep_point] + [
        _pass_stage(f"pass:{swept.name}", swept.make, swept.call)]
    if targets.schedules_for_device(target):
        stages = [_under_target(stage, target) for stage in stages]
    # Free variables are hashed by position: a pass run out of its pipeline position can
    # leave one (s_tir.HoistExpression hoists a block iterator out of its block), and
    # a free variable is the input's own object, which no copy can share.
    return Pipeline("pass", stages,
                    lambda mod: [("module", structure.structural_hash(mod, map_free_vars=True))],
                    run_twice=True, round_trip_output=True)


def _under_target(stage: Stage, target) -> Stage:
    """The stage inside the target, as `tvm.compile` runs a GPU target's pipeline (dlight
    and the GPU passes read Target.current(); without it they refuse every module). Only
    for those targets: on llvm four passes behave differently inside `with Target("llvm")`
    (measured, 0.27), and the CPU sweep's rows stay what they were."""
    def run(mod):
        with target:
            return stage.run(mod)
    # An expression a reproducer runs: enter the target, the call, leave it.
    return Stage(stage.name, run, f"(TARGET.__enter__(), {stage.call}, "
                                  "TARGET.__exit__(None, None, None))[1]")


_PATHS = {"extract": _extract_path, "tune": _tune_path, "compile": _compile_path,
          "pass": _sweep_path}


def build(options: Options) -> Pipeline:
    """The stages of `options.path`, with the injected pass (if any) in place."""
    if options.path not in _PATHS:
        raise BadInput(f"--path must be one of {', '.join(PATH_NAMES)}, got {options.path!r}")
    if options.path == "pass" and options.inject_pass:
        raise BadInput("the pass sweep runs registered passes; --inject-pass does not apply")
    target = targets.make_target(options.target, options.num_cores)
    path = _PATHS[options.path](options, target)
    path.target = target
    if options.inject_pass:
        names = path.names()
        before = options.inject_before or path.final.name
        if before not in names:
            raise BadInput(f"--inject-before must name a stage of the {path.name} path "
                           f"({', '.join(names)}), got {before!r}")
        injected = inject.injected_pass(options.inject_pass)
        path.stages.insert(names.index(before), Stage(
            INJECTED, lambda mod: calls.run_pass(injected, mod),
            "INJECTED(mod)"))
    if path.name == "compile":   # after every bad input is refused (exit 2)
        targets.require_codegen(target)   # no code generator or toolchain here: exit 125
    return path

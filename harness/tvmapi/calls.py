"""The TVM calls the paths make: import, passes, extraction, tuning, compilation, and
what their outcomes are, comparably.

Passes are built by name (`relax_transform`), so a stage's call and the text its
reproducer runs come from one definition (pipelines.transform_stage).
meta_schedule lives at `tvm.s_tir.meta_schedule` (older trees: `tvm.meta_schedule`).
"""
from __future__ import annotations

import functools
import importlib
from typing import Callable

from harness.classify import Call
from harness.tvmapi.loading import meta_schedule, tvm
from harness.tvmapi.structure import structural_hash


def from_onnx(model, shape_dict: dict | None = None):
    from tvm.relax.frontend.onnx import from_onnx as _from_onnx
    tvm()
    return _from_onnx(model, shape_dict=shape_dict)


def from_exported_program(program):
    """torch.export's program -> IRModule (TVM's PyTorch frontend imports torch)."""
    tvm()
    from tvm.relax.frontend.torch import from_exported_program as _from_exported_program
    return _from_exported_program(program)


def from_fx_graphs(graphs: list):
    """torch.fx graphs -> one IRModule: `from_fx(graph, input_info)` each, as torch.compile's
    relax_dynamo backend calls it; the first is `main`, the others `graph_1`, ..."""
    tvm()
    from tvm.relax.frontend.torch import from_fx
    functions = {}
    for index, (graph, input_info) in enumerate(graphs):
        name = "main" if index == 0 else f"graph_{index}"
        functions[name] = from_fx(graph, input_info)["main"].with_attr("global_symbol", name)
    return tvm().IRModule(functions)


def from_tflite(flatbuffer: bytes):
    """A .tflite flatbuffer -> IRModule (TVM's TFLite frontend reads the `tflite` package's
    Model; 0.25-0.27 return the module alone)."""
    tvm()
    import tflite
    from tvm.relax.frontend.tflite import from_tflite as _from_tflite
    return _from_tflite(tflite.Model.GetRootAsModel(flatbuffer, 0))


def from_stablehlo(text: str):
    """StableHLO text (MLIR) -> IRModule."""
    tvm()
    from tvm.relax.frontend.stablehlo import from_stablehlo as _from_stablehlo
    return _from_stablehlo(text)


def relax_transform(name: str, *args):
    """`relax.transform.NAME(*args)`: every relax pass a stage runs, built by its name."""
    return getattr(tvm().relax.transform, name)(*args)


def zero_pipeline():
    return tvm().relax.get_pipeline("zero")


def extract_tasks(mod, target) -> list:
    return list(meta_schedule().relax_integration.extract_tasks(mod, target))


def task_signature(task) -> tuple:
    """(name, weight, hash of every dispatched function) of one extracted task."""
    return (str(task.task_name), int(task.weight),
            tuple(int(structural_hash(func)) for func in task.dispatched))


def task_signatures(tasks) -> list[tuple]:
    """The extract path's outcome: one signature per extracted task, sorted."""
    return sorted(task_signature(task) for task in tasks)


def is_pass(obj) -> bool:
    return isinstance(obj, tvm().transform.Pass)


def is_module(obj) -> bool:
    return isinstance(obj, tvm().IRModule)


def run_pass(pass_obj, mod):
    """Run a pass in the current PassContext (the runner's guarded one)."""
    return pass_obj(mod)


def pass_context(instruments=()):
    """The PassContext every stage runs in: opt_level 3 as the pipelines use, and the
    harness's instruments, which only record. Never TVM's `testing.immutable_module`
    check: it raises, FoldConstant's nested build swallows that and folds nothing, and
    the guarded run would no longer be the run users make (pass_guard.py)."""
    return tvm().transform.PassContext(opt_level=3, instruments=list(instruments))


def pass_instrument(name: str, before: Callable | None = None,
                    after: Callable | None = None):
    """A TVM PassInstrument named `name` that calls `before(mod, info)` before each pass
    and `after(mod, info)` after it."""
    return _instrument_class(name, before is not None, after is not None)(before, after)


@functools.cache
def _instrument_class(name: str, before: bool, after: bool):
    """One class per name for the process. TVM's decorator makes a new subclass of an ABC
    at each call, and each later issubclass walks every one made before: 0.45 ms a stage at
    first, 2.8 ms after 1,200 (a fuzz campaign makes thousands)."""
    def __init__(self, on_before, on_after):
        self.on_before, self.on_after = on_before, on_after

    methods: dict = {"__init__": __init__}
    if before:   # TVM calls only the methods a class defines
        methods["run_before_pass"] = lambda self, mod, info: self.on_before(mod, info)
    if after:
        methods["run_after_pass"] = lambda self, mod, info: self.on_after(mod, info)
    return tvm().ir.instrument.pass_instrument(type(name, (), methods))


def pass_applications(run) -> list[tuple[str, object, object]]:
    """(pass name, its input, its output) of every pass application `run()` makes, in the
    order they end, in a PassContext of their own whose one instrument only records."""
    applications: list[tuple[str, object, object]] = []
    inputs: list = []   # a stack: nested applications end before their parent

    def after(mod, info):
        applications.append((str(info.name), inputs.pop(), mod))
    with pass_context([pass_instrument("Record", lambda mod, info: inputs.append(mod),
                                       after)]):
        run()
    return applications


def static_shape_tuning_pipeline(total_trials: int, target, work_dir: str, prepack: bool,
                                 max_trials_per_task: int):
    """TVM's own tuning pipeline (one module pass), not a copy of it."""
    return tvm().relax.pipeline.static_shape_tuning_pipeline(
        total_trials=total_trials, target=target, work_dir=work_dir,
        cpu_weight_prepack=prepack, max_trials_per_task=max_trials_per_task)


def symbolic_dims(mod) -> list[str]:
    """The symbolic shape variables the module's Relax functions define (seq_len, batch)."""
    relax = tvm().relax
    return sorted({str(var) for _, func in mod.functions.items()
                   if isinstance(func, relax.Function)
                   for var in relax.analysis.defined_symbolic_vars(func)})


def tuned_workloads(work_dir: str) -> list[tuple[str, int]]:
    """(kind, structural hash) of every workload the tuning database holds."""
    database = meta_schedule().database.JSONDatabase(work_dir=work_dir)
    return [("workload", int(structural_hash(record.workload.mod)))
            for record in database.get_all_tuning_records()]


def write_tuning_log(work_dir: str, tasks) -> None:
    """A MetaSchedule tuning log (JSONDatabase) in `work_dir` holding every task's
    workload, the module tuning commits (`dispatched[0]`): its workload table is the
    JSON a later release must read back for the log to be of any use."""
    database = meta_schedule().database.JSONDatabase(work_dir=work_dir)
    for task in tasks:
        database.commit_workload(task.dispatched[0])


def tasks_missing_from_tuning_log(work_dir: str, tasks) -> list[str]:
    """Names of the tasks whose workload the tuning log in `work_dir` does not hold, as
    tuning looks it up (structural hash and equality). Opening the log parses every
    workload in it: a log this release cannot read raises here."""
    database = meta_schedule().database.JSONDatabase(work_dir=work_dir, allow_missing=False)
    return sorted(str(task.task_name) for task in tasks
                  if not database.has_workload(task.dispatched[0]))


def tune_dependencies_missing() -> str | None:
    """meta_schedule's tuner imports these, which apache-tvm does not declare."""
    missing = []
    for name in ("psutil", "cloudpickle", "xgboost"):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return ", ".join(missing) if missing else None


def compile_module(mod, target):
    """tvm.compile: the default build pipeline and code generation, to a VM executable."""
    return tvm().compile(mod, target=target)


def code_parts(executable) -> list:
    """Every code module of an executable, host first, then what each imports: a GPU
    target's kernels (CUDA C, Metal, OpenCL C, WGSL) are a module the host's imports."""
    parts, pending = [], list(executable.mod.imports)
    while pending:
        part = pending.pop(0)
        parts.append(part)
        pending.extend(part.imports)
    return parts


def executable_signature(executable) -> list[tuple[str, int]]:
    """What an executable is, comparably: the VM bytecode and every code part's text (the
    host's LLVM IR or C, a GPU target's kernel source).

    Two compiles of equal modules differ only in the addresses LLVM's TBAA metadata
    embeds ("0x5626...", "0x55da....w4.b0"), masked here; the bytecode text is
    deterministic. Comparing these rather than the lowered IRModules also covers code
    generation itself.
    """
    import hashlib
    import re
    parts = [("vm-bytecode", executable.as_text())]
    for index, lib in enumerate(code_parts(executable)):
        inspected = Call.of("", lib.inspect_source)   # the stage is the caller's
        # A module kind without source text: said, and still compared.
        source = inspected.value if inspected.ok else \
            f"(no source text: {type(inspected.error).__name__})"
        parts.append((f"{lib.kind}-source[{index}]", re.sub(r'"0x[0-9a-f]+', '"0x?', source)))
    return [(name, int(hashlib.sha256(text.encode()).hexdigest()[:15], 16))
            for name, text in parts]


def as_module_pass(func: Callable, name: str):
    """Wrap a plain IRModule -> IRModule function as a module pass."""
    return tvm().transform.module_pass(lambda mod, _ctx: func(mod), opt_level=0, name=name)

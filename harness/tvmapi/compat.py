"""Every difference between TVM releases lives here, and only here.

The rest of the harness calls these functions and never imports `tvm` or
`tvm_ffi` itself, so adding a release means editing this one file.
Measured differences (0.25.0 / 0.26.0 / 0.27.0.post1):
  * tensor annotations are `relax.TensorStructInfo` in 0.25, `relax.TensorType` later;
  * meta_schedule lives at `tvm.s_tir.meta_schedule` (older trees: `tvm.meta_schedule`);
  * structural equality lives in `tvm_ffi`, not `tvm.ir` (all three releases);
  * CLI target strings ("llvm -num-cores 2") are refused: targets are dicts.
"""
from __future__ import annotations

import copy
import functools
import importlib
import json
import math
import os
import re
from typing import Any, Callable, Iterator

from harness.verdict import BadInput, first_line


class TVMUnavailable(Exception):
    """TVM (or tvm_ffi) cannot be imported here: the case cannot be tested."""


class WrongTVM(Exception):
    """A source-build check loaded TVM from somewhere else: the step is broken, not TVM."""


@functools.cache
def tvm():
    try:
        import tvm as _tvm
        import tvm.relax  # noqa: F401  (registers the relax attrs types)
        import tvm.relax.frontend.onnx  # noqa: F401
    except Exception as exc:  # ImportError, OSError (undefined symbol), ...
        raise TVMUnavailable(f"cannot import tvm: {type(exc).__name__}: {exc}") from exc
    _assert_provenance(_tvm)
    return _tvm


def _loaded_libraries() -> list[str]:
    with open("/proc/self/maps") as handle:
        return sorted({line.split()[-1] for line in handle
                       if "libtvm" in line and line.rstrip().endswith(".so")})


def _assert_provenance(module) -> None:
    """bisect-step sets HARNESS_EXPECT_TVM_PYTHON / _LIB: check exactly that build.

    Without this a source-build step can silently check a wheel's TVM (as it did on
    a toy project) and bisect nothing.
    """
    source = os.environ.get("HARNESS_EXPECT_TVM_PYTHON")
    build = os.environ.get("HARNESS_EXPECT_TVM_LIB")
    if source and not os.path.realpath(module.__file__).startswith(os.path.realpath(source)):
        raise WrongTVM(f"tvm was imported from {module.__file__}, not from {source}")
    if build:
        compiler = [lib for lib in _loaded_libraries()
                    if os.path.basename(lib).startswith(("libtvm_compiler", "libtvm.so",
                                                         "libtvm_runtime"))]
        outside = [lib for lib in compiler
                   if not os.path.realpath(lib).startswith(os.path.realpath(build))]
        if not compiler or outside:
            raise WrongTVM(f"TVM libraries loaded from {outside or 'nowhere'}, not from {build}")


@functools.cache
def ffi():
    tvm()
    import tvm_ffi
    return tvm_ffi


def versions() -> dict[str, str | None]:
    """Versions of the TVM stack, without importing it (works when TVM is broken)."""
    from importlib import metadata
    out = {}
    for key, dist in (("tvm_version", "apache-tvm"), ("tvm_ffi_version", "apache-tvm-ffi")):
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = None
    # A source build has no wheel metadata: bisect-step records the commit instead.
    if os.environ.get("HARNESS_TVM_COMMIT"):
        out["tvm_version"] = "git:" + os.environ["HARNESS_TVM_COMMIT"][:12]
    if os.environ.get("HARNESS_TVM_FFI_COMMIT"):
        out["tvm_ffi_version"] = "git:" + os.environ["HARNESS_TVM_FFI_COMMIT"][:12]
    return out


@functools.cache
def meta_schedule():
    for name in ("tvm.s_tir.meta_schedule", "tvm.meta_schedule"):
        try:
            tvm()
            return importlib.import_module(name)
        except ImportError:
            continue
    raise TVMUnavailable("this TVM has no meta_schedule module")


# ---- structure -------------------------------------------------------------

def structural_hash(obj, map_free_vars: bool = False) -> int:
    return ffi().structural_hash(obj, map_free_vars=map_free_vars)


def structural_equal(a, b, map_free_vars: bool = False) -> bool:
    return bool(ffi().structural_equal(a, b, map_free_vars))


def first_mismatch(a, b, map_free_vars: bool = False) -> str | None:
    """Access path (as text) of the first structural difference, or None."""
    found = ffi().get_first_structural_mismatch(a, b, map_free_vars)
    if found is None:
        return None
    return str(found[0])


def module_identity(mod) -> tuple:
    """Which objects the module maps to, by identity: cheap (no IR walk), and it moves
    when a pass rebinds a function in place (`mod[gv] = f`), even to an equal function
    with another span, which structural hashing cannot see. Compare two with
    `identity_changes`, which tells a real rebinding from a no-op one."""
    functions = {gv.__chandle__(): (gv, func) for gv, func in mod.functions.items()}
    attrs = getattr(mod, "attrs", None)
    return functions, (attrs.__chandle__() if attrs is not None else None)


def identity_changes(before: tuple, after: tuple) -> list[str]:
    """Names of the functions rebound in place to something else (JSON text differs).

    Some TVM passes rebind a function to an identical copy (tirx.AnnotateEntryFunc's
    `mod->Update` re-adding an attribute the function already has): same text, same
    hash, nothing any holder could observe. Those are not mutations.
    """
    (functions_before, attrs_before), (functions_after, attrs_after) = before, after
    changed = []
    for handle in functions_before.keys() | functions_after.keys():
        old, new = functions_before.get(handle), functions_after.get(handle)
        if old is None or new is None:
            changed.append((old or new)[0].name_hint)
        elif old[1].__chandle__() != new[1].__chandle__() and \
                save_json(old[1]) != save_json(new[1]):
            changed.append(new[0].name_hint)
    if attrs_before != attrs_after:
        changed.append("(module attrs)")
    return sorted(changed)


def tvmscript(mod) -> str:
    """The module as TVMScript that parses back (`show_meta` carries the constants)."""
    return mod.script(show_meta=True)


# ---- object-valued attrs fields (for the attrs sweep's strategies) ------------

def device_mesh(shape: tuple[int, ...]):
    return tvm().relax.distributed.DeviceMesh(tuple(shape), list(range(math.prod(shape))))


def placement(text: str):
    """e.g. "S[0]R": one entry per mesh axis, Replica or Sharded along a tensor axis."""
    return tvm().relax.distributed.Placement.from_text(text)


def permutation_index_map(order: list[int]):
    """The layout transform that permutes axes (NCHW -> NHWC is [0, 2, 3, 1])."""
    return tvm().tirx.IndexMap.from_func(lambda *axes: [axes[i] for i in order],
                                         ndim=len(order))


def vdevice(vdevice_id: int, memory_scope: str):
    return tvm().relax.VDevice(make_target("llvm", 1), vdevice_id, memory_scope)


class CopierUnsupported(Exception):
    """This copier cannot carry this module (a construct it cannot print or parse)."""


def tvmscript_copy(mod):
    """Print to TVMScript and parse back: a copy that does not go through save_json for the
    IR itself (constants still travel in the printed metadata section, as JSON; measured:
    without show_meta they are not printed at all and the text does not parse)."""
    try:
        text = tvmscript(mod)
    except Exception as exc:  # noqa: BLE001
        raise CopierUnsupported(f"TVMScript cannot print it: {first_line(exc)[:300]}") from exc
    try:
        return tvm().script.from_source(text)
    except Exception as exc:  # noqa: BLE001
        raise CopierUnsupported(
            f"TVMScript cannot parse its own text: {first_line(exc)[:300]}") from exc


def save_json(obj) -> str:
    return tvm().ir.save_json(obj)


def load_json(text: str):
    return tvm().ir.load_json(text)


def deepcopy(obj):
    return copy.deepcopy(obj)


def is_object(value) -> bool:
    return isinstance(value, ffi().Object)


# ---- reflection ------------------------------------------------------------

def type_key(obj) -> str:
    return obj.__tvm_ffi_type_info__.type_key


def _type_info(key: str):
    ffi()  # the relax attrs types register when tvm.relax is imported
    from tvm_ffi.core import _lookup_or_register_type_info_from_type_key
    return _lookup_or_register_type_info_from_type_key(str(key))


def _chain(info) -> Iterator:
    while info is not None:
        yield info
        info = info.parent_type_info


def fields_of_type(key: str) -> list[tuple[str, dict]]:
    """(name, type_schema) of every reflected field, inherited ones included."""
    out = []
    for info in reversed(list(_chain(_type_info(key)))):
        for field in info.fields:
            schema = field.metadata.get("type_schema")
            out.append((field.name, json.loads(schema) if schema else {"type": "Any"}))
    return out


def field_names(obj) -> list[str]:
    return [name for name, _ in fields_of_type(type_key(obj))]


def get_field(obj, name: str):
    if name == "__dict__":  # DictAttrs keeps its payload in a reflected map
        return dict(obj.items()) if hasattr(obj, "items") else getattr(obj, name)
    return getattr(obj, name)


def registered_attrs_types() -> list[str]:
    """Every registered type whose ancestors include ir.Attrs."""
    ffi_mod = ffi()
    keys = []
    for key in ffi_mod.registry.get_registered_type_keys():
        chain = [info.type_key for info in _chain(_type_info(key))]
        if "ir.Attrs" in chain[1:]:
            keys.append(str(key))
    return sorted(keys)


def make_object(key: str, **fields):
    """Construct a reflected object by type key (used by the attrs strategies)."""
    return tvm().ir.make_node(key, **fields)


# ---- IR walking -----------------------------------------------------------

def call_attrs(mod) -> list[tuple[str, Any]]:
    """(location, attrs) for every function's attrs and every relax Call's attrs.

    The order is deterministic for structurally equal modules, which is what lets
    two copies be compared pairwise.
    """
    t = tvm()
    relax = t.relax
    out = []
    for gv, func in sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint):
        fname = gv.name_hint
        if getattr(func, "attrs", None) is not None:
            out.append((f"@{fname}.attrs", func.attrs))
        if isinstance(func, relax.Function):
            calls = []

            def visit(expr, calls=calls):
                if isinstance(expr, relax.Call) and expr.attrs is not None:
                    calls.append(expr)
            relax.analysis.post_order_visit(func, visit)
            for index, call in enumerate(calls):
                op = getattr(call.op, "name", None) or getattr(call.op, "name_hint", "?")
                out.append((f"@{fname}/call[{index}]:{op}.attrs", call.attrs))
    return out


def count_calls(mod, op_names: tuple[str, ...]) -> int:
    """How many bindings of the module's relax functions call one of these ops (relax is
    in A-normal form: each call is a binding's value; a walk with a Python callback per
    node cost the fuzzer 50 ms an example)."""
    relax = tvm().relax
    count = 0
    for func in mod.functions.values():
        if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr):
            for block in func.body.blocks:
                for binding in block.bindings:
                    value = binding.value
                    if isinstance(value, relax.Call) and \
                            getattr(value.op, "name", None) in op_names:
                        count += 1
    return count


def tensor_annotation(shape, dtype: str):
    relax = tvm().relax
    if hasattr(relax, "TensorStructInfo"):  # 0.25
        return relax.TensorStructInfo(shape, dtype)
    return relax.TensorType(shape, dtype)


def block_builder():
    return tvm().relax.BlockBuilder()


def relax_op():
    return tvm().relax.op


def well_formed(mod) -> bool:
    """0.27 renamed the boolean check to check_well_formed (well_formed now raises)."""
    analysis = tvm().relax.analysis
    if hasattr(analysis, "check_well_formed"):
        return bool(analysis.check_well_formed(mod))
    return bool(analysis.well_formed(mod))


# ---- the extraction path ---------------------------------------------------

def from_onnx(model, shape_dict: dict | None = None):
    from tvm.relax.frontend.onnx import from_onnx as _from_onnx
    tvm()
    return _from_onnx(model, shape_dict=shape_dict)


# The frontend's explicit refusals (measured on the onnx-node catalog, 0.27.0.post1):
# "Dynamic Split not yet supported", "Dynamic pads are not supported yet",
# "Type <...Var> for size is currently unsupported".
_REFUSALS = ("not yet supported", "not supported yet", "currently unsupported")


def is_unsupported_op_error(exc: BaseException) -> bool:
    """The frontend's way of saying it has no converter for an operator (or an attribute
    or input form of it); a crash inside a converter is an error, not this.
    OpAttributeInvalid: 0.25's Pad converter refuses mode="wrap" (0.26 converts it)."""
    text = f"{type(exc).__name__}: {exc}"
    lowered = text.lower()
    return ("OpNotImplemented" in text or "OpAttributeInvalid" in text
            or ("not supported" in lowered and "operator" in lowered)
            or any(refusal in lowered for refusal in _REFUSALS))


def convert_layout(desired: dict[str, list[str]]):
    return tvm().relax.transform.ConvertLayout(desired)


def decompose_ops_for_inference():
    return tvm().relax.transform.DecomposeOpsForInference()


def canonicalize_bindings():
    return tvm().relax.transform.CanonicalizeBindings()


def legalize_ops():
    return tvm().relax.transform.LegalizeOps()


def zero_pipeline():
    return tvm().relax.get_pipeline("zero")


def attach_attr_layout_free_buffers():
    return tvm().relax.transform.AttachAttrLayoutFreeBuffers()


def target_config(text: str) -> dict:
    """The target a user named, as the dict TVM takes: a kind ("llvm"), TVM's JSON form
    ('{"kind": "llvm", "mcpu": "skylake"}'), or the CLI string form 0.27 refuses
    ("llvm -mcpu=skylake -mattr=+avx2,+fma": comma lists become arrays, numbers ints)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise BadInput(f"--target {text!r} is not valid JSON ({exc})") from None
        if not isinstance(config, dict) or not isinstance(config.get("kind"), str):
            raise BadInput(f"--target {text!r}: the JSON form needs a \"kind\", e.g. "
                           '{"kind": "llvm", "mcpu": "skylake"}')
        return config
    words = text.split()
    if not words:
        raise BadInput("--target is empty: give a target kind, e.g. llvm")
    config: dict[str, Any] = {"kind": words[0]}
    for word in words[1:]:
        key, has_value, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not key:
            raise BadInput(f"--target {text!r}: options are written -KEY=VALUE or -FLAG, "
                           f"not {word!r}")
        config[key] = _target_value(value) if has_value else True
    return config


def _target_value(text: str):
    if "," in text:
        return [part for part in text.split(",") if part]
    if text.lstrip("-").isdigit():
        return int(text)
    return {"true": True, "false": False}.get(text.lower(), text)


def make_target(text: str, num_cores: int):
    """The Target, with `num-cores` where the kind takes it (llvm does, cuda and c do not).
    A target TVM refuses is bad input, with TVM's one-line reason."""
    return tvm().target.Target(target_dict(text, num_cores))


# TVM's refusal of a single value where its schema wants an array ("-mattr=+avx2").
_WANTS_ARRAY = re.compile(r"Option '([^']+)': expected type 'Array<")


@functools.lru_cache(maxsize=64)
def _accepted(config_json: str, num_cores: int) -> str:
    """The config (as JSON) TVM makes a Target of: num-cores added where the kind takes it,
    a single value made a list where TVM's schema wants an array."""
    config = json.loads(config_json)
    with_cores = "num-cores" not in config
    for _ in range(len(config) + 2):
        candidate = {**config, "num-cores": num_cores} if with_cores else config
        try:
            tvm().target.Target(candidate)
            return json.dumps(candidate)
        except Exception as exc:  # noqa: BLE001 - TVM's refusal text decides, below
            text = str(exc)
            wants_array = _WANTS_ARRAY.search(text)
            if with_cores and "option 'num-cores'" in text:   # "Unknown config option ..."
                with_cores = False        # this kind takes no num-cores (cuda, c)
            elif wants_array and isinstance(config.get(wants_array.group(1)), str):
                config[wants_array.group(1)] = [config[wants_array.group(1)]]
            else:
                raise BadInput(f"TVM refuses it: {first_line(exc)}") from None
    raise BadInput(f"TVM refuses it: {json.dumps(config)}")


def target_dict(text: str, num_cores: int) -> dict:
    """The config TVM accepted for --target `text` (what a reproducer spells out)."""
    config = target_config(text)
    try:
        return json.loads(_accepted(json.dumps(config, sort_keys=True), num_cores))
    except BadInput as exc:
        raise BadInput(f"--target {text!r}: {exc}") from None


def extract_tasks(mod, target) -> list:
    return list(meta_schedule().relax_integration.extract_tasks(mod, target))


def task_signature(task) -> tuple:
    """(name, weight, hash of every dispatched function) of one extracted task."""
    return (str(task.task_name), int(task.weight),
            tuple(int(structural_hash(func)) for func in task.dispatched))


def is_pass(obj) -> bool:
    return isinstance(obj, tvm().transform.Pass)


def run_pass(pass_obj, mod):
    """Run a pass in the current PassContext (the runner's guarded one)."""
    return pass_obj(mod)


def pass_context(instruments=()):
    """The PassContext every stage runs in: opt_level 3 as the pipelines use, and the
    harness's instruments, which only record. Never TVM's `testing.immutable_module`
    check: it raises, FoldConstant's nested build swallows that and folds nothing, and
    the guarded run would no longer be the run users make (pass_guard.py)."""
    return tvm().transform.PassContext(opt_level=3, instruments=list(instruments))


def pass_instrument(cls):
    """Make `cls` (run_before_pass / run_after_pass methods) a TVM PassInstrument class."""
    return tvm().ir.instrument.pass_instrument(cls)


def static_shape_tuning_pipeline(total_trials: int, target, work_dir: str, prepack: bool,
                                 max_trials_per_task: int):
    """TVM's own tuning pipeline (one module pass), not a copy of it."""
    return tvm().relax.pipeline.static_shape_tuning_pipeline(
        total_trials=total_trials, target=target, work_dir=work_dir,
        cpu_weight_prepack=prepack, max_trials_per_task=max_trials_per_task)


def tuned_workloads(work_dir: str) -> list[tuple[str, int]]:
    """(kind, structural hash) of every workload the tuning database holds."""
    database = meta_schedule().database.JSONDatabase(work_dir=work_dir)
    return [("workload", int(structural_hash(record.workload.mod)))
            for record in database.get_all_tuning_records()]


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


def executable_signature(executable) -> list[tuple[str, int]]:
    """What an executable is, comparably: the VM bytecode and the generated LLVM IR.

    Two compiles of equal modules differ only in the addresses LLVM's TBAA metadata
    embeds ("0x5626...", "0x55da....w4.b0"), masked here; the bytecode text is deterministic. Comparing
    these rather than the lowered IRModules also covers code generation itself.
    """
    import hashlib
    import re
    parts = [("vm-bytecode", executable.as_text())]
    for index, lib in enumerate(executable.mod.imports):
        try:
            source = lib.inspect_source()
        except Exception:  # noqa: BLE001 - a module kind without source text
            continue
        parts.append((f"{lib.kind}-source[{index}]", re.sub(r'"0x[0-9a-f]+', '"0x?', source)))
    return [(name, int(hashlib.sha256(text.encode()).hexdigest()[:15], 16))
            for name, text in parts]


def as_module_pass(func: Callable, name: str):
    """Wrap a plain IRModule -> IRModule function as a module pass."""
    return tvm().transform.module_pass(lambda mod, _ctx: func(mod), opt_level=0, name=name)


def int_imm(value: int, dtype: str = "int64"):
    return tvm().tirx.IntImm(dtype, value) if hasattr(tvm(), "tirx") else tvm().tir.IntImm(dtype, value)


def float_imm(value: float, dtype: str = "float32"):
    t = tvm()
    return t.tirx.FloatImm(dtype, value) if hasattr(t, "tirx") else t.tir.FloatImm(dtype, value)


def build_identity() -> str:
    """This exact TVM build: versions, where tvm is imported from, and each loaded TVM
    library's size and mtime (a source build keeps its version across commits)."""
    tvm()
    parts = [json.dumps(versions(), sort_keys=True), os.path.realpath(tvm().__file__)]
    for library in _loaded_libraries():
        stat = os.stat(library)
        parts.append(f"{library}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)

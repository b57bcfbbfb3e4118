"""The nn door: models written with `tvm.relax.frontend.nn`, the way MLC-LLM writes them,
made into Relax by `nn.Module.export_tvm`.

This is how large models reach TVM today: MLC-LLM defines each architecture as an
`nn.Module` with prefill and decode methods over a paged KV cache and symbolic sequence
lengths, and exports it with a spec. A model file is ordinary Python (imports allowed)
that defines, at module level,
    MODEL   an nn.Module (no weights needed: export_tvm makes them function parameters)
    SPEC    its export spec as `export_tvm` takes it, {method: {argument:
            nn.spec.Tensor([1, "seq_len", 64], "float32") | int | nn.spec.Object(...),
            "$": {"param_mode": ..., "effect_mode": ...}}}, or an nn.spec.ModuleSpec;
            optional when MODEL has `get_default_spec()` (MLC-LLM's models do)
The catalog's nn cases are such files (cases/nn/). What is the file's to fix is a
BadInput naming the file and line (exit 2), never a verdict on TVM: the file not running,
MODEL or SPEC missing or of the wrong kind, a spec that does not fit the methods, and the
model's own code raising while it is traced. What TVM's frontend raises while it exports
is TVM's (`error` at the import stage), as for every door. A model with `nn.add_extern`
modules (code compiled outside TVM) is `unsupported`.
"""
from __future__ import annotations

import dataclasses
import os
import sysconfig
import traceback

from harness import classify
from harness.classify import HARNESS
from harness.doors import python_file
from harness.doors.door import Door
from harness.doors.torch_models import ExportRefused
from harness.tvmapi import nn_export
from harness.verdict import BadInput, first_line

MODEL, SPEC = "MODEL", "SPEC"   # the names a model file defines
_STANDARD = tuple(os.path.realpath(path) + os.sep for path in
                  {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


@dataclasses.dataclass(eq=False)
class NNModel:
    """A model file's nn.Module and its ModuleSpec. Exported once when loaded (so that the
    file's own mistakes are found before any check); that module is the first `to_relax`'s,
    TVM's exception while exporting is raised there, and every later call exports afresh."""
    path: str
    model: object = dataclasses.field(repr=False)
    spec: object = dataclasses.field(repr=False)
    first: object = dataclasses.field(default=None, repr=False)
    error: Exception | None = dataclasses.field(default=None, repr=False)

    def module(self):
        if self.error is not None:
            raise self.error   # TVM's traceback inside: the import stage's finding
        module, self.first = self.first, None
        return module if module is not None else _export(self)


class NNDoor(Door):
    name = "nn"
    frontend = "relax.frontend.nn"
    suffixes = (".py",)
    reproducer = "nn"

    def claims(self, path: str) -> bool:
        """A .py that defines MODEL at module level (before the Relax door takes the rest)."""
        if not path.endswith(".py") or not os.path.isfile(path):
            return False
        try:
            return MODEL in python_file.top_level_names(python_file.parse(path))
        except BadInput:
            return False   # the Relax door, asked next, names the syntax error

    def validate(self, path: str) -> None:
        if MODEL not in python_file.top_level_names(python_file.parse(path)):
            raise BadInput(f"{path} does not define {MODEL} at module level; an nn model "
                           f"file defines `{MODEL}` (a tvm.relax.frontend.nn.Module) and "
                           f"`{SPEC}` (its export_tvm spec; optional when {MODEL} has "
                           "get_default_spec())")

    def load(self, path: str) -> NNModel:
        namespace = python_file.run(path)
        model = namespace.get(MODEL)
        if not nn_export.is_module(model):
            raise BadInput(f"{path}: `{MODEL}` must be a tvm.relax.frontend.nn.Module "
                           f"instance (got a {type(model).__name__} value)")
        raw = namespace.get(SPEC)
        if raw is None and not nn_export.has_default_spec(model):
            raise BadInput(f"{path} defines no `{SPEC}` and {type(model).__name__} has no "
                           "get_default_spec(); define SPEC = {method: {argument: "
                           "nn.spec.Tensor([...], dtype), ...}}")
        try:
            spec = nn_export.module_spec(
                model, raw if raw is not None else nn_export.default_spec(model))
        except Exception as exc:   # a spec that does not fit is the file's
            if not isinstance(exc, nn_export.SpecMisfit) and classify.origin(exc) == HARNESS:
                raise   # our own bug: a harness-error, never the file's fault
            raise BadInput(f"{python_file.where(exc, path)}: the spec does not fit the model: "
                           f"{first_line(exc)[:300]}") from None
        loaded = NNModel(path, model, spec)
        try:
            loaded.first = _export(loaded)
        except ExportRefused:
            raise
        except Exception as exc:   # decided here: the file's code, or TVM's
            if classify.origin(exc) == HARNESS:
                raise
            where = _users_code(exc, path)
            if where is None:
                loaded.error = exc
            else:
                raise BadInput(f"{where}: {first_line(exc)[:300]} (raised by the model's "
                               f"own code while export_tvm traced it); the model must export "
                               "on its own (MODEL.export_tvm(SPEC))") from None
        return loaded

    def owns(self, model) -> bool:
        return isinstance(model, NNModel)

    def to_relax(self, model: NNModel):
        return model.module()

    def recipe(self, model: NNModel) -> str:
        """The file itself, embedded and run as the harness ran it, then exported."""
        return "\n".join([
            f"_source = {python_file.read(model.path)!r}",
            "_namespace = {'__name__': 'model_file'}",
            "exec(compile(_source, 'model.py', 'exec'), _namespace)",
            f"_model, _spec = _namespace[{MODEL!r}], _namespace.get({SPEC!r})",
            "_spec = _spec if _spec is not None else _model.get_default_spec()",
            "module = _model.export_tvm(_spec, allow_extern=True)[0]"])


def _export(loaded: NNModel):
    module, extern = nn_export.export(loaded.model, loaded.spec)
    if extern:
        raise ExportRefused(f"{loaded.path}: the model adds {len(extern)} extern module(s) "
                            "(nn.add_extern): code compiled outside TVM, which the harness "
                            "does not check")
    return module


def _users_code(exc: BaseException, path: str) -> str | None:
    """`FILE:LINE` of the user's code that raised `exc` (the file's line, or that of a module
    of theirs it imports), or None when TVM raised it: decided by the innermost frame
    outside the standard library, as harness.classify decides between TVM and us."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        filename = frame.filename
        if filename.startswith("<frozen") or os.path.realpath(filename).startswith(_STANDARD):
            continue
        parts = filename.replace("\\", "/").split("/")
        if "tvm" in parts or "tvm_ffi" in parts or filename == "<unknown>" \
                or filename.endswith((".cc", ".h", ".cpp", ".pxi", ".pyx")):
            return None
        inside = python_file.where(exc, path)
        return inside if inside != path else f"{filename}:{frame.lineno}"
    return None


DOOR = NNDoor()

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

from harness import classify
from harness.doors import python_file
from harness.doors.door import Door
from harness.doors.torch_models import ExportRefused
from harness.tvmapi import nn_export
from harness.verdict import BadInput, first_line

MODEL, SPEC = "MODEL", "SPEC"   # the names a model file defines
STAGE = "load"   # what a HarnessBug of loading a model file names


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
    py_binds = MODEL   # before the Relax door takes the rest
    reproducer = "nn"


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
        try:   # a spec that does not fit is the file's (ours raising: a HarnessBug)
            fitted = classify.Call.of(STAGE, _spec, model, raw, reraise=(nn_export.SpecMisfit,))
            misfit = fitted.error
        except nn_export.SpecMisfit as exc:
            misfit = exc
        if misfit is not None:
            raise BadInput(f"{python_file.where(misfit, path)}: the spec does not fit the "
                           f"model: {first_line(misfit)[:300]}") from None
        loaded = NNModel(path, model, fitted.value)
        exported = classify.Call.of(STAGE, _export, loaded, reraise=(ExportRefused,))
        if exported.ok:
            loaded.first = exported.value
        else:   # TVM's (the import stage's finding), or the file's own code
            owner, frame = classify.innermost_owner(exported.error)
            if owner != classify.USER:
                loaded.error = exported.error
            else:
                inside = python_file.where(exported.error, path)
                where = inside if inside != path else f"{frame.filename}:{frame.lineno}"
                raise BadInput(f"{where}: {exported.detail[:300]} (raised by the model's "
                               f"own code while export_tvm traced it); the model must export "
                               "on its own (MODEL.export_tvm(SPEC))")
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


def _spec(model, raw):
    """MODEL's ModuleSpec: SPEC, or the model's own (its code runs)."""
    return nn_export.module_spec(model, raw if raw is not None else nn_export.default_spec(model))


def _export(loaded: NNModel):
    module, extern = nn_export.export(loaded.model, loaded.spec)
    if extern:
        raise ExportRefused(f"{loaded.path}: the model adds {len(extern)} extern module(s) "
                            "(nn.add_extern): code compiled outside TVM, which the harness "
                            "does not check")
    return module


DOOR = NNDoor()

"""The Relax door: a module that is Relax already, as a file.

Three forms: an ordinary Python file that builds or defines an IRModule (imports
allowed: `mod = bb.get()`, or an `@I.ir_module class Module`), bare TVMScript as
`mod.script()` prints it (its imports commented out: the reducer writes these), and
save_json text (.json). A Python file is run with TVMScript's names (I, R, T, tvm)
bound, so both Python forms work alike; it must define one module-level IRModule,
or name the one to check `Module` or `mod`.
"""
from __future__ import annotations

import dataclasses
import json

from harness.classify import Call
from harness.doors import python_file, torch_door
from harness.doors.door import Door
from harness.tvmapi import copiers, scripts
from harness.verdict import BadInput

PREFERRED = ("Module", "mod")


@dataclasses.dataclass(frozen=True, eq=False)
class RelaxModel:
    """A Relax module read from `path` (the IRModule itself, made once in the child)."""
    path: str
    module: object


class RelaxDoor(Door):
    name = "relax"
    frontend = "Relax"
    suffixes = (".py", ".json")

    def validate(self, path: str) -> None:
        if path.endswith(".json"):
            _json_text(path)
            return
        names = python_file.top_level_names(python_file.parse(path))
        if torch_door.MODEL in names:   # a PyTorch model file missing its inputs: say so
            torch_door.DOOR.require_names(path, "PyTorch", {
                torch_door.MODEL: "a torch.nn.Module",
                torch_door.INPUTS: "a tuple of tensors"})

    def load(self, path: str) -> RelaxModel:
        if path.endswith(".json"):
            text = _json_text(path)
            loaded = Call.of("import", copiers.load_json, text)   # ours: a HarnessBug
            if not loaded.ok:   # TVM cannot read the user's file
                raise BadInput(f"{path} is not save_json text this TVM can load "
                               f"({type(loaded.error).__name__}: "
                               f"{str(loaded.error).strip()[:200]}); write it "
                               "with tvm.ir.save_json(mod)")
            return RelaxModel(path, loaded.value)
        return RelaxModel(path, _module_of(path, python_file.run(path, scripts.script_globals())))

    def owns(self, model) -> bool:
        return isinstance(model, RelaxModel)

    def to_relax(self, model: RelaxModel):
        return model.module


def _json_text(path: str) -> str:
    text = python_file.read(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}: not JSON ({exc.msg}); a .json module is "
                       "tvm.ir.save_json(mod) text") from None
    if not isinstance(data, dict) or "nodes" not in data:
        raise BadInput(f"{path} is JSON but not save_json text (no 'nodes'); a .json module "
                       "is tvm.ir.save_json(mod) text")
    return text


def _module_of(path: str, namespace: dict):
    modules = scripts.modules_in(namespace)
    if len(modules) == 1:
        return next(iter(modules.values()))
    for name in PREFERRED:
        if name in modules:
            return modules[name]
    if not modules:
        raise BadInput(f"{path} defines no IRModule at module level; define one "
                       "(@I.ir_module class Module: ...) or assign it (mod = bb.get()); a "
                       "PyTorch model file defines `model` and `example_inputs`")
    raise BadInput(f"{path} defines {len(modules)} IRModules ({', '.join(sorted(modules))}); "
                   f"name the one to check {' or '.join(PREFERRED)}")


DOOR = RelaxDoor()

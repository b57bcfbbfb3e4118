"""The extraction path as a list of named stages, each one real TVM call.

This mirrors `relax.pipeline.static_shape_tuning_pipeline` up to the point where
meta_schedule extracts tuning tasks. Every stage takes the module the path holds
and returns the next one; the last returns the tasks.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import sys
from typing import Any, Callable

from harness.tvmapi import compat
from harness.verdict import BadInput

LAYOUTS = {
    "nchw": None,
    # The modern AlterOpLayout: the rewrite the seed bug came from.
    "nhwc": {"relax.nn.conv2d": ["NHWC", "OHWI"]},
}
EXTRACT = "extract-tasks"
INJECTED = "injected"


@dataclasses.dataclass
class Options:
    layout: str = "nchw"
    target: str = "llvm"
    num_cores: int = 2
    inject_pass: str | None = None     # MODULE:FUNC or path/to/file.py:FUNC
    inject_before: str = EXTRACT       # the stage the injected pass runs before
    full_copies: bool = False          # also run the whole path on each copy
    desired_layouts: dict | None = None  # ConvertLayout's map; overrides `layout`
    checks: bool = True                # False: bare extraction, for benchmarks
    path: str = "extract"              # extract | tune | compile (PATHS)
    trials: int = 4                    # tune: total_trials of static_shape_tuning_pipeline
    prepack: bool = False              # tune: cpu_weight_prepack (the layout-rewrite passes)
    pass_guard: bool = True            # False: the stage-level guard only (benchmarks)
    keep_crash_input: bool = False     # write each pass's input JSON first (crash evidence)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Stage:
    name: str
    run: Callable[[Any], Any]


def _pass_stage(name: str, make_pass: Callable[[], Any]) -> Stage:
    return Stage(name, lambda mod: compat.run_pass(make_pass(), mod))


def load_module(target: str, flag: str = "--inject-pass"):
    """Import a module by name, or a .py file by path; failures are the user's error."""
    try:
        if target.endswith(".py") or os.sep in target:
            if not os.path.exists(target):
                raise BadInput(f"{flag}: no such file {target!r}")
            loaded = importlib.util.spec_from_file_location(
                os.path.splitext(os.path.basename(target))[0], target)
            module = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(target)
    except BadInput:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is a usage error
        raise BadInput(f"{flag}: cannot import {target!r}: {type(exc).__name__}: {exc}")
    return module


def split_spec(spec: str, flag: str) -> tuple[str, str]:
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise BadInput(f"{flag} expects MODULE:NAME, got {spec!r}")
    return target, attr


def load_callable(spec: str) -> Callable:
    """Import MODULE:FUNC (or FILE.py:FUNC)."""
    target, attr = split_spec(spec, "--inject-pass")
    module = load_module(target)
    if not hasattr(module, attr):
        raise BadInput(f"--inject-pass: {target!r} has no attribute {attr!r}")
    return getattr(module, attr)


def injected_stage(spec: str) -> Stage:
    obj = load_callable(spec)

    def run(mod):
        pass_obj = obj if compat.is_pass(obj) else compat.as_module_pass(obj, INJECTED)
        return compat.run_pass(pass_obj, mod)
    return Stage(INJECTED, run)


def build(options: Options) -> list[Stage]:
    if options.layout not in LAYOUTS:
        raise BadInput(f"--layout must be one of {', '.join(LAYOUTS)}, got {options.layout!r}")
    stages = []
    desired = options.desired_layouts or LAYOUTS[options.layout]
    if desired:
        stages.append(_pass_stage("convert-layout", lambda: compat.convert_layout(desired)))
    stages += [
        _pass_stage("decompose-ops-for-inference", compat.decompose_ops_for_inference),
        _pass_stage("canonicalize-bindings", compat.canonicalize_bindings),
        _pass_stage("zero-pipeline", compat.zero_pipeline),
        _pass_stage("attach-attr-layout-free-buffers", compat.attach_attr_layout_free_buffers),
        Stage(EXTRACT, lambda mod: compat.extract_tasks(
            mod, compat.make_target(options.target, options.num_cores))),
    ]
    if options.inject_pass:
        names = [s.name for s in stages]
        if options.inject_before not in names:
            raise BadInput(f"--inject-before must name a stage ({', '.join(names)}), "
                           f"got {options.inject_before!r}")
        stages.insert(names.index(options.inject_before), injected_stage(options.inject_pass))
    return stages

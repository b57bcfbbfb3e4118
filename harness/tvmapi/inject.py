"""User hooks for the path: `--inject-pass MODULE:FUNC` and `--inject-copier FILE.py:EXPR`.

An injected pass is how a user (or a test) proves the guards bite: a plain
`IRModule -> IRModule` callable is wrapped as a module pass; a `tvm.transform.Pass`,
a `Sequential` included, runs as is and is guarded pass by pass like a pipeline.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Callable

from harness import classify
from harness.tvmapi import calls
from harness.verdict import BadInput

INJECTED = "injected"


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
        raise BadInput(f"{flag}: cannot import {target!r}: {type(exc).__name__}: {exc}") \
            from None
    source = getattr(module, "__file__", None)
    if source:   # its frames are the code under test, wherever it is installed
        package = hasattr(module, "__path__")
        classify.add_user_code(os.path.dirname(source) if package else source)
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


def injected_pass(spec: str):
    """The pass object an --inject-pass spec names (plain callables wrapped)."""
    obj = load_callable(spec)
    return obj if calls.is_pass(obj) else calls.as_module_pass(obj, INJECTED)


def load_copier(spec: str):
    """FILE.py:EXPR -> the copier EXPR evaluates to in that file's namespace."""
    target, expr = spec.split(":", 1) if ":" in spec else split_spec(spec, "--inject-copier")
    module = load_module(target, "--inject-copier")
    try:
        return eval(expr, vars(module))   # the user's own hook file
    except Exception as exc:  # noqa: BLE001 - the user's own expression failed: a usage error
        raise BadInput(f"--inject-copier: cannot evaluate {expr!r}: "
                       f"{type(exc).__name__}: {exc}") from None

"""A user's Python file, read and run so that what is wrong with it names the file and line.

Both the PyTorch door (a file exposing an nn.Module and its example inputs) and the
Relax door (a file building or defining an IRModule) take Python files. A file that
cannot be read, parsed or run is the user's to fix, never a verdict on TVM: each
failure is a BadInput (exit 2) saying `FILE:LINE: what` and the fix.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import sys
import traceback

from harness.verdict import BadInput, first_line


def existing(path: str) -> str:
    """`path`, a file that is there (BadInput naming what it is instead)."""
    if not os.path.exists(path):
        raise BadInput(f"no such file: {path}")
    if os.path.isdir(path):
        raise BadInput(f"{path} is a directory; pass a model file or a case id")
    return path


def read(path: str) -> str:
    existing(path)
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path} cannot be read ({first_line(exc)})") from None


def parse(path: str) -> ast.Module:
    """The file's syntax tree; a syntax error is `FILE:LINE:COL: message`."""
    text = read(path)
    try:
        return ast.parse(text, path)
    except SyntaxError as exc:
        raise BadInput(f"{path}:{exc.lineno}:{exc.offset or 0}: syntax error: {exc.msg}; "
                       f"fix the file (python {path} shows it too)") from None


def top_level_names(tree: ast.Module) -> set[str]:
    """Names the file binds at module level: assignments, defs, classes, imports."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {leaf.id for leaf in ast.walk(target) if isinstance(leaf, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def run(path: str, predefined: dict | None = None) -> dict:
    """Run the file as a module of its own (so `inspect` finds its source, which TVMScript's
    decorators read) with `predefined` names bound; its namespace. Whatever it raises is
    the file's failure: `FILE:LINE: Type: message` at its innermost line in the file."""
    parse(path)
    spec = importlib.util.spec_from_file_location("harness_model_file", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(predefined or {})
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's file failed, whatever it raised
        raise BadInput(f"{where(exc, path)}: {first_line(exc)[:300]}; the file must run on "
                       f"its own (python {path})") from None
    finally:
        sys.modules.pop(spec.name, None)
    return dict(vars(module))


def where(exc: BaseException, path: str) -> str:
    """`FILE:LINE` of the innermost frame of `exc` in `path` (the file alone if none)."""
    real = os.path.realpath(path)
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__)
             if os.path.realpath(frame.filename) == real]
    return f"{path}:{lines[-1]}" if lines else path

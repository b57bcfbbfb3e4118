"""Which files of the checkout a command's rows are computed by: what a carried row's
digest covers (harness.cli.carry), the harness code and the case catalog.

A row of `report` is a function of the code that checks a case (the runner, the oracles,
the TVM layer, the doors, the catalog, the child process) and of the code that turns the
result into a row, not of the merge page, the fuzzers, the reducer or the bisects. So the
digest covers the static import closure of the modules that make the rows: every import
statement of every file reached, lazy ones inside functions included, and the packages
above each module reached (their `__init__` runs first); and every file under the harness
that is not Python (templates, data), which code may read by path. A change anywhere else
leaves last night's rows standing: during development most commits touch one command
(tests/test_carry.py holds the closure to what a real row's processes import). Every
command's rows are computed from the catalog under cases/, but for the registry (a carried
row is judged again) and the standalone reproducers.
"""
from __future__ import annotations

import ast
import functools
import os

from harness import paths

# The modules whose code makes each command's rows. The child process (a fresh
# interpreter or a fork of the warm server) is named too: it is started, not imported.
ROW_MAKERS = {
    "report": ("harness.cli.report", "harness.process.child", "harness.process.warm"),
    "passes": ("harness.cli.passes", "harness.process.child", "harness.process.warm"),
    # TVM's tests run in their own interpreter with the suite plugin loaded (`-p`), and
    # pytest loads the harness's own plugin there too (setup.cfg's pytest11 entry point)
    "guard-suite": ("harness.cli.guard_suite", "harness.suite.plugin", "harness.pytest_plugin"),
}
# Under cases/, what no row is computed from.
NOT_INPUTS = ("cases/known_issues/", "cases/reproducers/")


def files_of(command: str, root: str | None = None) -> list[str]:
    """The files, relative to the checkout and sorted, whose content a `command` row's
    digest covers."""
    return list(_files(command, root or paths.REPO_ROOT))


@functools.cache
def _files(command: str, root: str) -> tuple[str, ...]:
    known = modules(root)
    reached: set[str] = set()
    pending = list(ROW_MAKERS[command])
    while pending:
        name = pending.pop()
        if name in reached or name not in known:
            continue
        reached.add(name)
        pending += _imported(name, known, root)
        parts = name.split(".")
        pending += [".".join(parts[:end]) for end in range(1, len(parts))]
    python = {known[name] for name in reached}
    data = {relative for relative in _walk(root) if not relative.endswith(".py")}
    catalog = {relative for relative in _walk(root, "cases")
               if not relative.startswith(NOT_INPUTS)}
    return tuple(sorted(python | data | catalog))


def _walk(root: str, top: str = "harness") -> list[str]:
    """Every file under `root`/`top` (bytecode left out), relative to `root`."""
    found = []
    for folder, subfolders, names in os.walk(os.path.join(root, top)):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in names:
            if not name.endswith(".pyc"):
                found.append(os.path.relpath(os.path.join(folder, name), root)
                             .replace(os.sep, "/"))
    return found


def modules(root: str) -> dict[str, str]:
    """{module name: its file relative to `root`} of the harness package under `root`."""
    return {relative[:-3].replace("/", ".").removesuffix(".__init__"): relative
            for relative in _walk(root) if relative.endswith(".py")}


def imports_of(name: str, known: dict[str, str], root: str) -> list[tuple[int, str]]:
    """(line, module) of every import statement in module `name`'s file, lazy ones inside
    functions included; `from X import Y` is module X.Y when that is one of `known`, else
    X, and a relative import is resolved from the importer's package. (tests/test_layers.py
    reads the layers' import graph with it too.)"""
    relative = known[name]
    package = name if relative.endswith("__init__.py") else name.rpartition(".")[0]
    with open(os.path.join(root, relative)) as handle:
        tree = ast.parse(handle.read(), relative)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:   # relative: from the importer's package, up level - 1
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found += [(node.lineno, f"{base}.{alias.name}"
                       if f"{base}.{alias.name}" in known else base) for alias in node.names]
    return found


def _imported(name: str, known: dict[str, str], root: str) -> list[str]:
    """The harness modules `name` imports anywhere in its file."""
    return [module for _, module in imports_of(name, known, root)
            if module.split(".")[0] == "harness"]

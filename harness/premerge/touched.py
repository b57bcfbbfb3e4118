"""What a change touches in TVM, read from its files and lines: converters, passes, lowering.

Each changed file is put in one area, by its place in apache/tvm's tree:

* a frontend (`python/tvm/relax/frontend/<name>/`): the converters whose code the changed
  lines are in. A converter map (`_get_convert_map`, `create_convert_map`) is a dict
  literal from operator name to a class or method; a changed class, method or function
  names the entries that refer to it (one level: a changed helper names the converters
  that call it), a changed line inside the map names its own entries;
* a pass (`relax/transform`, `relax/backend`, `tirx/transform`, `s_tir/transform`): the
  passes the file registers (C++: `Create*Pass(..., "Name")`; Python: `name="Name"` and
  the CamelCase definitions the changed lines are in);
* lowering and code generation (`tirx`, `s_tir`, `target`, `arith`, `te`, `topi`, `runtime`'s
  CPU parts): what a compile runs after Relax;
* inert: what no check can run (docs, TVM's own tests, CI files, other languages, GPU
  runtimes a CPU build leaves out);
* anything else (IR, build files, the FFI, ...): unmapped, which premerge/targets answers
  with a default selection, said.
Reading is done on the text of both sides (`ast` for Python, patterns for C++), never by
importing TVM: a try decides what to run before anything is built.
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import re

from harness.premerge.change import Change, FileChange
from harness.versions.source_checkout import git


class Area(enum.Enum):
    FRONTEND = "frontend"
    PASS = "pass"
    LOWERING = "lowering"
    INERT = "inert"
    UNMAPPED = "unmapped"


# The frontend folders and the converter map functions in them.
FRONTENDS = {"onnx": "onnx", "torch": "torch", "tflite": "tflite", "stablehlo": "stablehlo",
             "nn": "nn"}
_MAP_FUNCTIONS = ("_get_convert_map", "create_convert_map", "get_convert_map")
_PASS_FOLDERS = ("python/tvm/relax/transform/", "src/relax/transform/",
                 "python/tvm/relax/backend/", "src/relax/backend/",
                 "python/tvm/tirx/transform/", "src/tirx/transform/",
                 "python/tvm/s_tir/transform/", "src/s_tir/transform/")
_LOWERING = ("src/tirx/", "src/s_tir/", "src/target/", "src/arith/", "src/te/", "src/topi/",
             "python/tvm/tirx/", "python/tvm/s_tir/", "python/tvm/target/",
             "python/tvm/arith/", "python/tvm/te/", "python/tvm/topi/",
             "python/tvm/relax/pipeline.py", "src/runtime/")
_INERT_PREFIXES = ("docs/", "tests/", ".github/", "docker/", "ci/", "web/", "apps/", "jvm/",
                   "rust/", "golang/", "conda/", "licenses/", "gallery/", "vta/",
                   "src/runtime/cuda/", "src/runtime/rocm/", "src/runtime/opencl/",
                   "src/runtime/vulkan/", "src/runtime/metal/", "src/runtime/hexagon/")
_INERT_SUFFIXES = (".md", ".rst", ".txt.in")
_INERT_NAMES = ("LICENSE", "NOTICE", "KEYS", ".asf.yaml", ".gitignore", ".gitattributes",
                "CONTRIBUTORS.md", "pyproject.toml")
_CPP_PASS = re.compile(r"Create\w*Pass\s*\((?:[^;]|\n)*?\"([\w.]+)\"")
_PY_PASS_NAME = re.compile(r"name\s*=\s*\"([\w.]+)\"")
_TIR_NAMESPACE = re.compile(r"(?:^|/)(tirx|s_tir)/")


@dataclasses.dataclass(frozen=True)
class Touched:
    """One file's reading."""
    path: str
    area: Area
    frontend: str = ""                       # Area.FRONTEND
    converters: frozenset[str] = frozenset()  # operator names of the frontend's map
    whole_frontend: bool = False             # a change the map cannot narrow (say why)
    passes: frozenset[str] = frozenset()     # Area.PASS: names as the pass guard sees them
    why: str = ""                            # one line a selection quotes


def read(change: Change) -> list[Touched]:
    return [read_file(change, item) for item in change.files]


def read_file(change: Change, item: FileChange) -> Touched:
    path = item.path or item.old_path
    if _inert(path):
        return Touched(path, Area.INERT, why="no check runs it")
    frontend = _frontend_of(path)
    if frontend:
        return _frontend(change, item, path, frontend)
    if path.startswith(_PASS_FOLDERS):
        names = _passes_in(change, item, path)
        if names:
            return Touched(path, Area.PASS, passes=frozenset(names),
                           why=f"registers {', '.join(sorted(names))}")
        return Touched(path, Area.LOWERING if _TIR_NAMESPACE.search(path) else Area.UNMAPPED,
                       why="a pass folder's file that registers no pass by name")
    if path.startswith(_LOWERING):
        return Touched(path, Area.LOWERING, why="TIR lowering or code generation")
    return Touched(path, Area.UNMAPPED, why="nothing maps this file to checks")


def _inert(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith(_INERT_PREFIXES) or path.endswith(_INERT_SUFFIXES) or \
        name in _INERT_NAMES


def _frontend_of(path: str) -> str:
    prefix = "python/tvm/relax/frontend/"
    if not path.startswith(prefix):
        return ""
    folder = path[len(prefix):].split("/", 1)[0]
    return FRONTENDS.get(folder, "")


# ---- frontends: changed definitions -> converter map entries -----------------------

def _frontend(change: Change, item: FileChange, path: str, frontend: str) -> Touched:
    converters: set[str] = set()
    unnarrowed = []
    folder = path.rsplit("/", 1)[0] + "/"
    for commit, file_path, lines in ((change.head, item.path, item.head_lines),
                                     (change.base, item.old_path, item.base_lines)):
        text = change.text_at(commit, file_path)
        if not text or not file_path.endswith(".py"):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            unnarrowed.append(f"{file_path} does not parse at {commit[:10]} "
                              f"(line {exc.lineno})")
            continue
        # a map may live in another file of the folder than the methods it names
        # (torch: exported_program_translator's map, base_fx_graph_translator's methods)
        maps = convert_maps(_parsed(change, commit, folder, file_path, tree))
        found, whole = converters_touched(tree, lines, maps)
        converters |= found
        if whole:
            unnarrowed.append(f"{file_path}: {whole}")
    if unnarrowed:
        return Touched(path, Area.FRONTEND, frontend, frozenset(converters), True,
                       why="; ".join(dict.fromkeys(unnarrowed)))
    names = ", ".join(sorted(converters)[:8]) + (" ..." if len(converters) > 8 else "")
    return Touched(path, Area.FRONTEND, frontend, frozenset(converters),
                   why=f"converters {names}" if converters else "no converter's code")


def _parsed(change: Change, commit: str, folder: str, changed_path: str,
            changed_tree: ast.Module) -> list[ast.Module]:
    """Every Python file of the frontend's folder at `commit`, parsed."""
    names = git(change.source, "ls-tree", "--name-only", f"{commit}:{folder}",
                check=False).split()
    trees = [changed_tree]
    for name in names:
        if name.endswith(".py") and folder + name != changed_path:
            try:
                trees.append(ast.parse(change.text_at(commit, folder + name)))
            except SyntaxError:
                continue
    return trees


Maps = dict[str, tuple[set[str], int, int, ast.Module]]   # name -> refs, lines, its file


def converters_touched(tree: ast.Module, lines: frozenset[int],
                       maps: Maps | None = None) -> tuple[set[str], str]:
    """(the map's operator names the changed `lines` of `tree` reach, why the change
    reaches the whole frontend or ""). A changed line inside a map names its entry; a
    changed definition the map refers to (a converter class, a translator's method) names
    the entries that refer to it; a changed helper names, one level up, the entries of the
    definitions that call it. Module-level code outside every definition (a constant, a
    shared table) reaches the whole frontend; an import does not."""
    maps = convert_maps([tree]) if maps is None else maps
    chains = [_enclosing(tree, line) for line in sorted(lines)]
    referenced = {ref for refs, _, _, _ in maps.values() for ref in refs}
    found = {key for key, (_, first, last, where) in maps.items()
             if where is tree and any(first <= line <= last for line in lines)}
    helpers = set()
    for chain in chains:
        named = [name for name in chain if name in referenced]
        if named:
            found |= {key for key, (refs, _, _, _) in maps.items() if refs & set(named)}
        elif chain and chain[0] not in _MAP_FUNCTIONS:
            helpers.add(chain[-1])
    if helpers:
        callers = {name for name, first, last in _spans(tree)
                   if name not in helpers and _calls(tree, first, last, helpers)}
        found |= {key for key, (refs, _, _, _) in maps.items() if refs & callers}
    outside = [line for line, chain in zip(sorted(lines), chains, strict=True) if not chain]
    whole = ""
    if outside and _code_at(tree, outside):
        whole = f"lines {min(outside)}-{max(outside)} are outside every converter"
    return found, whole


def _spans(tree: ast.Module) -> list[tuple[str, int, int]]:
    """Every class, function and method with its lines, decorators included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [item.lineno for item in node.decorator_list])
            found.append((node.name, first, node.end_lineno or node.lineno))
    return found


def _enclosing(tree: ast.Module, line: int) -> list[str]:
    """The definitions a line is in, outermost first (a class, then its method)."""
    found = [(first, name) for name, first, last in _spans(tree) if first <= line <= last]
    return [name for _, name in sorted(found)]


def convert_maps(trees: list[ast.Module]) -> Maps:
    """Every converter map's entries in these files: a dict returned by a map function
    (`_get_convert_map`, `create_convert_map`) or assigned to `convert_map` (TFLite's
    `self.convert_map = {...}`). A key is named as the reach map names a converter: a
    string as it is, a class (`nn.Conv2d`) by its own name."""
    found: Maps = {}
    for tree in trees:
        for node in ast.walk(tree):
            holders = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name in _MAP_FUNCTIONS:
                holders = [inner for inner in ast.walk(node) if isinstance(inner, ast.Dict)]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                    (target.attr if isinstance(target, ast.Attribute) else
                     getattr(target, "id", "")) == "convert_map" for target in node.targets):
                holders = [node.value]
            for holder in holders:
                for key, value in zip(holder.keys, holder.values, strict=False):
                    name = _key_name(key)
                    if name and key is not None:
                        found.setdefault(name, (_names(value), key.lineno,
                                                value.end_lineno or key.lineno, tree))
    return found


def _key_name(key: ast.AST | None) -> str:
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    if isinstance(key, ast.Attribute):
        return key.attr
    if isinstance(key, ast.Name):
        return key.id
    return ""


def _names(node: ast.AST) -> set[str]:
    """The identifiers an expression refers to: Cls, self._method, functools.partial(f)."""
    found = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            found.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            found.add(inner.attr)
    return found


def _calls(tree: ast.Module, first: int, last: int, names: set[str]) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and first <= node.lineno <= last:
            if (node.id if isinstance(node, ast.Name) else node.attr) in names:
                return True
    return False


def _code_at(tree: ast.Module, lines: list[int]) -> bool:
    """Whether a top-level statement that is not a docstring covers one of the lines."""
    wanted = set(lines)
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue   # an import added for a converter is the converter's change
        if any(node.lineno <= line <= (node.end_lineno or node.lineno) for line in wanted):
            return True
    return False


# ---- passes -------------------------------------------------------------------------

def _passes_in(change: Change, item: FileChange, path: str) -> set[str]:
    """The passes a pass folder's file registers: every one a C++ file makes (a C++ file
    is one pass and its helpers), a Python file's under the changed lines."""
    namespace = _TIR_NAMESPACE.search(path)
    prefix = f"{namespace.group(1)}." if namespace else ""
    names: set[str] = set()
    for commit, file_path, lines in ((change.head, item.path, item.head_lines),
                                     (change.base, item.old_path, item.base_lines)):
        text = change.text_at(commit, file_path)
        if path.endswith((".cc", ".h")):
            names |= {_pass_name(found, prefix) for found in _CPP_PASS.findall(text)}
        elif path.endswith(".py") and text:
            names |= _python_passes(text, lines, prefix)
    return names


def _pass_name(found: str, prefix: str) -> str:
    """A registered name as the pass guard records it: relax's bare (FoldConstant), a TIR
    pass's with its namespace (tirx.AnnotateEntryFunc)."""
    if "." in found:
        return found
    return prefix + found


def _python_passes(text: str, lines: frozenset[int], prefix: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    names = set()
    for name, first, last in _spans(tree):
        if not any(first <= line <= last for line in lines):
            continue
        body = "\n".join(text.splitlines()[first - 1:last])
        declared = _PY_PASS_NAME.findall(body)
        if declared:
            names |= {_pass_name(found, prefix) for found in declared}
        elif name[:1].isupper() and not name.isupper():
            names.add(prefix + name)
    return names

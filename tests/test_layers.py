"""The layers a newcomer reads from the folder names hold, in the order
docs/explanation/architecture.md gives.

Only harness/tvmapi touches TVM (every difference between releases lives there), and
only harness/cli builds command lines; every `harness.*` import, a function's lazy one
included, goes to the importer's own layer or a lower one; no modules import each other
in a circle; the catalog is data (no TVM, no hypothesis). Checked on the source, as
pytest's own tree keeps one concern per module; a seeded tree proves the checks refuse.
"""
import ast
import dataclasses
import os

from harness.cli import row_code

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness")

# The layer order, lowest first (docs/explanation/architecture.md's table): a module imports
# only from its own layer or a lower one. An entry is a folder of harness/ ("tvmapi/") or a
# top-level module ("verdict.py"); every module must be in exactly one layer, so a new one is
# placed.
LAYERS = {
    "base": ("__init__.py", "verdict.py", "result.py", "options.py", "classify.py", "paths.py",
             "jsonl.py", "signature.py", "shards.py"),
    "tvmapi": ("tvmapi/",),
    "doors": ("doors/",),
    "catalog": ("catalog/",),
    "oracles": ("oracles/",),
    "runner": ("runner/",),
    "fuzz": ("fuzz/",),
    "process": ("process/",),
    "reduce": ("reduce/",),
    "suite": ("suite/",),
    "versions": ("versions/",),
    "pages": ("pages/",),
    "reach": ("reach/",),
    "premerge": ("premerge/",),
    "cli": ("cli/", "pytest_plugin.py", "__main__.py"),
}
RANK = {layer: rank for rank, layer in enumerate(LAYERS)}
# What the catalog (data: cases and the registry) must not reach.
NOT_IN_CATALOG = ("tvm", "tvm_ffi", "hypothesis", "harness.tvmapi")


def _modules_imported(path: str) -> set[str]:
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def _sources():
    for folder, _, names in os.walk(HARNESS):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, HARNESS), _modules_imported(path)


# ---- the import graph of a package tree -----------------------------------------

@dataclasses.dataclass(frozen=True)
class Import:
    where: str    # the importing file: harness/oracles/copies.py
    line: int
    target: str   # the module it imports (a name of a module imports the module itself)

    def __str__(self) -> str:
        return f"{self.where}:{self.line} imports {self.target}"


def read_tree(package_dir: str) -> tuple[dict[str, str], list[Import]]:
    """({module name: its file}, every import, lazy ones included) of a package folder
    named harness, read as the carried rows' digest reads it (harness.cli.row_code)."""
    top = os.path.dirname(package_dir)
    files = row_code.modules(top)
    imports = [Import(where, line, target) for module, where in sorted(files.items())
               for line, target in row_code.imports_of(module, files, top)]
    return files, imports


def layer_of(where: str) -> list[str]:
    """The layers whose entries hold a file (harness/x/y.py): exactly one, or it is unplaced."""
    inside = where.partition("/")[2]
    return [layer for layer, entries in LAYERS.items()
            if any(inside.startswith(entry) if entry.endswith("/") else inside == entry
                   for entry in entries)]


# ---- the checks, each over a tree read by read_tree --------------------------------

def unplaced(files: dict[str, str]) -> list[str]:
    found = []
    for where in sorted(files.values()):
        layers = layer_of(where)
        if len(layers) != 1:
            found.append(f"{where} is in {len(layers)} layers ({', '.join(layers) or 'none'}): "
                         "place it in exactly one (tests/test_layers.py LAYERS, "
                         "docs/explanation/architecture.md)")
    return found


def upward(files: dict[str, str], imports: list[Import]) -> list[str]:
    package = next(iter(files)).partition(".")[0] if files else ""
    found = []
    for imported in imports:
        if imported.target.partition(".")[0] != package:
            continue
        if imported.target not in files:
            found.append(f"{imported}, which is no module of the tree")
            continue
        importer, target = layer_of(imported.where), layer_of(files[imported.target])
        if len(importer) == 1 and len(target) == 1 and RANK[target[0]] > RANK[importer[0]]:
            found.append(f"{imported}: {importer[0]} may not import {target[0]}, a higher layer")
    return found


def cycles(files: dict[str, str], imports: list[Import]) -> list[str]:
    """Each set of modules that import each other in a circle (Tarjan's SCCs), with its
    imports: a cycle inside one layer is refused as much as one across layers."""
    edges: dict[str, set[str]] = {module: set() for module in files}
    module_of = {where: module for module, where in files.items()}
    for imported in imports:
        source = module_of[imported.where]
        if imported.target in files and imported.target != source:
            edges[source].add(imported.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(edges[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                components.append(set(component))

    for module in sorted(files):
        if module not in index:
            visit(module)
    return ["; ".join(sorted(str(imported) for imported in imports
                             if module_of[imported.where] in component
                             and imported.target in component
                             and imported.target != module_of[imported.where]))
            for component in components]


def catalog_reaching_tvm(imports: list[Import]) -> list[str]:
    return [f"{imported}: the catalog is data; it may not import {refused}"
            for imported in imports if imported.where.partition("/")[2].startswith("catalog/")
            for refused in NOT_IN_CATALOG
            if imported.target == refused or imported.target.startswith(refused + ".")]


# ---- the real tree ----------------------------------------------------------------

def test_nothing_outside_tvmapi_imports_tvm():
    offenders = sorted(
        f"{where}: {module}" for where, modules in _sources() if not where.startswith("tvmapi")
        for module in modules if module.split(".")[0] in ("tvm", "tvm_ffi"))
    assert not offenders, offenders


def test_command_lines_are_built_in_cli_only():
    offenders = sorted(where for where, modules in _sources()
                       if "argparse" in modules and not where.startswith("cli"))
    assert not offenders, offenders


def test_the_layer_checks_see_the_tree():
    """A check over no files would pass; this one must read the harness."""
    sources = dict(_sources())
    assert "tvmapi/loading.py" in sources and "tvm" in sources["tvmapi/loading.py"]
    assert "cli/options.py" in sources and "argparse" in sources["cli/options.py"]
    files, imports = read_tree(HARNESS)
    assert len(files) > 80 and files["harness.tvmapi.loading"] == "harness/tvmapi/loading.py"
    internal = {(i.where, i.target) for i in imports if i.target.startswith("harness.")}
    assert len(internal) > 200
    assert ("harness/cli/main.py", "harness.catalog.cases") in internal
    assert ("harness/catalog/case.py", "harness.catalog.manifests") in internal   # a lazy one


def test_every_module_belongs_to_exactly_one_layer():
    files, _ = read_tree(HARNESS)
    offenders = unplaced(files)
    assert not offenders, "\n".join(offenders)
    inside = [where.partition("/")[2] for where in files.values()]
    stale = [entry for entries in LAYERS.values() for entry in entries
             if not any(path.startswith(entry) if entry.endswith("/") else path == entry
                        for path in inside)]
    assert not stale, f"LAYERS names what harness/ no longer holds: {stale}"


def test_every_harness_import_goes_to_its_own_layer_or_a_lower_one():
    offenders = upward(*read_tree(HARNESS))
    assert not offenders, ("imports against the layer order (docs/explanation/architecture.md):\n"
                           + "\n".join(offenders))


def test_no_modules_import_each_other_in_a_circle():
    offenders = cycles(*read_tree(HARNESS))
    assert not offenders, "import cycles:\n" + "\n".join(offenders)


def test_the_catalog_imports_neither_tvm_nor_hypothesis_nor_tvmapi():
    offenders = catalog_reaching_tvm(read_tree(HARNESS)[1])
    assert not offenders, "\n".join(offenders)


# ---- the checks refuse what they should ---------------------------------------------

SEEDED = {
    "__init__.py": "",
    "verdict.py": "def late():\n    from harness.cli import main\n    return main\n",
    "tvmapi/__init__.py": "",
    "tvmapi/first.py": "from harness.tvmapi import second\n",
    "tvmapi/second.py": "import tvm\n\n\ndef back():\n    import harness.tvmapi.first\n",
    "catalog/__init__.py": "",
    "catalog/graphs.py": "import tvm\nfrom hypothesis import strategies\n"
                         "from harness.tvmapi import first\n",
    "catalog/cases.py": "from . import graphs\nimport harness.ghost\n",
    "cli/__init__.py": "",
    "cli/main.py": "from harness.catalog import graphs\n",
    "newfolder/thing.py": "",
}


def _seeded(tmp_path) -> str:
    package = tmp_path / "harness"
    for relative, text in SEEDED.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text)
    return str(package)


def test_the_checks_refuse_a_seeded_tree(tmp_path):
    files, imports = read_tree(_seeded(tmp_path))
    assert unplaced(files) == [
        "harness/newfolder/thing.py is in 0 layers (none): place it in exactly one "
        "(tests/test_layers.py LAYERS, docs/explanation/architecture.md)"]
    assert upward(files, imports) == [
        "harness/catalog/cases.py:2 imports harness.ghost, which is no module of the tree",
        "harness/verdict.py:2 imports harness.cli.main: base may not import cli, a higher layer"]
    assert cycles(files, imports) == [
        "harness/tvmapi/first.py:1 imports harness.tvmapi.second; "
        "harness/tvmapi/second.py:5 imports harness.tvmapi.first"]
    assert sorted(catalog_reaching_tvm(imports)) == [
        "harness/catalog/graphs.py:1 imports tvm: the catalog is data; it may not import tvm",
        "harness/catalog/graphs.py:2 imports hypothesis: the catalog is data; it may not "
        "import hypothesis",
        "harness/catalog/graphs.py:3 imports harness.tvmapi.first: the catalog is data; it "
        "may not import harness.tvmapi"]
    # the relative import resolves to the module it names, a lower layer's import passes
    assert Import("harness/catalog/cases.py", 1, "harness.catalog.graphs") in imports

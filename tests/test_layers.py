"""The layers a newcomer reads from the folder names hold.

Only harness/tvmapi touches TVM (every difference between releases lives there), and
only harness/cli builds command lines; checked on the source, as pytest's own tree
keeps one concern per module.
"""
import ast
import os

HARNESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness")


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

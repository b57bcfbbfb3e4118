"""What every input door is: one small interface, so a new frontend is one module.

The runner, the child process, the reducer and the CLI know a door only through
these methods (harness.doors picks the door: by a case's source kind, a file's
suffix, or a model's type). Adding a door is a module in this folder with one `Door`
and its line in `harness.doors.DOORS`, its loader template for repro.py
(runner/templates/load_NAME.py.tmpl), plus the catalog's source kinds that reach it.
"""
from __future__ import annotations

import dataclasses
import importlib
import os

from harness.doors import python_file
from harness.verdict import BadInput, first_line


class ExtraUnavailable(Exception):
    """What a door needs beside the base install (its pip extra) is missing here: the case
    cannot be tested (exit 125; the pytest plugin skips it naming the extra)."""
    extra = ""


def require(extra: str, *modules: str, error: type = ExtraUnavailable) -> None:
    """Import `modules`, or raise `error` (an ExtraUnavailable) naming what is missing and
    the extra that installs it (`pip install -e '.[EXTRA]'`)."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            missing.append(f"{name} ({first_line(exc)[:120]})")
    if missing:
        unavailable = error(f"{' and '.join(missing)} is not installed: this door needs "
                            f"the {extra} extra (pip install -e '.[{extra}]')")
        unavailable.extra = extra
        raise unavailable


class ReferenceUnavailable(Exception):
    """The framework's answer cannot be had here (not installed, or it refused the model):
    the comparison is said to be skipped, never failed."""


class Door:
    """One way into Relax. Subclasses set the attributes and override what differs."""

    name = ""              # its source kind: `NAME:FILE` on the command line and in a catalog
    frontend = ""          # TVM's frontend, as reports and reproducers name it
    suffixes: tuple[str, ...] = ()   # the files it reads
    extra = ""             # the pip extra it needs beside the base install ("" none)
    onnx_graph = False     # its model is an ONNX graph: the reducer cuts the graph first
    reference = ""         # the framework whose answer the compiled module's is compared
    #                        with (oracles.answers), "" for none: copies and layouts only
    second_reference = ""  # an independent implementation asked when TVM and `reference`
    #                        disagree (or `reference` cannot run the model), "" for none
    reproducer = ""        # how repro.py loads a model whose import failed: "onnx"
    #                        (model.onnx beside it), else the loader template that runs
    #                        the door's recipe (runner/templates/load_NAME.py.tmpl)
    by_name_only = False   # a twin or route of another door's files: `NAME:FILE` only
    py_binds = ""          # the module-level name that makes a .py file this door's ("":
    #                        every .py of its suffixes), for doors that share .py files
    converter_map: str | None = None   # the frontend's operator -> converter map its
    #                        import goes through (tvmapi.frontend_reach), None: none

    def claims(self, path: str) -> bool:
        """This file is this door's: by its suffix, and a .py by the name it binds (doors
        share .py files; each claims those that define its name, in DOORS' order)."""
        if self.by_name_only or not path.endswith(self.suffixes):
            return False
        if path.endswith(".py") and self.py_binds:
            return self.defines(path, self.py_binds)
        return True

    @staticmethod
    def defines(path: str, name: str) -> bool:
        """`path` is a .py file that binds `name` at module level (how a door that shares
        .py files with others claims its own); a file that does not parse is no door's
        here: the Relax door, asked last, names the syntax error."""
        if not path.endswith(".py") or not os.path.isfile(path):
            return False
        try:
            return name in python_file.top_level_names(python_file.parse(path))
        except BadInput:
            return False

    @staticmethod
    def require_names(path: str, kind: str, names: dict[str, str]) -> None:
        """Refuse a model file that does not bind each of `names` ({name: what it holds})
        at module level: a BadInput naming the missing ones and what a `kind` model file
        defines."""
        missing = sorted(set(names) - python_file.top_level_names(python_file.parse(path)))
        if missing:
            wanted = " and ".join(f"`{name}` ({what})" for name, what in names.items())
            raise BadInput(f"{path} does not define {' and '.join(missing)} at module level; "
                           f"a {kind} model file defines {wanted}")

    def validate(self, path: str) -> None:
        """Refuse a file this door cannot read, before any work: a BadInput naming the
        file (and line) and the fix. Cheap, in the parent: no TVM, no torch."""

    def load(self, path: str):
        """The model in `path`, in the child that checks it (BadInput: the file's fault)."""
        raise NotImplementedError

    def owns(self, model) -> bool:
        """`model` (what `load` or a catalog source returned) is this door's."""
        raise NotImplementedError

    def to_relax(self, model):
        """TVM's frontend: the IRModule of `model` (the path's "import" stage)."""
        raise NotImplementedError

    def recipe(self, model) -> str | None:
        """Python source that rebuilds `model` for repro.py and binds `program` (the
        torch reproducer's input), or None: repro.py loads model.onnx or its TVMScript."""
        return None

    def answer(self, model, arrays: list) -> list:
        """The framework's own answer for `model` on numpy `arrays` (the compiled module's
        inputs, in order), as numpy arrays; ReferenceUnavailable when it cannot run here."""
        raise ReferenceUnavailable(f"the {self.name} door has no reference to compare with")

    def second_answer(self, model, arrays: list) -> list:
        """`second_reference`'s answer: a second opinion, so that one framework's own bug
        is never reported as TVM's; ReferenceUnavailable when it cannot run here."""
        raise ReferenceUnavailable(f"the {self.name} door has no second reference")

    def inputs(self, path: str) -> dict:
        """{input name: shape} for `list --json`, from metadata only (no export, no
        TVM); {} where only running the file would tell."""
        return {}

    def cuts(self, model) -> list[Cut]:
        """The model cut after each of its nodes, in order (the node's output the cut's
        only output): where a wrong answer is localized. [] where the door cannot cut."""
        return []


@dataclasses.dataclass(frozen=True)
class Cut:
    """The model with one node's output as its only output."""
    node: str        # the node's name in the framework's graph ("" unnamed)
    operator: str    # its operator (ONNX op type)
    attributes: str  # its attributes that were given, `name=value` each, short
    model: object    # the cut model (the door's own kind)

    def describe(self) -> str:
        name = f" {self.node!r}" if self.node else ""
        return f"{self.operator}{name}" + (f" ({self.attributes})" if self.attributes else "")

    def cause(self) -> str:
        """The operator and the attributes given: what a wrong answer starting here is."""
        return f"{self.operator} {self.attributes}".rstrip()

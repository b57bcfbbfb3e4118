"""The case catalog: manifests from cases/catalog.toml plus models found in the onnx wheel.

A user's catalog adds to the built-in one: each folder `HARNESS_CASES` names
(os.pathsep-separated; the CLI's `--cases DIR` sets it) may hold a catalog.toml
(its `builder:`, `darknet:` and `file:` sources resolve in that folder), a
known_issues.toml and reproducers/, exactly like the built-in `cases/`.
Listing never builds or loads a model, so `list` and pytest collection stay fast;
`Case.model()` does the work when a check needs it (catalog.sources: the source kinds,
their doors, the model built). What a case is: catalog.case; the families found by a
[[discover]] rule: catalog.discovery.
"""
from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import functools
import os
import tomllib

from harness import doors
from harness.catalog import discovery, sources
from harness.catalog.case import CASES_DIR, Case, with_slow
from harness.verdict import BadInput

__all__ = ["CASES_DIR", "Case", "USER_CASES", "case_dirs", "catalog", "file_case",
           "names_file", "needs_torch", "resolve", "select", "select_for_run"]

USER_CASES = "HARNESS_CASES"


def case_dirs() -> list[str]:
    """The built-in cases/ folder, then every folder of a user's catalog, in order."""
    dirs = [CASES_DIR]
    for folder in os.environ.get(USER_CASES, "").split(os.pathsep):
        if not folder:
            continue
        if not os.path.isdir(folder):
            raise BadInput(f"{USER_CASES} (or --cases) names {folder!r}, which is not a "
                           "folder; it should hold a catalog.toml and/or a registry "
                           "(known_issues.toml or known_issues/*.toml)")
        folder = os.path.abspath(folder)
        if folder not in dirs:
            dirs.append(folder)
    return dirs


def catalog() -> tuple[Case, ...]:
    """Every case: the built-in catalog, then each user catalog folder's."""
    return _catalog(tuple(case_dirs()))


@functools.cache
def _catalog(dirs: tuple[str, ...]) -> tuple[Case, ...]:
    cases: list[Case] = []
    for folder in dirs:
        path = os.path.join(folder, "catalog.toml")
        if not os.path.exists(path):
            if folder == CASES_DIR:
                raise BadInput(f"no catalog at {path}: install the harness from its "
                               "checkout (pip install -e .)")
            continue   # a user folder may hold only a registry
        cases += _read_catalog(path, folder)
    seen: dict[str, Case] = {}
    for case in cases:
        if case.id in seen:
            raise BadInput(f"case id {case.id!r} is defined twice: in "
                           f"{seen[case.id].base} and in {case.base}; rename one")
        seen[case.id] = case
    return tuple(cases)


def _read_catalog(path: str, folder: str) -> list[Case]:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path} is not valid TOML: {exc}") from None
    slow = set(data.get("slow", {}).get("cases", []))
    try:
        cases = [Case(c["id"], c["source"], with_slow(c.get("tags", []), c["id"], slow),
                      c.get("layout", "nchw"), folder) for c in data.get("case", [])]
    except KeyError as exc:
        raise BadInput(f"{path}: every [[case]] needs an id and a source (missing {exc})") \
            from None
    taken_ops: set[str] = set()   # what the onnx-node rules before an `others` rule took
    for rule in data.get("discover", []):
        cases += [dataclasses.replace(case, base=folder)
                  for case in discovery.discover(rule, slow, taken_ops)]
        if rule.get("generated") == "onnx-node":
            taken_ops |= set(rule.get("ops", []))
    return cases


def select(patterns: list[str] | None = None, tags: list[str] | None = None) -> list[Case]:
    """Cases whose id or a tag matches any glob pattern (all cases when none given)."""
    cases = list(catalog())
    if patterns:
        cases = [c for c in cases
                 if any(fnmatch.fnmatch(c.id, p) or any(fnmatch.fnmatch(t, p) for t in c.tags)
                        for p in patterns)]
    if tags:
        cases = [c for c in cases if set(tags) & set(c.tags)]
    return cases


def select_for_run(patterns: list[str] | None, everything: bool = False) -> list[Case]:
    """What a catalog-wide command runs: the cases named (globs over ids and tags, and
    model files), else all but the opt-in ones (unless `everything`). A pattern that
    matches no case is bad input, not an empty run."""
    patterns = list(patterns or ())
    is_file = {pattern: names_file(pattern) and not select([pattern]) for pattern in patterns}
    files = [file_case(pattern) for pattern in patterns if is_file[pattern]]
    globs = [pattern for pattern in patterns if not is_file[pattern]]
    for pattern in globs:
        if not select([pattern]):
            raise BadInput(f"no case matches {pattern!r}{_suggestions(pattern)}")
    if files and not globs:
        return files
    return [case for case in select(globs or None)
            if everything or patterns or not case.opt_in] + files


def needs_torch(name: str) -> bool:
    """The case or file `name` imports torch (a warm child server preloads it for it)."""
    try:
        case = next((case for case in catalog() if case.id == name), None)
        return (case or file_case(name, validate=False)).needs_torch
    except BadInput:   # the child says what is wrong with it
        return False


def resolve(name: str) -> Case:
    """A catalog id, a model file (its door picked by the file itself), or DOOR:FILE;
    otherwise a BadInput with suggestions. A file is validated now (no TVM): bad input is
    exit 2 naming the file, never a verdict."""
    by_id = {c.id: c for c in catalog()}
    if name in by_id:
        return by_id[name]
    if names_file(name):
        return file_case(name)
    raise BadInput(f"unknown case {name!r}{_suggestions(name)}")


def names_file(name: str) -> bool:
    """`name` means a file, not a case id or glob: DOOR:FILE, a door's suffix, a path."""
    kind, sep, _ = name.partition(":")
    suffixes = tuple(suffix for door in doors.DOORS for suffix in door.suffixes)
    return bool(sep and kind in sources.FILE_KINDS) or name.endswith(suffixes) or os.sep in name \
        or os.path.isfile(name)


def file_case(name: str, validate: bool = True) -> Case:
    """The case of a user's file: `FILE` (its door picked by the file) or `DOOR:FILE`. Its
    id is the absolute path (`DOOR:` kept where it is not the file's own door)."""
    kind, sep, ref = name.partition(":")
    if sep and kind not in sources.FILE_KINDS and not os.path.exists(name) \
            and os.path.exists(ref) and os.sep not in kind:
        raise BadInput(f"unknown door {kind!r} in {name!r}; DOOR:FILE names one of "
                       f"{', '.join(door.name for door in doors.DOORS)} (or give the file "
                       "alone: its door is picked by the file)")
    if not (sep and kind in sources.FILE_KINDS):
        kind, ref = "file", name
    path = os.path.abspath(ref)
    if not os.path.exists(path):
        raise BadInput(f"no such file: {ref}")
    if os.path.isdir(path):
        raise BadInput(f"{ref} is a directory; pass a model file or a case id")
    door = doors.for_file(path) if kind == "file" \
        else doors.named(sources.SOURCE_DOORS.get(kind, kind))
    if not path.endswith(door.suffixes):
        raise BadInput(f"{ref}: the {door.name} door reads {' and '.join(door.suffixes)} files; "
                       f"without the `{kind}:` prefix a file finds its own door")
    if validate:
        door.validate(path)
    own = kind == "file" or door.name == _own_door(path)
    return Case(path if own else f"{door.name}:{path}", f"{door.name}:{path}", ("file",))


def _own_door(path: str) -> str | None:
    try:
        return doors.for_file(path).name
    except BadInput:
        return None


def _suggestions(name: str) -> str:
    close = difflib.get_close_matches(name, [c.id for c in catalog()], n=3, cutoff=0.5)
    if close:
        return f"; did you mean {', '.join(close)}?"
    return "; `python -m harness list` shows them"

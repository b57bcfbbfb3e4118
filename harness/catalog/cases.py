"""The case catalog: manifests from cases/catalog.toml plus models found in the onnx wheel.

A user's catalog adds to the built-in one: each folder `HARNESS_CASES` names
(os.pathsep-separated; the CLI's `--cases DIR` sets it) may hold a catalog.toml
(its `builder:`, `darknet:` and `file:` sources resolve in that folder), a
known_issues.toml and reproducers/, exactly like the built-in `cases/`.
Listing never builds or loads a model, so `list` and pytest collection stay fast;
`Case.model()` does the work when a check needs it (catalog.sources: the source kinds,
their doors, the model built).
"""
from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import functools
import json
import os
import tomllib

from harness import doors, paths
from harness.catalog import sources
from harness.paths import REPO_ROOT
from harness.verdict import BadInput

CASES_DIR = os.path.join(REPO_ROOT, "cases")   # the built-in catalog and registry
USER_CASES = "HARNESS_CASES"


def case_dirs() -> list[str]:
    """The built-in cases/ folder, then every folder of a user's catalog, in order."""
    dirs = [CASES_DIR]
    for folder in os.environ.get(USER_CASES, "").split(os.pathsep):
        if not folder:
            continue
        if not os.path.isdir(folder):
            raise BadInput(f"{USER_CASES} (or --cases) names {folder!r}, which is not a "
                           "folder; it should hold a catalog.toml and/or known_issues.toml")
        folder = os.path.abspath(folder)
        if folder not in dirs:
            dirs.append(folder)
    return dirs


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    source: str                  # KIND:REF, a kind of catalog.sources
    tags: tuple[str, ...] = ()
    layout: str = "nchw"
    base: str = CASES_DIR        # the catalog folder its darknet:/builder:/file: refer to

    @property
    def slow(self) -> bool:
        return "slow" in self.tags

    @property
    def opt_in(self) -> bool:
        """Left out of default runs: tagged `slow` or `nightly` (outside the default
        samples of onnx-node and pytorch-converted models, the larger darknet models)."""
        return self.slow or "nightly" in self.tags

    @property
    def file(self) -> str | None:
        """The user's file a file source names (absolute), else None."""
        kind, _, ref = self.source.partition(":")
        return os.path.join(self.base, ref) if kind in sources.FILE_KINDS else None

    @property
    def door(self) -> doors.Door:
        """The door its model goes through (for a file: the file's own, without loading)."""
        kind = self.source.partition(":")[0]
        if kind == "file":
            return doors.for_file(self.file)
        if kind in sources.FILE_KINDS:
            return doors.named(sources.SOURCE_DOORS.get(kind, kind))
        if kind not in sources.SOURCE_DOORS:
            known = sorted(set(sources.SOURCE_DOORS) | set(sources.FILE_KINDS))
            raise BadInput(f"case {self.id}: unknown source kind {kind!r}; one of "
                           f"{', '.join(known)}")
        return doors.named(sources.SOURCE_DOORS[kind])

    @property
    def needs_torch(self) -> bool:
        """Its model comes through torch (the PyTorch door, or its ONNX twin)."""
        return self.door.extra == "torch"

    @property
    def onnx_graph(self) -> bool:
        """Its model is an ONNX graph (the reducer cuts the graph before the module)."""
        return self.door.onnx_graph

    @property
    def model_group(self) -> str:
        """The model its rows share work with (sources.model_group): its other layouts,
        and a torchvision model's ONNX twin."""
        return sources.model_group(self.source)

    def model(self):
        """The model its door imports (an onnx.ModelProto, a torch model, a Relax module)."""
        return sources.model(self)

    def manifest(self) -> dict:
        """id, source, door, tags, layout and the input shapes, from metadata only: no
        export, no TVM (a builder's small graph is built). A torch model its exporter
        refused before says so (`refused`)."""
        from harness.catalog import manifests
        return {"id": self.id, "source": self.source, "door": self.door.name,
                "tags": list(self.tags), "layout": self.layout, **manifests.metadata(self)}


def _discover(rule: dict, slow: set[str]) -> list[Case]:
    if rule.get("generated") == "onnx-node":
        return _discover_onnx_node(rule, slow)
    if rule.get("generated") == "torch":
        return _discover_torch(rule, slow)
    base = os.path.join(sources.onnx_data_dir(), rule["dir"])
    if not os.path.isdir(base):
        return []
    wanted = set(rule.get("ops", []))
    op_types = _OpTypes() if wanted else None
    found = []
    sample = _Sample(rule, "dir " + rule["dir"])
    for entry in sorted(os.listdir(base)):
        path = os.path.join(base, entry)
        if os.path.isdir(path):
            path = os.path.join(path, "model.onnx")
        if not path.endswith(".onnx") or not os.path.exists(path):
            continue
        case_id = os.path.splitext(entry)[0].removeprefix("test_")
        if wanted and not wanted & op_types.of(path):
            continue
        source = "onnx-wheel:" + os.path.relpath(path, sources.onnx_data_dir())
        for layout in rule.get("layouts", ["nchw"]):
            variant = case_id if layout == "nchw" else f"{case_id}-{layout}"
            tags = _tags(rule.get("tags", []), variant, slow)
            tags += (("layout",) if layout != "nchw" else ()) + sample.tags(case_id)
            found.append(Case(variant, source, tags, layout))
    if op_types is not None:
        op_types.save()
    sample.check(found)
    return found


class _Sample:
    """A rule's `default` list: the default run's sample of a large family; the rest of
    the family is tagged `nightly`. No list: every case is in the default run."""

    def __init__(self, rule: dict, name: str):
        self.name = name
        self.default = set(rule["default"]) if "default" in rule else None

    def tags(self, case_id: str) -> tuple[str, ...]:
        return () if self.default is None or case_id in self.default else ("nightly",)

    def check(self, found: list[Case]) -> None:
        unknown = (self.default or set()) - {case.id for case in found}
        if unknown:
            raise BadInput(f"catalog.toml: the default selection of {self.name} names "
                           f"unknown cases {sorted(unknown)}")


def _discover_onnx_node(rule: dict, slow: set[str]) -> list[Case]:
    """The ONNX project's node tests whose operator touches layout (the rule's `default`
    list is the default run's sample)."""
    from harness.catalog import onnx_node
    wanted = set(rule.get("ops", []))
    sample = _Sample(rule, "onnx-node")
    found = []
    for name, ops in sorted(onnx_node.manifest().items()):
        # `_expanded` variants run the same test through the op's function body: other ops.
        if "_expanded" in name or (wanted and not wanted & set(ops)):
            continue
        case_id = "node-" + name.removesuffix(".onnx").removeprefix("test_")
        for layout in rule.get("layouts", ["nchw"]):
            variant = case_id if layout == "nchw" else f"{case_id}-{layout}"
            tags = _tags(rule.get("tags", []), variant, slow)
            tags += (("layout",) if layout != "nchw" else ()) + sample.tags(case_id)
            found.append(Case(variant, "onnx-node:" + name, tags, layout))
    sample.check(found)
    return found


def _discover_torch(rule: dict, slow: set[str]) -> list[Case]:
    """The PyTorch door's models and their ONNX twins (catalog.torch_cases)."""
    from harness.catalog import torch_cases
    sample = _Sample(rule, "torch")
    found = []
    heavy = set(rule.get("slow_models", []))
    for case_id, source, family_tags in torch_cases.discover(rule):
        size_tags = ("slow",) if source.partition(":")[2] in heavy else ()
        for layout in rule.get("layouts", ["nchw"]):
            variant = case_id if layout == "nchw" else f"{case_id}-{layout}"
            tags = _tags(rule.get("tags", []), variant, slow) + family_tags + size_tags
            # the sample names variants: the default run cannot afford both layouts
            tags += (("layout",) if layout != "nchw" else ()) + sample.tags(variant)
            found.append(Case(variant, source, tags, layout))
    sample.check(found)
    return found


class _OpTypes:
    """The op types of ONNX files, remembered on disk by path, size and mtime: listing the
    catalog reads 82 of the wheel's models, and importing onnx to do it cost every CLI
    start (and every check's child) about 0.7 s. Read once and written once per rule:
    what a listing learned is saved whole and atomically (another process may read it
    meanwhile); a cache that cannot be read or written is only slower."""

    def __init__(self):
        self.path = os.path.join(paths.cache_dir(), "onnx-op-types.json")
        self.learned = False
        try:
            with open(self.path) as handle:
                data = json.load(handle)
            self.known = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.known = {}      # none yet, or unreadable: read the models again

    def of(self, path: str) -> set[str]:
        stat = os.stat(path)
        key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
        if key not in self.known:
            import onnx
            model = onnx.load(path, load_external_data=False)
            self.known[key] = sorted({node.op_type for node in model.graph.node})
            self.learned = True
        return set(self.known[key])

    def save(self) -> None:
        if not self.learned:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            partial = f"{self.path}.{os.getpid()}.partial"
            with open(partial, "w") as handle:
                json.dump(self.known, handle)
            os.replace(partial, self.path)
        except OSError:
            pass


def _tags(tags, case_id: str, slow: set[str]) -> tuple[str, ...]:
    return tuple(tags) + (("slow",) if case_id in slow else ())


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
        cases = [Case(c["id"], c["source"], _tags(c.get("tags", []), c["id"], slow),
                      c.get("layout", "nchw"), folder) for c in data.get("case", [])]
    except KeyError as exc:
        raise BadInput(f"{path}: every [[case]] needs an id and a source (missing {exc})") \
            from None
    for rule in data.get("discover", []):
        cases += [dataclasses.replace(case, base=folder) for case in _discover(rule, slow)]
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

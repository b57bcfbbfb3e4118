"""The catalog's large families, found rather than listed: a folder of the onnx wheel's
models, the ONNX project's node tests, the PyTorch door's models.

A [[discover]] rule names the family; its `default` list is the default run's sample (the
rest tagged `nightly`). Listing reads metadata only: the op types of the wheel's models
are remembered on disk (_OpTypes), torch's models come from a listing file.
"""
from __future__ import annotations

import json
import os

from harness import paths
from harness.catalog import sources
from harness.catalog.case import Case, with_slow
from harness.verdict import BadInput


def discover(rule: dict, slow: set[str], taken_ops: set[str] = frozenset()) -> list[Case]:
    """The cases a [[discover]] rule finds: a folder of the onnx wheel's models, the ONNX
    node tests, or the PyTorch door's models. `taken_ops`: the operators earlier onnx-node
    rules of the same catalog took (a rule with `others = true` takes the rest)."""
    if rule.get("generated") == "onnx-node":
        return _discover_onnx_node(rule, slow, taken_ops)
    if rule.get("generated") == "torch":
        return _discover_torch(rule, slow)
    if rule.get("generated") == "torch-ops":
        return _discover_torch_ops(rule, slow)
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
            tags = with_slow(rule.get("tags", []), variant, slow)
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


def _discover_onnx_node(rule: dict, slow: set[str], taken_ops: set[str]) -> list[Case]:
    """The ONNX project's node tests: those of the rule's `ops`, or with `others = true`
    every test no earlier rule took and every `_expanded` variant (the same test through
    the operator's function body: a small graph of other operators, tagged `expanded`).
    The rule's `default` list is the default run's sample."""
    from harness.catalog import onnx_node
    wanted = set(rule.get("ops", []))
    others = bool(rule.get("others"))
    sample = _Sample(rule, "onnx-node" + (" (others)" if others else ""))
    found = []
    for name, ops in sorted(onnx_node.manifest().items()):
        expanded = "_expanded" in name
        if others:
            if not expanded and set(ops) & taken_ops:
                continue
        elif expanded or (wanted and not wanted & set(ops)):
            continue
        case_id = onnx_node.case_id(name)
        for layout in rule.get("layouts", ["nchw"]):
            variant = case_id if layout == "nchw" else f"{case_id}-{layout}"
            tags = with_slow(rule.get("tags", []), variant, slow)
            tags += (("layout",) if layout != "nchw" else ()) + (("expanded",) if expanded
                                                                 else ())
            found.append(Case(variant, "onnx-node:" + name, tags + sample.tags(case_id),
                              layout))
    sample.check(found)
    return found


def _discover_torch_ops(rule: dict, slow: set[str]) -> list[Case]:
    """PyTorch's OpInfo samples through the PyTorch door, from the catalog's listing file
    (catalog.torch_ops): no torch imported to list them."""
    from harness.catalog import torch_ops
    sample = _Sample(rule, "torch-ops")
    found = [Case(case_id, f"torch-op:{case_id}",
                  with_slow(rule.get("tags", []), case_id, slow) + sample.tags(case_id))
             for case_id in sorted(torch_ops.listing().get("cases", {}))]
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
            tags = with_slow(rule.get("tags", []), variant, slow) + family_tags + size_tags
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
            paths.write_shared(self.path, json.dumps(self.known))
        except OSError:
            pass

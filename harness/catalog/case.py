"""One case of the catalog: an id, where its model comes from, its tags and layout.

What a case is, apart from how catalogs are read (catalog.cases) and how the large
families are found (catalog.discovery): its door, its model and its manifest are asked of
catalog.sources, without loading anything until a check needs the model.
"""
from __future__ import annotations

import dataclasses
import os

from harness import doors
from harness.catalog import sources
from harness.paths import REPO_ROOT
from harness.verdict import BadInput

CASES_DIR = os.path.join(REPO_ROOT, "cases")   # the built-in catalog and registry


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


def with_slow(tags, case_id: str, slow: set[str]) -> tuple[str, ...]:
    """A case's tags, and `slow` when its catalog's [slow] list names it."""
    return tuple(tags) + (("slow",) if case_id in slow else ())

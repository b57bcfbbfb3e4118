"""Target determination: the checks a change can affect, each with why it is in.

From what the change touches (premerge/touched) and what each check exercises
(premerge/exercised):

* a converter changed -> the catalog cases whose import uses it, on the compile path
  (the import, then the compiled module's answers against the framework's: a converter
  that breaks either raises or answers wrong). Per converter, the cases testing it by
  name first (`node-resize_*` for Resize), then the rest, up to `per_converter`;
* a change the converter map cannot narrow (a constant shared by every converter) -> a
  set of the frontend's cases covering every converter they exercise (greedy cover);
* a pass changed -> its sweep rows (`passes --pass NAME` on the sample cases at every
  point) and the sample on the paths whose pipelines run it (those the recorded report
  rows ran it on; both where no report recorded passes);
* TIR lowering or code generation -> the sample on the compile path;
* a file nothing maps -> the default selection (the sample on both paths), said;
* every change but an inert one -> the registry's reproducers (a fix is named by the
  reproducer that stops reproducing; a break by one that starts failing differently).
and, for any file or pass but an inert one, the cases the registry's bugs at that file or
in that pass showed on (premerge/history). A change of inert files alone (docs, TVM's
tests, CI) selects nothing.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from harness.premerge.exercised import MAPS_OF_FOLDER, Exercised
from harness.premerge.history import History, Remembered
from harness.premerge.touched import Area, Touched

SAMPLE = ("yolov3-tiny-nhwc", "conv-reshape-concat")   # the watch's default report
PATHS = ("extract", "compile")
PER_CONVERTER = 12


@dataclasses.dataclass
class Selection:
    """What to run on both sides, and the reasons: {path: {case: [why]}}, {pass: [why]}."""
    cases: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)
    passes: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    reproducers: list[str] = dataclasses.field(default_factory=list)   # why, "" if none
    notes: list[str] = dataclasses.field(default_factory=list)          # said, not run
    inert: list[str] = dataclasses.field(default_factory=list)

    def add_case(self, path: str, case: str, why: str) -> None:
        reasons = self.cases.setdefault(path, {}).setdefault(case, [])
        if why not in reasons:
            reasons.append(why)

    @property
    def empty(self) -> bool:
        return not (self.cases or self.passes or self.reproducers)

    def size(self) -> int:
        """Checks selected (a case on a path, a pass's sweep, the reproducers as one)."""
        return sum(len(by_case) for by_case in self.cases.values()) + len(self.passes) + \
            (1 if self.reproducers else 0)

    def to_json(self) -> dict[str, object]:
        return {"cases": self.cases, "passes": self.passes, "reproducers": self.reproducers,
                "notes": self.notes, "inert": self.inert, "checks": self.size()}


def select(touched: list[Touched], exercised: Exercised, catalog_maps: dict[str, str | None],
           per_converter: int = PER_CONVERTER, history: History | None = None,
           default: tuple[str, ...] = SAMPLE) -> Selection:
    """`catalog_maps`: every catalog case id -> its door's converter map (None: no map);
    `history`: the registry's bugs by file and pass, whose cases a change there adds;
    `default`: what a file nothing maps selects (on both paths)."""
    selection = Selection()
    history = history or History()
    for item in touched:
        # a frontend's file holds every converter: a changed converter selects its own
        # cases (below), and the file's bugs only when the change reaches every converter
        by_file = item.area not in (Area.INERT, Area.FRONTEND) or \
            (item.area == Area.FRONTEND and (item.whole_frontend or not item.converters))
        if by_file:
            _remembered(selection, history.by_file.get(item.path, ()),
                        f"{item.path} changed", per_converter)
            for name in sorted(item.passes):
                _remembered(selection, history.by_pass.get(name, ()),
                            f"pass {name} changed", per_converter)
        if item.area == Area.INERT:
            selection.inert.append(item.path)
        elif item.area == Area.FRONTEND:
            _frontend(selection, item, exercised, catalog_maps, per_converter)
        elif item.area == Area.PASS:
            for name in sorted(item.passes):
                _pass(selection, item, name, exercised)
        elif item.area == Area.LOWERING:
            for case in SAMPLE:
                selection.add_case("compile", case, f"{item.path}: {item.why}: the "
                                                    "compile-path sample")
        else:
            for path in PATHS:
                for case in default:
                    selection.add_case(path, case, f"{item.path}: {item.why}: the default "
                                                   "selection")
    if len(selection.inert) < len(touched):
        selection.reproducers.append("the registry's reproducers: always (a fix is named by "
                                     "the one that stops reproducing)")
    return selection


def _remembered(selection: Selection, remembered: Iterable[Remembered], why: str,
                per_converter: int) -> None:
    for bug in remembered:
        for path in bug.paths:
            for case in bug.cases[:per_converter]:
                selection.add_case(path, case, f"{why}: registered bug {bug.entry} showed "
                                               "on it")


def _pass(selection: Selection, item: Touched, name: str, exercised: Exercised) -> None:
    """Its sweep rows, and the sample on each path whose pipeline runs it: the paths the
    recorded report rows ran it on, both when no report recorded passes."""
    selection.passes.setdefault(name, []).append(f"{item.path} {item.why}")
    recorded = exercised.paths_running(name)
    paths = PATHS if recorded is None else [path for path in PATHS if path in recorded]
    how = "whose pipeline runs it" if recorded is None else \
        "whose recorded checks ran it on this path"
    for path in paths:
        for case in SAMPLE:
            selection.add_case(path, case, f"pass {name} changed: the sample, {how}")
    if recorded is not None and not paths:
        selection.notes.append(f"pass {name}: no recorded check's pipeline runs it (the "
                               "reports given): its sweep rows alone")


def _frontend(selection: Selection, item: Touched, exercised: Exercised,
              catalog_maps: dict[str, str | None], per_converter: int) -> None:
    maps = MAPS_OF_FOLDER.get(item.frontend, ())
    if item.whole_frontend:
        chosen = cover(exercised, maps, catalog_maps)
        for case in chosen:
            selection.add_case("compile", case, f"{item.path}: {item.why}: a cover of the "
                                                "frontend's converters")
        if not chosen:
            _no_record(selection, item, maps, catalog_maps)
        return
    if not item.converters:
        selection.notes.append(f"{item.path}: {item.why}: no check to add")
        return
    for converter in sorted(item.converters):
        picked = []
        for frontend in maps:
            users = exercised.cases_using(frontend, converter)
            picked += by_name_first(users, converter, exercised, frontend)
        if not picked:
            unrecorded = _unrecorded_cases(exercised, maps, catalog_maps)
            if unrecorded and len(unrecorded) <= per_converter:
                picked = unrecorded   # a frontend of a few cases: all of them
                selection.notes.append(f"converter {converter}: no record of which cases use "
                                       f"it: all {len(unrecorded)} unrecorded cases of its "
                                       "frontend")
            else:
                selection.notes.append(f"converter {converter} ({item.path}): no catalog "
                                       "case exercises it" +
                                       _unrecorded(exercised, maps, catalog_maps))
        for case in picked[:per_converter]:
            selection.add_case("compile", case, f"converter {converter} changed ({item.path})")
        if len(picked) > per_converter:
            selection.notes.append(f"converter {converter}: {per_converter} of the "
                                   f"{len(picked)} cases that exercise it (those testing it "
                                   "alone first)")


def by_name_first(cases: list[str], converter: str, exercised: Exercised,
                  frontend: str) -> list[str]:
    """Cases exercising `converter`, those that exercise least besides it first (a node
    test of that operator alone), then by id."""
    return sorted(cases, key=lambda case: (len(exercised.converters[frontend][case]), case))


def cover(exercised: Exercised, maps: tuple[str, ...],
          catalog_maps: dict[str, str | None]) -> list[str]:
    """A few cases that together exercise every converter any case of these maps does
    (greedy set cover: the case adding most unexercised converters next)."""
    candidates = {case: used for frontend in maps
                  for case, used in exercised.converters.get(frontend, {}).items()
                  if case in catalog_maps}
    wanted = set().union(*candidates.values()) if candidates else set()
    chosen = []
    while wanted:
        case = max(sorted(candidates), key=lambda name: len(candidates[name] & wanted))
        gained = candidates[case] & wanted
        if not gained:
            break
        chosen.append(case)
        wanted -= gained
    return chosen


def _no_record(selection: Selection, item: Touched, maps: tuple[str, ...],
               catalog_maps: dict[str, str | None]) -> None:
    selection.notes.append(f"{item.path}: {item.why}: no case of the frontend has a record "
                           "of its converters" + _unrecorded(Exercised(), maps, catalog_maps))
    for case in SAMPLE:
        selection.add_case("compile", case, f"{item.path}: the default selection (no record)")


def _unrecorded_cases(exercised: Exercised, maps: tuple[str, ...],
                      catalog_maps: dict[str, str | None]) -> list[str]:
    return sorted(case for case, frontend in catalog_maps.items()
                  if frontend in maps and not exercised.recorded(case))


def _unrecorded(exercised: Exercised, maps: tuple[str, ...],
                catalog_maps: dict[str, str | None]) -> str:
    missing = _unrecorded_cases(exercised, maps, catalog_maps)
    if not missing:
        return ""
    return (f"; {len(missing)} case(s) through this frontend have no record of their "
            "converters (`try --record` measures them)")

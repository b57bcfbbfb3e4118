"""The pass sweep's part of the nightly plan, before and after the memo and its units.

Each default case costs what one job spends sweeping it: `small` seconds, or `heavy` for
the heavy ones (measured: docs/explanation/findings.md), a point the prefix cannot reach
`unreachable` seconds per check (a check that imports and fails at once). From
bench/sweep_inputs.py's file (each (case, point)'s input key), after the change:
  * a point whose input repeats an earlier case's costs nothing (every pass remembered);
  * an unreachable point costs one probe; every reachable point one more prefix (its
    probe, counted as one check);
and the shard units are (model, pass group) (harness.cli.sweep_units), against before:
  * whole cases, as the plan modelled the sweep (a heavy case on one shard), and
  * single checks, as `passes --shard` split them (balanced, but a model's layouts fall
    on different shards, so nothing could be remembered across them).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import math

from harness import shards
from harness.cli.sweep_units import UNITS_PER_SHARD

POINTS = ("imported", "legalized", "fused")
CHECKS_PER_CASE = 251   # 64 relax passes at 3 points, 50 TIR at 2 (docs/explanation/findings.md)
PASSES = 99             # the units of one model: at most one per pass


@dataclasses.dataclass
class Costs:
    small: float = 40.0
    heavy: float = 2100.0
    unreachable: float = 0.3
    heavy_globs: tuple = ("yolov3-tiny*", "light_*")


def per_case(cases, inputs: dict, costs: Costs) -> dict[str, tuple[str, float, float]]:
    """{case: (model, seconds before, seconds after)}."""
    seen_keys: set[str] = set()
    out = {}
    for case in cases:
        whole = costs.heavy if any(fnmatch.fnmatch(case.id, glob) for glob in costs.heavy_globs) \
            else costs.small
        points = inputs.get(case.id, {point: "unknown" for point in POINTS})
        check = whole / CHECKS_PER_CASE
        before = after = 0.0
        for point in POINTS:
            key = points.get(point)
            if key is None:   # the prefix fails: every check there fails at once
                before += CHECKS_PER_CASE / 3 * costs.unreachable
                after += costs.unreachable
                continue
            before += whole / 3
            if key == "unknown" or key not in seen_keys:
                after += whole / 3 + check
            if key != "unknown":
                seen_keys.add(key)
        out[case.id] = (f"{case.base}|{case.source}", before, after)
    return out


def plan(costed: dict, count: int) -> dict[str, tuple[float, float]]:
    """{way: (runner seconds, slowest shard's seconds)} of the sweep over `count` shards."""
    before = {case: seconds for case, (_, seconds, _) in costed.items()}
    total_before = sum(before.values())
    whole = shards.split(list(before), str, count, before)
    ways = {"before: whole cases": (total_before, max(
        sum(before[case] for case in part) for part in whole)),
        "before: single checks": (total_before, total_before / count)}
    units = units_after(costed, count)
    split = shards.split(list(units), str, count, units)
    ways["after: (model, pass group) + memo"] = (sum(units.values()), max(
        sum(units[unit] for unit in part) for part in split))
    return ways


def units_after(costed: dict, count: int) -> dict[str, float]:
    """{(model, pass group) unit: seconds} as harness.cli.sweep_units makes them, with a
    model's passes taken as equally heavy."""
    models: dict[str, float] = {}
    for model, _, seconds in costed.values():
        models[model] = models.get(model, 0.0) + seconds
    target = sum(models.values()) / count / UNITS_PER_SHARD
    units = {}
    for model, seconds in models.items():
        groups = max(1, min(PASSES, math.ceil(seconds / target)))
        units.update({f"{model}#{index}": seconds / groups for index in range(groups)})
    return units

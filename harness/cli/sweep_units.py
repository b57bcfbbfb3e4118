"""The sweep's shard units: (model, pass group), so that a shard both balances and remembers.

A shard takes whole units. A unit is every check of a group of passes on one model: all
its cases (the layouts of one source) and points. So the inputs that are identical
because they come from one model (measured on the default catalog, 0.27: all 20 repeated
pass inputs are a model's NCHW and NHWC cases at one point) meet in one shard, whose memo
checks each once: the deterministic assignment of (pass, input) keys to shards. (A memo
file shared between shards was the other way: the nightly's shards run at once on
separate runners and could read only another night's, and a memo that outlives a run
stops an unchanged build from being checked again.) Inputs identical across two models
would be checked once per shard they fall in; none are measured so far.

A model's passes are split into as many groups as its recorded cost needs so that no unit
outweighs a quarter of a shard's share: a heavy model (yolov3-tiny, the light_* models)
is spread over shards by pass, and no shard waits on it alone. Passes are dealt longest
first onto the lightest group, as shards.split deals units onto shards: the same inputs
give the same units in every shard.
"""
from __future__ import annotations

import math
from typing import Callable

from harness import shards

UNITS_PER_SHARD = 4   # a unit is at most about this fraction of one shard's share


def model_of(case) -> str:
    """The model a case checks: its source (a case's layouts share it), and the catalog
    folder a relative file names it from."""
    return f"{case.base}|{case.source}"


def units(work: list, cost: Callable[[tuple], float], count: int) -> dict[str, list]:
    """{unit key: its checks, in `work`'s order} for `count` shards."""
    by_model: dict[str, dict[str, float]] = {}
    for item in work:
        swept, case, _ = item
        passes = by_model.setdefault(model_of(case), {})
        passes[swept] = passes.get(swept, 0.0) + cost(item)
    share = sum(map(sum, (passes.values() for passes in by_model.values()))) / max(count, 1)
    target = share / UNITS_PER_SHARD
    group_of: dict[tuple[str, str], str] = {}
    for model, passes in by_model.items():
        groups = max(1, min(len(passes), math.ceil(sum(passes.values()) / target)
                            if target > 0 else 1))
        loads = [0.0] * groups
        for swept in sorted(passes, key=lambda name: (-passes[name], name)):
            lightest = min(range(groups), key=lambda index: (loads[index], index))
            loads[lightest] += passes[swept]
            group_of[(model, swept)] = f"passes:{model}#{lightest + 1}/{groups}"
    out: dict[str, list] = {}
    for item in work:
        out.setdefault(group_of[(model_of(item[1]), item[0])], []).append(item)
    return out


def select(work: list, cost: Callable[[tuple], float], shard: shards.Shard | None) -> list:
    """This shard's checks (all of them without a shard), in `work`'s order."""
    if shard is None:
        return work
    split = units(work, cost, shard.count)
    durations = {key: sum(map(cost, items)) for key, items in split.items()}
    mine = shards.split(list(split), str, shard.count, durations)[shard.number - 1]
    chosen = {id(item) for key in mine for item in split[key]}
    return [item for item in work if id(item) in chosen]


def cost_of(durations: dict[str, float], key: Callable[[tuple], str]) -> Callable[[tuple], float]:
    """A check's recorded seconds; one with none costs the median check that ran (shards'
    rule; a remembered check is recorded as 0 s, and is 0 s again beside its twin, which
    its unit always holds)."""
    default = shards.unrecorded_cost([seconds for seconds in durations.values() if seconds > 0])
    return lambda item: durations.get(key(item), default)

"""Shards: one part of a selection, so N CI runners share a run that one machine outgrows.

`--shard K/N` (1 <= K <= N), or TVM's CI convention `TVM_NUM_SHARDS=N` with a 0-based
`TVM_SHARD_INDEX`. The split is deterministic and balanced by recorded durations
(a JSON file {key: seconds}, as pytest-split keeps one): items are dealt longest first
to the shard with the least time so far, ties to the lower shard, an item with no
record counted as the median recorded one. The N shards of a selection are disjoint
and together are the selection (tests/test_shards.py).
"""
from __future__ import annotations

import dataclasses
import json
import os
import statistics
from typing import Callable, Iterable, TypeVar

from harness.verdict import BadInput

Item = TypeVar("Item")
ENV_COUNT, ENV_INDEX = "TVM_NUM_SHARDS", "TVM_SHARD_INDEX"


@dataclasses.dataclass(frozen=True)
class Shard:
    number: int   # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.number}/{self.count}"


def parse(text: str, flag: str = "--shard") -> Shard:
    number, _, count = text.partition("/")
    try:
        shard = Shard(int(number), int(count))
    except ValueError:
        raise BadInput(f"{flag} {text!r}: give K/N, e.g. 2/4 (the second of four)") from None
    if not 1 <= shard.number <= shard.count:
        raise BadInput(f"{flag} {text!r}: K must be between 1 and N")
    return shard


def chosen(text: str | None, environ=os.environ) -> Shard | None:
    """The shard asked for: the option, else TVM's environment variables, else None."""
    if text:
        return parse(text)
    if environ.get(ENV_COUNT):
        count, index = environ[ENV_COUNT], environ.get(ENV_INDEX, "0")
        try:
            return parse(f"{int(index) + 1}/{int(count)}", f"{ENV_COUNT}/{ENV_INDEX}")
        except ValueError:
            raise BadInput(f"{ENV_COUNT}={count!r} {ENV_INDEX}={index!r}: give numbers "
                           f"({ENV_INDEX} counts from 0)") from None
    return None


def read_durations(path: str | None) -> dict[str, float]:
    """{key: seconds} from a durations file; none when no file is given or it is missing."""
    if not path or not os.path.exists(path):
        return {}
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise BadInput(f"--durations {path}: not a JSON file of {{key: seconds}} ({exc})") \
            from None
    return {str(key): float(value) for key, value in data.items()}


def unrecorded_cost(recorded: list[float]) -> float:
    """What an item with no recorded duration counts: the median recorded one (1 s when
    nothing is recorded)."""
    return statistics.median(recorded) if recorded else 1.0


def split(items: Iterable[Item], key: Callable[[Item], str], count: int,
          durations: dict[str, float] | None = None) -> list[list[Item]]:
    """All `count` shards of `items`, each in the items' own order."""
    items = list(items)
    durations = durations or {}
    default = unrecorded_cost([durations[key(item)] for item in items if key(item) in durations])
    cost = {id(item): durations.get(key(item), default) for item in items}
    totals, owner = [0.0] * count, {}
    for item in sorted(items, key=lambda item: (-cost[id(item)], key(item))):
        lightest = min(range(count), key=lambda index: (totals[index], index))
        totals[lightest] += cost[id(item)]
        owner[id(item)] = lightest
    return [[item for item in items if owner[id(item)] == index] for index in range(count)]


def select(items: Iterable[Item], key: Callable[[Item], str], shard: Shard | None,
           durations: dict[str, float] | None = None) -> list[Item]:
    """This shard's part of `items` (all of them without a shard)."""
    items = list(items)
    if shard is None:
        return items
    return split(items, key, shard.count, durations)[shard.number - 1]


def select_groups(items: Iterable[Item], group: Callable[[Item], str], shard: Shard | None,
                  cost: Callable[[str], float]) -> list[Item]:
    """This shard's part of `items`, each group of items whole in one shard: a group's
    items share work one machine does once (report: a model's rows import one module,
    copied once a build, and its ONNX twin is made from its cached torch export). Groups
    are dealt as `split` deals items, weighed by `cost(group)`; the items keep their
    order. Two selections weighed alike put a group in the same shard."""
    items = list(items)
    if shard is None:
        return items
    names = sorted({group(item) for item in items})
    mine = set(split(names, str, shard.count, {name: cost(name) for name in names})
               [shard.number - 1])
    return [item for item in items if group(item) in mine]


def write_durations(path: str, measured: dict[str, float]) -> None:
    """Merge `measured` into a durations file (`--store-durations`). Shards read one file
    and write another: a file that changes between two shards' reads would split the
    selection two ways."""
    data = read_durations(path)
    data.update({key: round(seconds, 2) for key, seconds in measured.items()})
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump(dict(sorted(data.items())), handle, indent=1)
    os.replace(partial, path)

"""The nightly's shards, planned from measured durations: per-shard and total time for N.

Reads the journals of runs already made (report rows carry each row's wall time,
guard-suite rows each file's seconds, pytest's `--harness-store-durations` file each
item's) and splits every part of the nightly with the shards' own rule
(harness.shards.split: longest first onto the least-loaded shard), as the job matrix
does with one shard index for every step. A shard's time is the sum of its parts;
the nightly's wall time is its slowest shard. The pass sweep has no per-check times in
its journal: give `--sweep-seconds-per-case S` (one job's seconds for a small case's ~251
checks) and `--sweep-heavy-seconds S` for the cases whose extract takes 4x the median
one or more (their weights dominate every copy); docs/findings.md has both measured.

Usage: python bench/nightly_plan.py --report DIR [--report DIR ...] [--guard-suite DIR]
        [--pytest-durations FILE] [--sweep-seconds-per-case S] [--sweep-heavy-seconds S]
        [--shards 1,2,4,8]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import jsonl, shards


def _rows(folder: str, name: str) -> list[dict]:
    path = os.path.join(folder, name)
    return [record["row"] for record in jsonl.read(path) if "row" in record]


def parts(args) -> dict[str, dict[str, float]]:
    """{part of the nightly: {unit: seconds}}."""
    out: dict[str, dict[str, float]] = {}
    extract_walls: dict[str, float] = {}
    for folder in args.report:
        for row in _rows(folder, "report-rows.jsonl"):
            path = row.get("path", "extract")
            out.setdefault(f"report {path}", {})[f"{row['case']}|{row.get('layout')}"] = \
                row["wall_seconds"]
            if path == "extract":
                extract_walls[row["case"]] = row["wall_seconds"]
    if args.guard_suite:
        out["guard-suite"] = {row["file"]: row["seconds"]
                              for row in _rows(args.guard_suite, "guard-suite-rows.jsonl")}
    if args.pytest_durations:
        out["pytest (not the catalog)"] = {
            key: seconds for key, seconds in shards.read_durations(args.pytest_durations).items()
            if "test_catalog.py" not in key}
    if args.sweep_seconds_per_case and extract_walls:
        # `passes` sweeps the default catalog (opt-in cases left out), as the nightly does
        from harness.catalog import cases as catalog
        swept = {case.id for case in catalog.select_for_run(None)} & set(extract_walls)
        middle = statistics.median(extract_walls[case] for case in swept)
        heavy = args.sweep_heavy_seconds or args.sweep_seconds_per_case
        out["pass sweep (estimated)"] = {
            case: heavy if extract_walls[case] >= 4 * middle else args.sweep_seconds_per_case
            for case in swept}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="append", default=[], metavar="DIR")
    parser.add_argument("--guard-suite", metavar="DIR")
    parser.add_argument("--pytest-durations", metavar="FILE")
    parser.add_argument("--sweep-seconds-per-case", type=float, default=0.0)
    parser.add_argument("--sweep-heavy-seconds", type=float, default=0.0)
    parser.add_argument("--shards", default="1,2,4,8,16")
    args = parser.parse_args()
    plan = parts(args)
    print(f"{'part':<28} {'units':>6} {'total h':>8}")
    for name, durations in plan.items():
        print(f"{name:<28} {len(durations):6d} {sum(durations.values()) / 3600:8.2f}")
    print(f"\n{'N':>3} {'slowest shard h':>16} {'fastest h':>10} {'sum h':>7}  "
          "slowest shard's parts")
    for count in (int(n) for n in args.shards.split(",")):
        per_shard = [0.0] * count
        breakdown = [dict() for _ in range(count)]
        for name, durations in plan.items():
            for index, units in enumerate(shards.split(list(durations), str, count, durations)):
                seconds = sum(durations[unit] for unit in units)
                per_shard[index] += seconds
                breakdown[index][name] = seconds
        slowest = max(range(count), key=lambda index: per_shard[index])
        parts_text = ", ".join(f"{name} {seconds / 60:.0f} min"
                               for name, seconds in breakdown[slowest].items())
        print(f"{count:3d} {per_shard[slowest] / 3600:16.2f} {min(per_shard) / 3600:10.2f} "
              f"{sum(per_shard) / 3600:7.2f}  {parts_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

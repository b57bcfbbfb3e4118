"""The nightly's shards, planned from measured durations: per-shard and total time for N.

Reads the journals of runs already made (report rows carry each row's wall time,
guard-suite rows each file's seconds, pytest's `--harness-store-durations` file each
item's) and splits every part of the nightly with the shards' own rule
(harness.shards.split: longest first onto the least-loaded shard), as the job matrix
does with one shard index for every step. A shard's time is the sum of its parts;
the nightly's wall time is its slowest shard. A model's report rows are one unit
(its layouts and ONNX twin: harness/cli/report.py deals them so). The pass sweep is
estimated per case (bench/sweep_plan.py): give `--sweep-seconds-per-case S` (one job's
seconds for a small case's ~251 checks) and `--sweep-heavy-seconds S` for the heavy
cases: those whose extract takes 4x the median one or more (their weights dominate every
copy), or, without `--report`, those `--sweep-heavy GLOB` names; docs/explanation/findings.md has
both measured.
`--sweep-inputs FILE` (bench/sweep_inputs.py) says which points repeat an input or
cannot be reached: the sweep is then planned as it runs now, (model, pass group) units
with the memo, and printed before/after for each N: runner hours and the slowest shard.

`--carry --commits N` also prints what a night costs on average when one commit of the
last N lands a night: a commit that touches the files a part's rows are made from
(harness/cli/row_code.py: their code and the catalog) makes that part's night a full one,
any other a carried one; beside it the rule before row_code, when any file under harness/
or cases/ (the nightly's carry cache key then) made every part's night a full one.

Usage: python bench/nightly_plan.py [--report DIR ...] [--guard-suite DIR]
        [--pytest-durations FILE] [--sweep-seconds-per-case S] [--sweep-heavy-seconds S]
        [--sweep-heavy GLOB ...] [--sweep-inputs FILE] [--shards 1,2,4,8,16]
        [--carry [--carry-refresh N] [--commits N]]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sweep_plan
from recorded import recorded

from harness import jsonl, paths, shards
from harness.cli import row_code


def _rows(folder: str, name: str) -> list[dict]:
    path = os.path.join(folder, name)
    return [record["row"] for record in jsonl.read(path) if "row" in record]


# The parts whose rows `--carry` takes from the night before (harness.cli.carry).
# {part name prefix: the command that makes its rows}: the parts `--carry` takes from
# the night before, each carried by the digest of its command's code (harness.cli.row_code).
CARRIED = {"report ": "report", "guard-suite": "guard-suite", "pass sweep": "passes"}


def carried_night(plan: dict[str, dict[str, float]], refresh: int) -> dict:
    """The plan of a night that carries: of each carried part, the share due for a real
    check (one row in `refresh`, harness.cli.carry.due), spread evenly; the rest whole."""
    return {name: ({unit: seconds / refresh for unit, seconds in durations.items()}
                   if name.startswith(tuple(CARRIED)) else durations)
            for name, durations in plan.items()}


def parts(args, count: int) -> dict[str, dict[str, float]]:
    """{part of the nightly: {unit: seconds}} for `count` shards."""
    from harness.catalog import cases as catalog
    model_of = {case.id: case.model_group for case in catalog.catalog()}
    out: dict[str, dict[str, float]] = {}
    extract_walls: dict[str, float] = {}
    for folder in args.report:
        for row in _rows(folder, "report-rows.jsonl"):
            path = row.get("path", "extract")
            # report deals a model's rows as one unit (its layouts and ONNX twin)
            units = out.setdefault(f"report {path}", {})
            unit = model_of.get(row["case"], row["case"])
            units[unit] = units.get(unit, 0.0) + row["wall_seconds"]
            if path == "extract":
                extract_walls[row["case"]] = row["wall_seconds"]
    if args.guard_suite:
        out["guard-suite"] = {row["file"]: row["seconds"]
                              for row in _rows(args.guard_suite, "guard-suite-rows.jsonl")}
    if args.pytest_durations:
        out["pytest (not the catalog)"] = {
            key: seconds for key, seconds in shards.read_durations(args.pytest_durations).items()
            if "test_catalog.py" not in key}
    if args.sweep_seconds_per_case:
        costed = sweep_costs(args, extract_walls)
        out["pass sweep (estimated)"] = sweep_plan.units_after(costed, count)
    return out


def sweep_costs(args, extract_walls: dict[str, float]) -> dict:
    """Each default case's sweep before and after (bench/sweep_plan.py): `passes` sweeps
    the default catalog (opt-in cases left out), as the nightly does."""
    from harness.catalog import cases as catalog
    swept = catalog.select_for_run(None)
    heavy = tuple(args.sweep_heavy or sweep_plan.Costs.heavy_globs)
    walled = [case.id for case in swept if case.id in extract_walls]
    if walled:   # the reports measured some swept case (the door's cases are not swept)
        middle = statistics.median(extract_walls[case] for case in walled)
        heavy = tuple(case for case in walled if extract_walls[case] >= 4 * middle)
    costs = sweep_plan.Costs(args.sweep_seconds_per_case,
                             args.sweep_heavy_seconds or args.sweep_seconds_per_case,
                             heavy_globs=heavy)
    inputs = {}
    if args.sweep_inputs:
        with open(args.sweep_inputs) as handle:
            inputs = json.load(handle)
    return sweep_plan.per_case(swept, inputs, costs)


def print_sweep(args, counts: list[int]) -> None:
    costed = sweep_costs(args, {})
    print(f"\npass sweep of the default catalog, {len(costed)} cases")
    print(f"{'N':>3} {'way':<38} {'runner h':>9} {'slowest shard h':>16}")
    for count in counts:
        for way, (total, slowest) in sweep_plan.plan(costed, count).items():
            print(f"{count:3d} {way:<38} {total / 3600:9.2f} {slowest / 3600:16.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="append", default=[], metavar="DIR")
    parser.add_argument("--guard-suite", metavar="DIR")
    parser.add_argument("--pytest-durations", metavar="FILE")
    parser.add_argument("--sweep-seconds-per-case", type=float, default=0.0)
    parser.add_argument("--sweep-heavy-seconds", type=float, default=0.0)
    parser.add_argument("--sweep-heavy", action="append", metavar="GLOB")
    parser.add_argument("--sweep-inputs", metavar="FILE")
    parser.add_argument("--shards", default="1,2,4,8,16")
    parser.add_argument("--carry", action="store_true",
                        help="also plan a night whose report, sweep and suite rows are carried")
    parser.add_argument("--carry-refresh", type=int, default=7,
                        help="with --carry: each row checked for real one night in N")
    parser.add_argument("--commits", type=int, default=0,
                        help="with --carry: the average night over the last N commits")
    args = parser.parse_args()
    counts = [int(n) for n in args.shards.split(",")]
    print(f"{'part':<28} {'units':>6} {'total h':>8}")
    for name, durations in parts(args, max(counts)).items():
        print(f"{name:<28} {len(durations):6d} {sum(durations.values()) / 3600:8.2f}")
    print_plan(lambda count: parts(args, count), counts)
    if args.carry:
        print(f"\na night that carries the report and sweep rows and the guarded suite's "
              "files (the same TVM stack, harness, catalog, TVM tests and packages as the "
              "night before: `report`, `passes` and `guard-suite --carry`), each row checked "
              f"for real one night in {args.carry_refresh}:")
        print_plan(lambda count: carried_night(parts(args, count), args.carry_refresh), counts)
        if args.commits:
            print_average_night(args, max(counts))
    if args.sweep_seconds_per_case:
        print_sweep(args, counts)
    return 0


def changed_files(commits: int) -> list[list[str]]:
    """The files each of the last `commits` commits of this checkout changed."""
    listed = subprocess.run(["git", "-C", paths.REPO_ROOT, "log", f"-{commits}",
                             "--name-only", "--format=format:@@"], capture_output=True, text=True,
                            check=True).stdout
    return [chunk.split() for chunk in listed.split("@@")[1:]]


def print_average_night(args, count: int) -> None:
    """Runner hours of the average night over the last commits, by the rule of each
    part's digest now and by the cache key before it. A part no command carries (the
    pytest items) is whole every night either way."""
    commits = changed_files(args.commits)
    full = parts(args, count)
    carried = carried_night(full, args.carry_refresh)

    def share(touches) -> float:
        return sum(1 for files in commits if any(touches(name) for name in files)) \
            / max(len(commits), 1)
    anything = share(lambda name: name.startswith(("harness/", "cases/")))
    print(f"\nthe average night over the last {len(commits)} commits, one a night "
          "(runner h per release set):")
    print(f"{'part':<28} {'full now':>9} {'full before':>12} {'now h':>7} {'before h':>9}")
    totals = [0.0, 0.0]
    for name in full:
        command = next((c for prefix, c in CARRIED.items() if name.startswith(prefix)), None)
        if command is None:
            now = before = 1.0
        else:
            code = set(row_code.files_of(command))
            now = share(lambda file, code=code: file in code)   # its code or the catalog
            before = anything
        hours_full, hours_carried = (sum(night[name].values()) / 3600
                                     for night in (full, carried))
        averages = [fraction * hours_full + (1 - fraction) * hours_carried
                    for fraction in (now, before)]
        totals = [total + average for total, average in zip(totals, averages, strict=True)]
        print(f"{name:<28} {now:9.0%} {before:12.0%} {averages[0]:7.2f} {averages[1]:9.2f}")
    print(f"{'all':<28} {'':>9} {'':>12} {totals[0]:7.2f} {totals[1]:9.2f}")


def print_plan(plan_of, counts: list[int]) -> None:
    """Per N: the slowest shard, the fastest, the sum, and the slowest shard's parts."""
    print(f"\n{'N':>3} {'slowest shard h':>16} {'fastest h':>10} {'sum h':>7}  "
          "slowest shard's parts")
    for count in counts:
        plan = plan_of(count)
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


if __name__ == "__main__":
    with recorded("nightly_plan"):
        code = main()
    sys.exit(code)

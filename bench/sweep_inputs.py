"""The pass sweep's inputs: each (case, point)'s key, which repeat, and what a key costs.

For every case of the selection (default: the default catalog) and every sweep point,
the module the swept pass receives (the prefix run in this process, unguarded: the guard
changes nothing that runs), keyed two ways: the structural hash alone, and the sweep's
key (runner.sweep_input: the hash and a digest of the JSON text). Prints how many inputs
repeat under each (a repeat is a check the memo answers for every pass), which inputs
the hash alone would merge although their JSON differs, which points cannot be reached
(the prefix fails: probed once, every pass answered), and the cost of hash, save_json and
digest on the largest modules. `--out FILE` writes {case: {point: key or null}} and the
costs, which bench/nightly_plan.py --sweep-inputs reads.

Usage: python bench/sweep_inputs.py [CASE_GLOB...] [--out FILE]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness import doors
from harness.catalog import cases as catalog
from harness.options import Options
from harness.tvmapi import copiers, passes, pipelines, structure


def _timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


def point_inputs(case) -> dict[str, dict | None]:
    """{point: {hash, key, chars, hash_s, json_s, digest_s} or None (not reached)}."""
    try:
        source = doors.to_relax(case.model())
    except Exception as exc:   # noqa: BLE001 - a measurement: say it and go on
        print(f"{case.id}: cannot import ({type(exc).__name__})", file=sys.stderr)
        return {point: None for point in passes.POINTS}
    out = {}
    for point in passes.POINTS:
        options = Options(layout=case.layout, path="pass", sweep_pass="Normalize",
                          sweep_point=point)
        module = source
        try:
            for stage in pipelines.build(options).stages[:-1]:
                module = stage.run(module)
        except Exception:   # noqa: BLE001 - the point cannot be reached on this case
            out[point] = None
            continue
        hashed, hash_s = _timed(structure.structural_hash, module)
        text, json_s = _timed(copiers.save_json, module)
        digest, digest_s = _timed(lambda t: hashlib.sha256(t.encode()).hexdigest()[:32], text)
        out[point] = {"hash": f"{hashed & (2 ** 64 - 1):016x}",
                      "key": f"{hashed & (2 ** 64 - 1):016x}-{digest}", "chars": len(text),
                      "hash_s": hash_s, "json_s": json_s, "digest_s": digest_s}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--out", metavar="FILE")
    args = parser.parse_args()
    inputs = {case.id: point_inputs(case) for case in catalog.select_for_run(args.cases or None)
              if not case.needs_torch}
    reached = [(case, point, found) for case, points in inputs.items()
               for point, found in points.items() if found]
    by_key, by_hash = {}, {}
    for case, point, found in reached:
        by_key.setdefault(found["key"], []).append(f"{case}@{point}")
        by_hash.setdefault(found["hash"], set()).add(found["key"])
    repeats = sum(len(where) - 1 for where in by_key.values())
    hash_only = len(reached) - len(by_hash)
    merged = sum(len(keys) - 1 for keys in by_hash.values())
    unreached = sum(1 for points in inputs.values() for found in points.values() if not found)
    print(f"{len(reached)} inputs reached, {unreached} points not reached; {repeats} repeat an "
          f"earlier input (the sweep's key); the hash alone would see {hash_only} repeats, "
          f"merging {merged} inputs whose JSON text differs from one with their hash")
    for where in by_key.values():
        if len(where) > 1:
            print("  same input:", ", ".join(where))
    print(f"\n{'input':<45} {'JSON MB':>8} {'hash ms':>8} {'json ms':>8} {'sha ms':>7}")
    for case, point, found in sorted(reached, key=lambda r: -r[2]["chars"])[:6]:
        print(f"{case + '@' + point:<45} {found['chars'] / 1e6:8.1f} {found['hash_s'] * 1e3:8.1f} "
              f"{found['json_s'] * 1e3:8.1f} {found['digest_s'] * 1e3:7.1f}")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({case: {point: found and found["key"] for point, found in points.items()}
                       for case, points in inputs.items()}, handle, indent=1)
    return 0


if __name__ == "__main__":
    with recorded("sweep_inputs"):
        code = main()
    sys.exit(code)

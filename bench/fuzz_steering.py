"""Fuzz throughput, and what steering buys: the same example budget with and without
hypothesis.target on the layout conversions ConvertLayout inserts, side by side.

Prints examples per second and how many examples the layout pass really rewrote
(at least one permute_dims / layout_transform inserted), and their mean count. The example
database lives in a fresh temporary cache so neither run replays the other's.
Goal: >= 2 examples/s on this 2-core machine.

Usage: python bench/fuzz_steering.py [EXAMPLES] [SEED]   (default 100 0)
"""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv: list[str]) -> int:
    examples = int(argv[0]) if argv else 100
    seed = int(argv[1]) if len(argv) > 1 else 0
    from harness.cli import fuzz
    print(f"{'steering':<10} {'examples':>8} {'seconds':>8} {'per s':>7} {'rewritten':>10} "
          f"{'mean ops':>9}")
    for steer in (False, True):
        # the example database is keyed by hooks, not steering: a fresh one per run
        os.environ["HARNESS_CACHE"] = tempfile.mkdtemp(prefix="harness-bench-")
        outcome = fuzz.run(examples, seed=seed, steer=steer, out_dir=tempfile.mkdtemp())
        counts = outcome.layout_conversions
        rewritten = sum(1 for count in counts if count > 0)
        print(f"{'on' if steer else 'off':<10} {outcome.examples:8d} {outcome.seconds:8.1f} "
              f"{outcome.examples / outcome.seconds:7.2f} {rewritten / len(counts):10.0%} "
              f"{sum(counts) / len(counts):9.2f}", flush=True)
        if outcome.failure:
            print(f"  failure: {outcome.violation.one_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

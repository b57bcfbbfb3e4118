"""Fuzz throughput, and what steering buys: the same example budget with and without
hypothesis.target, side by side.

Graphs (the default): steering on the layout conversions ConvertLayout inserts; prints
examples per second and how many examples the layout pass really rewrote (at least one
permute_dims / layout_transform inserted), and their mean count. Op programs (`ops`):
steering on the (op, rewriting pass) pairs a program shows first; prints examples per
second, how many distinct ops the campaign drew, the mean number of passes that rewrote
a program and the share 10 or more rewrote. The example database lives in a fresh
temporary cache so neither run replays the other's.
Goal: >= 2 examples/s on this 2-core machine; steering draws at least as many ops.

Usage: python bench/fuzz_steering.py [EXAMPLES] [SEED] [graphs|ops]   (default 100 0 graphs)
"""
from __future__ import annotations

import os
import sys
import tempfile

from recorded import recorded

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv: list[str]) -> int:
    examples = int(argv[0]) if argv else 100
    seed = int(argv[1]) if len(argv) > 1 else 0
    generator = argv[2] if len(argv) > 2 else "graphs"
    from harness.cli import fuzz
    if generator == "ops":
        print(f"{'steering':<10} {'examples':>8} {'seconds':>8} {'checked/s':>9} {'ops drawn':>10} "
              f"{'mean passes':>12} {'>= 10':>6}")
    else:
        print(f"{'steering':<10} {'examples':>8} {'seconds':>8} {'checked/s':>9} "
              f"{'rewritten':>10} {'mean ops':>9}")
    for steer in (False, True):
        # the example database is keyed by hooks, not steering: a fresh one per run
        os.environ["HARNESS_CACHE"] = tempfile.mkdtemp(prefix="harness-bench-")
        outcome = fuzz.run(examples, seed=seed, steer=steer, out_dir=tempfile.mkdtemp(),
                           generator=generator)
        rate = outcome.checked / outcome.seconds   # checks a second: repeats are remembered
        head = f"{'on' if steer else 'off':<10} {outcome.examples:8d} {outcome.seconds:8.1f} " \
               f"{rate:9.2f}"
        if generator == "ops":
            counts = outcome.passes_rewrote
            print(f"{head} {len(outcome.ops_drawn):10d} {sum(counts) / len(counts):12.1f} "
                  f"{sum(1 for count in counts if count >= 10) / len(counts):6.0%}", flush=True)
        else:
            counts = outcome.layout_conversions
            rewritten = sum(1 for count in counts if count > 0)
            print(f"{head} {rewritten / len(counts):10.0%} {sum(counts) / len(counts):9.2f}",
                  flush=True)
        if outcome.failure:
            print(f"  failure: {outcome.violation.one_line()}")
    return 0


if __name__ == "__main__":
    with recorded("fuzz_steering"):
        code = main(sys.argv[1:])
    sys.exit(code)

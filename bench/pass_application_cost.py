"""What one pass application costs the per-pass guard, apart from hashing: microseconds.

Applies a Sequential of N `Normalize` passes to a two-op Relax module many times (its one
function is hashed once, so what is left is the per-application work) and prints the
fastest of `--repeat` rounds per pass application, side by side:
  plain    no instrument
  no-op    a PassInstrument whose two callbacks do nothing (TVM calling into Python)
  guard    the per-pass guard as `check` runs it, writing its events to a file as a
           child does (harness.process.child's writer)
  eager    the same guard hashing each pass's whole input before and after it (its replay)
On a model the guard adds its hashing of each distinct piece on top
(bench/guard_vs_tvm_check.py, bench/guard_profile.py); on light_resnet50's extract path,
22,030 applications, this per-application part is about a third of the guard's cost.

Usage: python bench/pass_application_cost.py [--passes N] [--rounds N] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness.process.child import event_writer
from harness.tvmapi import calls, ir
from harness.tvmapi.guard_records import Watched
from harness.tvmapi.loading import tvm
from harness.tvmapi.pass_guard import PassGuard


def _module():
    """x + x over a float32[2]: a Relax module of one small function."""
    relax = tvm().relax
    x = relax.Var("x", ir.tensor_annotation((2,), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("main", [x]):
        with builder.dataflow():
            out = builder.emit_output(relax.op.add(x, x))
        builder.emit_func_output(out)
    return builder.get()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    module = _module()
    sequence = tvm().transform.Sequential([tvm().relax.transform.Normalize()] * args.passes)
    applications = args.rounds * (args.passes + 1)   # the Sequential is one too
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as folder:
        emit = event_writer(os.path.join(folder, "events.jsonl"))

        def per_application(mode: str) -> float:
            guard, instruments = None, []
            if mode == "no-op":
                instruments = [calls.pass_instrument("NoOp", lambda mod, info: None,
                                                     lambda mod, info: None)]
            elif mode in ("guard", "eager"):
                guard = PassGuard(emit, eager=mode == "eager")
                guard.begin_stage("bench", [Watched("source", module)])
                instruments = [guard.instrument()]
            started = time.perf_counter()
            with calls.pass_context(instruments):
                for _ in range(args.rounds):
                    sequence(module)
            if guard is not None:
                guard.end_stage()
            return (time.perf_counter() - started) / applications * 1e6

        modes = ("plain", "no-op", "guard", "eager")
        timings = {mode: [] for mode in modes}
        for _ in range(args.repeat):   # alternating, so the machine's noise hits all alike
            for mode in modes:
                timings[mode].append(per_application(mode))
        fastest = {mode: min(timings[mode]) for mode in modes}
    print(f"{applications} pass applications a round, fastest of {args.repeat} rounds:")
    for mode in modes:
        print(f"  {mode:<6} {fastest[mode]:6.2f} µs an application  "
              f"(+{fastest[mode] - fastest['plain']:5.2f} over plain)")
    return 0


if __name__ == "__main__":
    with recorded("pass_application_cost"):
        code = main()
    sys.exit(code)

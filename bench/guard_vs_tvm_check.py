"""The per-pass guard against TVM's own per-pass check, on one stage, in one process.

Runs one stage of a case (after the stages before it, unguarded) five ways, alternating,
and prints the fastest and the median wall time of each and their overhead over the plain
run (the fastest is the one to compare on a noisy machine: noise only ever adds):
  plain        no instrument
  no-op        a PassInstrument whose callbacks do nothing: the floor of any Python
               instrument (TVM calling into Python twice per pass application)
  tvm-check    PassContext(config={"testing.immutable_module": True}): TVM hashes each
               pass's whole input before and after it (it raises on a change; FoldConstant
               swallows that, so on the extract path it is timed, not trusted)
  guard        the harness's per-pass guard as `check` runs it (seen_pieces)
  guard-eager  the same guard hashing each pass's whole input before and after it (what
               it does when replaying to name a pass)

Usage: python bench/guard_vs_tvm_check.py [CASE] [--stage NAME] [--path PATH] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness.catalog import cases as catalog
from harness.options import Options
from harness.tvmapi import calls
from harness.tvmapi.guard_records import Watched
from harness.tvmapi.loading import tvm
from harness.tvmapi.pass_guard import PassGuard
from harness.tvmapi.pipelines import build


def _no_op(mod, info):
    pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", nargs="?", default="yolov3-tiny")
    parser.add_argument("--path", default="compile")
    parser.add_argument("--stage", default=None, help="default: the path's longest stage")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pipeline = build(Options(path=args.path))
    source = calls.from_onnx(catalog.resolve(args.case).model())
    name = args.stage or {"compile": "compile", "extract": "zero-pipeline"}.get(args.path)
    current = source
    for stage in pipeline.stages:
        if stage.name == name:
            break
        with calls.pass_context([]):
            current = stage.run(current)

    def run(mode: str) -> float:
        instruments, config = [], {}
        guard = None
        if mode == "no-op":
            instruments = [calls.pass_instrument("NoOp", _no_op, _no_op)]
        if mode.startswith("guard"):
            guard = PassGuard(lambda event: None, eager=mode == "guard-eager")
            guard.begin_stage(name, [Watched("source", source), Watched("stage input", current)])
            instruments = [guard.instrument()]
        if mode == "tvm-check":
            config = {"testing.immutable_module": True}
        started = time.perf_counter()
        with tvm().transform.PassContext(opt_level=3, instruments=instruments, config=config):
            try:
                stage.run(current)
            except Exception:  # noqa: BLE001 - TVM's check raising is still its cost
                pass
        if guard is not None:
            guard.end_stage()
        return time.perf_counter() - started

    modes = ("plain", "no-op", "tvm-check", "guard", "guard-eager")
    walls = {mode: [] for mode in modes}
    for _ in range(args.repeat):
        for mode in modes:
            walls[mode].append(run(mode))
    fastest, median = min(walls["plain"]), statistics.median(walls["plain"])
    print(f"{args.case} {name}, {args.repeat} runs each:  fastest        median")
    for mode in modes:
        print(f"  {mode:<12} {min(walls[mode]):7.2f} s {min(walls[mode]) / fastest - 1:+7.1%}"
              f"  {statistics.median(walls[mode]):7.2f} s "
              f"{statistics.median(walls[mode]) / median - 1:+7.1%}")
    return 0


if __name__ == "__main__":
    with recorded("guard_vs_tvm_check"):
        code = main()
    sys.exit(code)

"""How much do the invariant checks add over bare extraction?

For each case, runs the path twice in isolated children: once bare (the stages,
no checks) and once as `harness check` does; prints both wall times, the stage
time, and the overhead ratio. Target: checks add at most 25 % (README says
what was measured). Usage: python bench/extraction_overhead.py [CASE ...] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.process.isolate import run_isolated  # noqa: E402
from harness.tvmapi.pipelines import Options  # noqa: E402


def timed(case: str, checks: bool) -> tuple[float, float, str]:
    started = time.monotonic()
    result = run_isolated(case, Options(checks=checks), timeout=1800)
    wall = time.monotonic() - started
    return wall, sum(s.seconds for s in result.stages), result.verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=["yolov3-tiny", "light_resnet50"])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{'case':<18} {'bare s':>8} {'check s':>8} {'stages s':>9} {'overhead':>9}  verdict")
    for case in args.cases:
        bare, checked, stage_time, verdict = [], [], [], ""
        for _ in range(args.repeat):
            wall, stages, _ = timed(case, checks=False)
            bare.append(wall)
            wall, stages, verdict = timed(case, checks=True)
            checked.append(wall)
            stage_time.append(stages)
        b, c = statistics.median(bare), statistics.median(checked)
        print(f"{case:<18} {b:8.1f} {c:8.1f} {statistics.median(stage_time):9.1f} "
              f"{(c - b) / b:8.0%}  {verdict}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

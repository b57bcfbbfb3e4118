"""What the numbers oracle adds to the compile path, and how close the answers come.

For each case: the compile path checked with the answers oracle and without it, side by
side in one process (the model built and imported once, outside the timing), the
seconds each took, and every comparison the oracle made with its largest absolute and
relative error and whether the answer moved with its input. The largest float32 error
over a clean run is what the tolerance policy (harness/oracles/numbers.py) must clear by
a margin. Writes the table it prints to bench/results/answers.md.

Usage: python bench/answers.py [CASE ...]
       (default: yolov3-tiny light_resnet50 tv-resnet18 conv-reshape-concat-nhwc)
Runs in this process: nothing else should run on the machine meanwhile.
"""
from __future__ import annotations

import datetime
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness import doors
from harness.catalog import cases as catalog
from harness.options import Options
from harness.oracles.answers import References
from harness.result import Result
from harness.runner.path_runner import PathRunner
from harness.tvmapi import loading

DEFAULT = ("yolov3-tiny", "light_resnet50", "tv-resnet18", "conv-reshape-concat-nhwc")


def timed(case, model, source, answers: bool) -> tuple[float, Result]:
    options = Options(path="compile", layout=case.layout, answers=answers)
    runner = PathRunner(options)
    started = time.perf_counter()
    result = runner.run(source, Result(case.id), References(model))
    return time.perf_counter() - started, result


def main(names: list[str]) -> None:
    versions = loading.versions()
    lines = [f"Measured {datetime.date.today()} on {platform.node()} "
             f"({os.cpu_count()} cores), apache-tvm {versions['tvm_version']} / "
             f"apache-tvm-ffi {versions['tvm_ffi_version']}", "",
             "| case | without answers (s) | with (s) | added (s) | comparison | status | "
             "max abs error | max rel error | sensitive |", "|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        case = catalog.resolve(name)
        model = case.model()
        source = doors.to_relax(model)
        plain, _ = timed(case, model, source, answers=False)
        checked, result = timed(case, model, source, answers=True)
        for index, record in enumerate(result.answers or []):
            head = (f"| {name} | {plain:.1f} | {checked:.1f} | {checked - plain:+.1f} "
                    if index == 0 else "| | | | ")
            lines.append(f"{head}| {record.comparison} | {record.status} | "
                         f"{record.max_abs_error:.3g} | {record.max_rel_error:.3g} | "
                         f"{record.sensitive} |")
        for violation in result.violations:
            lines.append(f"| | | | | {violation.one_line()[:200]} | | | | |")
        print("\n".join(lines[-len(result.answers or [1]):]), flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    with recorded("answers"):
        main(sys.argv[1:] or list(DEFAULT))

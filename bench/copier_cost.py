"""What each round-trip oracle costs on real models, side by side in one run.

For each case's model (in NCHW: the copies do not depend on the layout, and
ConvertLayout fails on light_resnet50's Sum), on the module as imported and as the
extract path holds it before extraction (legalized and fused, weights folded): the seconds of each
copier's copy (deepcopy, json, tvmscript) and of each comparison (structural
equality, the exact field-by-field attrs compare, the total JSON text compare),
with the module's JSON size. The total JSON compare needs the copy's own
save_json, so it is timed with it. TVMScript is printed with its metadata
section (constants) and parsed back: the third copier's whole cost.

Usage: python bench/copier_cost.py [CASE ...]   (default: yolov3-tiny light_resnet50)
Runs in this process: nothing else should run on the machine meanwhile.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recorded import recorded

from harness.catalog import cases as catalog
from harness.oracles import fieldwise, roundtrip
from harness.tvmapi import calls, copiers, structure

REPEAT = 3


def seconds(call, repeat: int = REPEAT) -> tuple[float, object]:
    walls, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = call()
        walls.append(time.perf_counter() - started)
    return statistics.median(walls), value


def row(label: str, mod) -> None:
    text_seconds, text = seconds(lambda: copiers.save_json(mod))
    cells = {"save_json": text_seconds}
    copies = {}
    for name, copier in roundtrip.COPIERS.items():
        try:
            cells[name], copies[name] = seconds(lambda copier=copier: copier(mod))
        except roundtrip.Unsupported as exc:
            cells[name] = float("nan")
            print(f"  {label}: {name} unsupported: {exc}")
    copy = copies["json"]
    cells["structural"], _ = seconds(lambda: structure.first_mismatch(mod, copy))
    cells["fieldwise"], _ = seconds(lambda: fieldwise.compare_module_attrs(mod, copy))
    cells["total-json"], _ = seconds(lambda: copiers.save_json(copy) == text)
    print(f"{label:<46} {len(text) / 1e6:8.1f} " +
          " ".join(f"{cells[key]:10.2f}" for key in COLUMNS), flush=True)


COLUMNS = ("save_json", "deepcopy", "json", "tvmscript", "structural", "fieldwise",
           "total-json")


def main(argv: list[str]) -> int:
    case_ids = argv or ["yolov3-tiny", "light_resnet50"]
    print(f"{'module':<46} {'JSON MB':>8} " + " ".join(f"{c + ' s':>10}" for c in COLUMNS))
    with calls.pass_context([]):
        for case_id in case_ids:
            case = catalog.resolve(case_id)
            mod = calls.from_onnx(case.model())
            row(f"{case_id} imported", mod)
            for make in (lambda: calls.relax_transform("DecomposeOpsForInference"),
                         lambda: calls.relax_transform("CanonicalizeBindings"),
                         calls.zero_pipeline):
                mod = calls.run_pass(make(), mod)
            row(f"{case_id} fused (before extraction)", mod)
    return 0


if __name__ == "__main__":
    with recorded("copier_cost"):
        code = main(sys.argv[1:])
    sys.exit(code)

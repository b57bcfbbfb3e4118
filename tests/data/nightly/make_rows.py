"""Makes this folder's rows journals: real `report` rows of two nights on two release sets,
for the matrix page's tests (tests/test_matrix_page.py), which merge them as the nightly does.

Every row is a real check (`run_isolated`, in the release's cached environment for 0.26.0)
read against the registry by `report.row_of`, as `report` writes it. The nights differ
where a real check differs, so that every kind of change shows:

- tonight: five small cases on each set (16 s for both nights here). Two rows are news:
  conv-reshape-concat on 0.27 with the seeded mutating pass injected (`new`), and
  nhwc-input on 0.27 read with `cases/known_issues.toml` beside this script too, a strict
  entry for a mutation it does not show (`stale`); the rest are `known` (the ConvertLayout
  and AnnotateEntryFunc bugs) but conv-reshape-concat on 0.26 (`pass`).
- previous: the same checks, but conv-reshape-concat on 0.27 plain (`pass`) and nhwc-input
  read with the built-in registry alone (`known`): both newly failing tonight;
  conv-dropout-nhwc on 0.27 with the seeded pass before convert-layout (`new`: newly known
  tonight), conv-reshape-concat on 0.26 with it (`new`: newly passing tonight), and
  conv-float16 on both (gone tonight).

Run again when the row format changes (journal.ROW_FORMAT), from the checkout:
    .venv/bin/python tests/data/nightly/make_rows.py
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, ROOT)

from harness.catalog import cases as catalog  # noqa: E402
from harness.cli.journal import Journal  # noqa: E402
from harness.cli.report import row_key, row_of  # noqa: E402
from harness.options import Options  # noqa: E402
from harness.process.isolate import run_isolated  # noqa: E402
from harness.versions import envs  # noqa: E402
from harness.versions.releases import release_sets  # noqa: E402

SEEDED = os.path.join(ROOT, "tests", "seeded.py") + ":hidden_mutator"
CASES = ["conv-reshape-concat", "nhwc-input", "conv-dropout-nhwc", "conv-sum-nhwc",
         "grouped-depthwise-nhwc"]
# (night, release, case): how that check differs from a plain one.
SEEDED_BEFORE = {("tonight", "0.27.0.post1", "conv-reshape-concat"): None,
                 ("previous", "0.27.0.post1", "conv-dropout-nhwc"): "convert-layout",
                 ("previous", "0.26.0", "conv-reshape-concat"): None}
STALE_HERE = {("tonight", "0.27.0.post1", "nhwc-input")}
ONLY_PREVIOUS = ["conv-float16"]


def _row(night: str, release: str, case_id: str, python: str | None) -> dict:
    case = catalog.resolve(case_id)
    options = Options(layout=case.layout)
    if (night, release, case_id) in SEEDED_BEFORE:
        options = Options(layout=case.layout, inject_pass=SEEDED,
                          inject_before=SEEDED_BEFORE[night, release, case_id])
    begun = time.monotonic()
    result = run_isolated(case_id, options, timeout=600, python=python)
    if (night, release, case_id) in STALE_HERE:
        os.environ[catalog.USER_CASES] = os.path.join(HERE, "cases")
    try:
        return row_of(case, result, time.monotonic() - begun)
    finally:
        os.environ.pop(catalog.USER_CASES, None)


def main() -> None:
    for night in ("tonight", "previous"):
        for release in ("0.27.0.post1", "0.26.0"):
            pins = release_sets()[release]
            python = None if release == "0.27.0.post1" else envs.python_of(envs.ensure(pins))
            folder = os.path.join(HERE, night, release)
            os.makedirs(folder, exist_ok=True)
            stack = {"tvm_version": pins["apache-tvm"], "tvm_ffi_version": pins["apache-tvm-ffi"]}
            with Journal(folder, "report", False, row_key, stack, fresh=True) as journal:
                for case_id in CASES + (ONLY_PREVIOUS if night == "previous" else []):
                    row = _row(night, release, case_id, python)
                    print(night, release, case_id, row["verdict"], row["status"], flush=True)
                    journal.append(row)


if __name__ == "__main__":
    main()

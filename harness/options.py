"""What a run is asked to do: the path, layout, target and guards a user chooses.

Plain data of the base layer (no TVM): the CLI, the pytest plugin, the runner, the
child process and the reducer all pass one `Options` along; tvmapi.pipelines turns
it into TVM calls.
"""
from __future__ import annotations

import dataclasses

LAYOUTS = {
    "nchw": None,
    # The modern AlterOpLayout: the rewrite the seed bug came from.
    "nhwc": {"relax.nn.conv2d": ["NHWC", "OHWI"]},
}
PATH_NAMES = ("extract", "tune", "compile")   # what users choose; `pass` is the sweep's
# What each path's outcome_count counts.
OUTCOME_UNITS = {"extract": "tasks", "tune": "workloads", "compile": "code parts",
                 "pass": "modules"}


@dataclasses.dataclass
class Options:
    layout: str = "nchw"
    target: str = "llvm"
    num_cores: int = 2
    inject_pass: str | None = None     # MODULE:FUNC or path/to/file.py:FUNC
    inject_before: str | None = None   # the stage the injected pass runs before (default: final)
    full_copies: bool = False          # also run the whole path on each copy
    answers: bool = True               # compile path: run the executable, compare numbers
    desired_layouts: dict | None = None  # ConvertLayout's map; overrides `layout`
    checks: bool = True                # False: bare extraction, for benchmarks
    path: str = "extract"              # extract | tune | compile (PATHS)
    trials: int = 4                    # tune: total_trials of static_shape_tuning_pipeline
    prepack: bool = False              # tune: cpu_weight_prepack (the layout-rewrite passes)
    pass_guard: bool = True            # False: the stage-level guard only (benchmarks)
    keep_crash_input: bool = False     # write each pass's input JSON first (crash evidence)
    sweep_pass: str | None = None      # path `pass`: FoldConstant, tirx.ConvertSSA (passes.py)
    sweep_point: str = "imported"      # path `pass`: imported | legalized | fused | compiled
    sweep_register: str | None = None  # path `pass`: a file registering more passes
    sweep_probe: bool = False          # path `pass`: stop before the pass (cli.sweep_schedule)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

"""The one-line command that re-runs a check in its isolated child: what every failure
report (check, report, matrix, the pytest plugin) ends with."""
from __future__ import annotations

import shlex

from harness.catalog import cases as catalog
from harness.options import Options
from harness.process.isolate import DEFAULT_TIMEOUT


def reproduce_command(case: str, options: Options, timeout: float | None = None) -> str:
    """The one-line CLI command that re-runs a check with the same options (`--layout`
    only where it is not the case's own: a JAX, TFLite or PyTorch file has none to name)."""
    known = next((c for c in catalog.catalog() if c.id == case), None)
    own_layout = known.layout if known is not None else "nchw"
    words = ["python", "-m", "harness", "check", case]
    if options.layout != own_layout:
        words += ["--layout", options.layout]
    words += ["--target", options.target]
    if options.path != "extract":
        words += ["--path", options.path]
    if options.path == "tune":
        words += ["--trials", str(options.trials)] + (["--prepack"] if options.prepack else [])
    if options.inject_pass:
        words += ["--inject-pass", options.inject_pass]
        if options.inject_before:
            words += ["--inject-before", options.inject_before]
    if options.full_copies:
        words.append("--full-copies")
    if timeout is not None and timeout != DEFAULT_TIMEOUT:
        words += ["--timeout", f"{timeout:g}"]
    base = known.base if known is not None else catalog.CASES_DIR
    if base != catalog.CASES_DIR:   # a case of a user's catalog: name its folder
        words += ["--cases", base]
    return shlex.join(words)

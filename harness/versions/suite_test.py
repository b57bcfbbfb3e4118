"""One test of a TVM checkout's own suite under the guard, alone: what a commit search
over a suite finding checks at each commit (and the watch checks again on tonight's build).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

from harness import paths


def signatures(python: str, env: dict, source: str, test: str,
               timeout: float) -> list[str] | None:
    """The guard's finding signatures on one test of TVM's suite (a pytest node id, from the
    checkout's root), run alone by `guard-suite`; None when it cannot run here or is not
    there (a commit before the test was written is no evidence either way)."""
    file_part, _, rest = test.partition("::")
    path = os.path.join(source, file_part)
    if not os.path.exists(path):
        return None
    name = rest.split("::")[-1].split("[")[0]
    with tempfile.TemporaryDirectory(prefix="harness-test-") as out:
        argv = [python, "-m", "harness", "guard-suite", path, "--out", out,
                "--allow-suite-failures", "--", "-k", name]
        try:
            subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                           cwd=paths.REPO_ROOT)
            with open(os.path.join(out, "summary.json")) as handle:
                summary = json.load(handle)
        except (subprocess.TimeoutExpired, OSError, ValueError):
            return None
    if summary.get("suite_status") == "no-tests":   # not at this commit: cannot test it
        return None
    findings = summary["findings"]
    return sorted({finding["signature"] for finding in findings
                   if finding["status"] != "unsupported"})

"""Every reproducer linked from the registry runs standalone and answers for this stack.

Exit 1 where its registry entry says the bug is (this TVM / tvm-ffi within the
entry's ranges), 0 where it is not (fixed, or not yet broken: e.g. the tvm-ffi
0.1.15 crash on the pinned 0.1.14.post1). A reproducer that stops reproducing
where the registry says the bug lives means either upstream fixed it (update
the registry) or the reproducer rotted: both must be looked at.
"""
import os
import subprocess
import sys

import pytest

from harness.catalog import known_issues
from harness.catalog.cases import CASES_DIR
from harness.tvmapi import compat


def _entries_by_reproducer():
    found = {}
    for issue in known_issues.registry():
        if issue.reproducer:
            found.setdefault(issue.reproducer, []).append(issue)
    return found


def _bug_is_here(issues) -> bool:
    return any(issue.on_stack(compat.versions()) for issue in issues)


@pytest.mark.parametrize("reproducer, issues", sorted(_entries_by_reproducer().items()),
                         ids=lambda value: os.path.basename(value) if isinstance(value, str)
                         else "")
def test_reproducer_answers_as_registered(reproducer, issues):
    path = os.path.join(CASES_DIR, reproducer)
    proc = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(path))
    expected = 1 if _bug_is_here(issues) else 0
    assert proc.returncode == expected, (
        f"{reproducer}: exit {proc.returncode}, registry expects {expected} on "
        f"{compat.versions()}\n{proc.stdout}{proc.stderr[-2000:]}")
    assert ("reproduces" if expected else "does not reproduce") in proc.stdout

"""The typed part of the harness stays typed: mypy --strict (setup.cfg's [mypy]) over the
packages listed here, each added once it checks clean, until the list is `harness/`.

A seeded module with a type error proves the check refuses.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

# Checked strictly today (issue: the rest of harness/ by package, the oldest last).
TYPED = ("harness/premerge",
         "harness/versions/build_bench.py", "harness/versions/build_checks.py")
MYPY = shutil.which("mypy", path=os.path.dirname(sys.executable)) or shutil.which("mypy")


def _mypy(*paths: str, cwd: str = ROOT) -> subprocess.CompletedProcess:
    if MYPY is None:
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    return subprocess.run([MYPY, "--config-file", os.path.join(ROOT, "setup.cfg"), *paths],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_the_typed_packages_check_clean():
    proc = _mypy(*TYPED)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_a_seeded_type_error_is_refused(tmp_path):
    module = tmp_path / "seeded.py"
    module.write_text("def width(text: str) -> int:\n    return text\n")
    proc = _mypy(str(module), cwd=str(tmp_path))
    assert proc.returncode == 1 and "Incompatible return value type" in proc.stdout

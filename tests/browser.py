"""Headless Chromium for the tests that check what a page shows once its script ran (the
matrix page, the documentation site): the binary, the flags this closed network needs, and
a page's DOM."""
from __future__ import annotations

import os
import shutil
import subprocess

CHROMIUM = (os.environ.get("HARNESS_CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))
MISSING = ("Chromium is not installed (apt-get install chromium chromium-driver, or "
           "HARNESS_CHROMIUM=BINARY)")
# --headless=new and, as root here, --no-sandbox; no background networking, which this
# machine's closed network refuses (the environment notes' flags).
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def dom(url: str, profile) -> str:
    """The page's DOM after its scripts ran, read by Chromium with a profile of its own."""
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    assert "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout

"""A bench's printout kept as bench/results/NAME.md, headed by when, where and on what.

Figures measured once go stale without saying so; a table written by the run that measured
it, with its date, machine and TVM stack, is the one the documentation quotes. Used as
`with recorded("guard_overhead"): main()`: what the bench prints still goes to the terminal.
"""
from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import io
import os
import platform
import sys

from harness.process import death

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def machine() -> str:
    """'2 cores, 24 GiB, Intel(R) Xeon(R) ..., Linux x86_64': what the seconds depend on."""
    kib, model = death.memory_kib(), platform.processor() or platform.machine()
    memory = f", {round(kib / 2**20)} GiB" if kib else ""
    with contextlib.suppress(OSError, StopIteration):
        with open("/proc/cpuinfo") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle
                         if line.startswith("model name"))
    return f"{os.cpu_count()} cores{memory}, {model}, {platform.system()} {platform.machine()}"


def stack() -> str:
    """The installed TVM stack, read from the distributions (no TVM import)."""
    versions = []
    for name in ("apache-tvm", "apache-tvm-ffi"):
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} not installed")
    return " / ".join(versions)


class _Tee(io.TextIOBase):
    def __init__(self, terminal):
        self.terminal, self.kept = terminal, io.StringIO()

    def write(self, text: str) -> int:
        self.terminal.write(text)
        return self.kept.write(text)

    def flush(self) -> None:
        self.terminal.flush()


@contextlib.contextmanager
def recorded(name: str):
    """Print as usual; when the bench finishes, write what it printed to RESULTS/NAME.md."""
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        yield
    finally:
        sys.stdout = tee.terminal
    header = (f"# {name}\n\n`python bench/{os.path.basename(sys.argv[0])} "
              f"{' '.join(sys.argv[1:])}`\n\n- date: {datetime.date.today().isoformat()}\n"
              f"- machine: {machine()}\n- stack: {stack()}, Python {platform.python_version()}"
              "\n\n```\n")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"{name}.md"), "w") as handle:
        handle.write(header + tee.kept.getvalue().rstrip() + "\n```\n")

"""How a child that ended without a result died, in words a report can carry: the signal,
the kernel's out-of-memory kill told from a crash, and the native frames that name the
crashing function."""
from __future__ import annotations

import signal

STACK_TAIL_LINES = 40   # the stderr lines a crashed child's result keeps


def signal_of(returncode: int) -> str | None:
    """The named signal that ended a child (SIGSEGV), as a violation's `signal`; None for
    an exit, or a signal without a name."""
    try:
        return signal.Signals(-returncode).name if returncode < 0 else None
    except ValueError:
        return None


# A SIGKILL nobody here sent, to a child that had reached this share of the machine's
# memory, is the kernel's out-of-memory killer: the check needs more memory than there is
# (the copies of a 2.5 GB-weight model: regnet_y_128gf reached 23 of 24 GiB), which is
# no finding about TVM. Below it a SIGKILL stays a crash.
OUT_OF_MEMORY_SHARE = 0.8


def out_of_memory(returncode: int, peak_rss_kib: int | None) -> bool:
    total = memory_kib()
    return (returncode == -signal.SIGKILL and peak_rss_kib is not None and total > 0
            and peak_rss_kib >= OUT_OF_MEMORY_SHARE * total)


def memory_kib() -> int:
    """The machine's physical memory (MemTotal), 0 where /proc does not say."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def native_tail(stderr: str) -> str:
    """The last lines of a child's stderr (its native stack, when it crashed)."""
    lines = stderr.rstrip().splitlines()
    return "\n".join(lines[-STACK_TAIL_LINES:])


def _key_frames(stderr: str, limit: int = 3) -> list[str]:
    """The innermost C++ frames (tvm::...), which name the crashing function."""
    frames = [line.strip() for line in stderr.splitlines() if "tvm::" in line]
    return frames[:limit]


def describe_death(returncode: int, stderr: str, where: str) -> str:
    """'SIGSEGV in WHERE; native stack: ...' for a child that died without a result."""
    cause = ((signal_of(returncode) or f"signal {-returncode}") if returncode < 0
             else f"exit code {returncode} without a result")
    frames = "; ".join(_key_frames(stderr)) or "no native frames printed"
    return f"{cause} {where}; native stack: {frames}"

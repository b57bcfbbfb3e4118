"""Our own suite's skips, held to what a machine may lack: a skip count that jumps fails.

A default run once reported 841 passed and 83 skipped where the same tree's next runs
reported 923 passed and 1 skipped; nothing failed, so nothing said so. On the pinned stack
(setup.cfg's `tvm` extra, what the README's set-up installs) every skip of the default
selection must name a part the machine may lack; any other skip fails the run, listed with
its reason. On another stack (a tox release env) or selection (the nightly's) skips are
listed, not failed on: features come and go by release.
"""
from __future__ import annotations

DEFAULT_SELECTION = "not slow and not nightly"   # setup.cfg's addopts: the default run
# What a machine may lack, as the skip reasons say it.
# Only the README's extras: a test that needs more (a TVM git repository or source tree,
# Chromium, the tune extra, build tools) is `nightly`, deselected from the default run, so a
# machine set up by the README reads 0 skipped.
MAY_LACK = ("torch is not installed", "no torch here", "this door needs the")


def reason_of(report) -> str:
    """A skipped report's reason (pytest keeps (path, line, reason) for a skip)."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def unexpected(reasons: list[str]) -> list[str]:
    """The skips no missing part of the machine explains."""
    return [reason for reason in reasons if not any(part in reason for part in MAY_LACK)]


def on_pinned_stack() -> bool:
    from harness.tvmapi import loading
    from harness.versions import envs
    pins = envs.parse_requirements([pin for pin in envs.extra_pins("tvm") if "==" in pin])
    found = loading.versions()
    return (found["tvm_version"], found["tvm_ffi_version"]) == (pins.get("apache-tvm"),
                                                                 pins.get("apache-tvm-ffi"))

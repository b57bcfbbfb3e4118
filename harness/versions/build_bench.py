"""What a command does to one commit of a TVM checkout: build it, and run the harness's own
checks against exactly that build.

The watch runs a night's selection on it and hunts from it (cli/watch), `try` runs the
checks a change can affect on its base and its head (premerge). The build is the commit
probe's (incremental, ccache, or the build store's when the compiled inputs were seen);
the checks are versions/build_checks' commands. A test's toy bench stands in for this one
on a toy history (tests/test_watch.py, tests/test_try.py).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from harness.versions import build_checks, build_store, commit_bisect, source_build
from harness.versions.build_checks import Item, Rows
from harness.versions.source_checkout import git


class BuildBench:
    def __init__(self, source: str, build_dir: str, store: str | None, jobs: int,
                 ccache: bool, extra_packages: tuple[str, ...], timeout: float,
                 log: Callable[[str], None], command: str = "watch"):
        self.source, self.store, self.timeout = source, store, timeout
        self.log, self.command = log, command
        self.probe = commit_bisect.CommitProbe(
            source, build_dir, "", [], jobs, ccache, extra_packages, timeout, log, store=store)

    def build(self, commit: str) -> dict[str, Any]:
        """{ok, seconds, reused, folder (whose lib/ holds the build), tail (why it failed)}.
        A failure is built once more (incrementally) before it counts: not a flaky machine."""
        git(self.source, "checkout", "--quiet", "--detach", commit)
        started = time.monotonic()
        stats, failure, built_in = self.probe.build(commit)
        if failure:
            self.log(f"{self.command}: the build failed; building once more before it counts")
            stats, failure, built_in = self.probe.build(commit)
        if not failure and self.store:
            build_store.keep(self.store, commit_bisect.compiled_key(self.source, commit),
                             built_in, commit, commit_bisect.title(self.source, commit))
        self.log(f"{self.command}: build {'ok' if not failure else 'FAILED'} ({stats.text()})")
        return {"ok": not failure, "seconds": round(time.monotonic() - started, 1),
                "reused": stats.reused, "folder": built_in,
                "tail": self.probe.build_log_tail if failure else ""}

    def runner(self, commit: str, folder: str) -> tuple[str, dict[str, str]]:
        """(python, environment) of the commit's build in `folder`."""
        git(self.source, "checkout", "--quiet", "--detach", commit)
        return self.probe.python(), source_build.checkout_env(self.source, folder, commit)

    def run_item(self, item: Item, runner: tuple[str, dict[str, str]], out: str,
                 folder: str) -> tuple[Rows, str]:
        python, env = runner
        return build_checks.run_item(item, python, env, out,
                                     {"source": self.source, "build": folder}, self.log)

    def shows(self, recheck: dict[str, Any], signature: str,
              runner: tuple[str, dict[str, str]]) -> bool | None:
        python, env = runner
        return build_checks.shows(recheck, signature, python, env, self.timeout, self.source)

"""Reproducers run as a user runs them (`python repro.py`: its exit code and output), each
forked from one process that imported TVM once.

A fresh interpreter per reproducer spends most of its time importing TVM (1.5-2.5 s
each, some fifty of them in the default run); forked from a parent that imported TVM and
nothing else, a child runs the script as `__main__` from its own folder, with its own
exit code, in its own process (a crash kills only it). What this cannot see, a
reproducer that needs a fresh interpreter, the nightly sees: it runs every reproducer
in a new interpreter of every release set (tests/test_reproducers.py).

`python reproducer_runner.py` is the parent: a JSON line {"path", "stdout", "stderr"} in
(the files the child writes them to), the child's exit code out ({"code"}: negative for a
signal, as subprocess reports it).
"""
from __future__ import annotations

import json
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback

TIME_LIMIT = 600   # seconds a reproducer may run (subprocess.run's timeout before)


def _run_child(path: str, stdout: str, stderr: str, arguments: list) -> None:
    """In the forked child: the script as `__main__`, its output to those files."""
    for stream, name in ((1, stdout), (2, stderr)):
        os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), stream)
    os.chdir(os.path.dirname(path))
    sys.argv = [path, *arguments]
    sys.path[0] = os.path.dirname(path)   # as `python path` puts the script's folder first
    signal.alarm(TIME_LIMIT)
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:   # noqa: BLE001 - as the interpreter does: traceback, exit 1
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    import tvm  # noqa: F401 - the one import every child shares
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _run_child(request["path"], request["stdout"], request["stderr"],
                       request.get("arguments", []))
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


class Runner:
    """The client: one parent per pytest process, started on first use."""

    def __init__(self, env: dict):
        self.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)
        self.folder = tempfile.mkdtemp(prefix="reproducer-output-")

    def run(self, path: str, *arguments: str) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) of `python path ARGUMENTS`."""
        streams = [os.path.join(self.folder, name) for name in ("stdout", "stderr")]
        self.process.stdin.write(json.dumps(
            {"path": os.path.abspath(path), "stdout": streams[0], "stderr": streams[1],
             "arguments": list(arguments)}) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("the reproducer runner died")
        printed = []
        for name in streams:
            with open(name, errors="replace") as handle:
                printed.append(handle.read())
        return json.loads(answer)["code"], *printed

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)


if __name__ == "__main__":
    serve()

"""A warm child: a server that imports TVM once and forks one isolated child per check.

Importing TVM costs 1–2.5 s, more than a small case's whole check. The server
(`python -m harness.process.warm`, one per interpreter and calling thread)
imports TVM, the runner and the catalog, then for each request forks a child in
its own session that runs exactly what a fresh `harness.process.child` would.
A segfault or an abort still kills only that child: the server reports its
wait status and forks the next one from the same pristine state, so no check
sees another's leftovers. Protocol: JSON lines; request
`{"spec", "events", "stderr"}`, answers `{"pid"}` then `{"pid", "status"}`.
`HARNESS_WARM=0` turns it off (a fresh interpreter per check). The PyTorch door's
cases go to a server of their own (`HARNESS_WARM_TORCH=1` in its environment, so
another key) that also imports torch and TVM's PyTorch frontend once: 3 s a check.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

from harness.paths import REPO_ROOT

_servers: dict[tuple, "Server"] = {}
_lock = threading.Lock()
_started: list["Server"] = []    # every server ever started, ready or still importing TVM
_started_lock = threading.Lock()   # not _lock: server_for holds that while one starts
# Set per test item by pytest: keying on it would start one server (one TVM import) per item.
_VOLATILE = ("PYTEST_CURRENT_TEST",)
PRELOAD_TORCH = "HARNESS_WARM_TORCH"


def enabled() -> bool:
    return os.environ.get("HARNESS_WARM", "1") != "0"


class Server:
    """The client's handle on one warm server process."""

    def __init__(self, python: str, env: dict):
        # Binary and unbuffered: answers are read with select() + os.read into our own
        # buffer. A buffered readline could swallow the status line that follows the pid
        # line (a child that dies at once), and select() would then wait for data that
        # already sits in Python's buffer: the check hung until its timeout.
        self.proc = subprocess.Popen(
            [python, "-m", "harness.process.warm"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
        with _started_lock:
            _started.append(self)
        self._pending = b""
        self.ready = self._read(timeout=300) == {"ready": True}

    def _read(self, timeout: float | None) -> dict | None:
        """The next answer line, or None when none arrives within `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.proc.stdout], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return {"eof": True}
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def alive(self) -> bool:
        return self.ready and self.proc.poll() is None

    def submit(self, spec: str, events: str, stderr: str) -> "ForkedChild | None":
        try:
            self.proc.stdin.write((json.dumps({"spec": spec, "events": events,
                                               "stderr": stderr}) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        answer = self._read(timeout=60)
        if not answer or "pid" not in answer:
            self.ready = False
            return None
        return ForkedChild(self, answer["pid"])


class ForkedChild:
    """Popen-like: poll() the wait status the server reports; kill the child's group."""

    def __init__(self, server: Server, pid: int):
        self.server, self.pid, self.returncode = server, pid, None
        self.peak_rss_kib: int | None = None   # the server's wait4 of the child says it

    def poll(self) -> int | None:
        if self.returncode is None:
            answer = self.server._read(timeout=0)
            if answer is not None:
                # A server that died under us: the child is gone with it, no status.
                self._ended(answer)
                if "status" not in answer:
                    self.server.ready = False
        return self.returncode

    def wait(self) -> int:
        while self.poll() is None:
            answer = self.server._read(timeout=None)
            if answer is not None:
                self._ended(answer)
        return self.returncode

    def _ended(self, answer: dict) -> None:
        self.returncode = answer.get("status", -signal.SIGKILL)
        self.peak_rss_kib = answer.get("peak_rss_kib")

    def kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self) -> None:
        self.kill_group()
        self.wait()


def stop_all() -> None:
    """Kill every warm server (on Ctrl-C and at exit: none outlives its parent)."""
    with _started_lock:
        servers = list(_started)
        _started.clear()
    for server in servers:
        if server.proc.poll() is None:
            server.proc.kill()
        server.ready = False


atexit.register(stop_all)


def server_for(python: str, env: dict) -> Server | None:
    """The warm server for this interpreter and thread, started on first use."""
    env = {name: value for name, value in env.items() if name not in _VOLATILE}
    key = (python, threading.get_ident(), tuple(sorted(env.items())))
    with _lock:
        server = _servers.get(key)
        if server is None or not server.alive():
            server = Server(python, env)
            _servers[key] = server
    return server if server.ready else None


# ---- the server side -------------------------------------------------------

def _serve() -> int:
    from harness.catalog import cases
    from harness.process import child
    from harness.tvmapi import loading
    try:
        loading.tvm()        # the point of the server: pay the import once
        cases.catalog()
        if os.environ.get(PRELOAD_TORCH):
            loading.preload_torch_frontend()   # the PyTorch door's imports, paid once too
    except Exception:  # noqa: BLE001 - a head start only: each forked child makes these calls
        pass            # again and reports what they raise (ours: harness-error)
    out = sys.stdout
    # A terminal's Ctrl-C reaches the whole foreground group: the client stops this
    # server itself (stop_all), after it has decided what to keep.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def answer(data: dict) -> None:
        out.write(json.dumps(data) + "\n")
        out.flush()

    answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            os.setsid()
            signal.signal(signal.SIGINT, signal.default_int_handler)
            code = 4
            try:
                stderr = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
                os.dup2(stderr, 2)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                sys.stdin.close()
                import faulthandler
                faulthandler.enable(file=sys.stderr)
                code = child.run(request["spec"], request["events"])
            finally:
                sys.stderr.flush()
                os._exit(code)
        answer({"pid": pid})
        _, status, usage = os.wait4(pid, 0)
        answer({"pid": pid, "status": os.waitstatus_to_exitcode(status),
                "peak_rss_kib": usage.ru_maxrss})
    return 0


if __name__ == "__main__":
    if REPO_ROOT not in sys.path:
        sys.path.insert(0, REPO_ROOT)
    sys.exit(_serve())

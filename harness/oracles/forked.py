"""Running compiled code in a forked child: a signal there is that run's, not the check's.

The answers oracle runs what TVM compiled on drawn inputs, and the pass bisect runs partly
optimized executables: an integer division by a drawn zero (SIGFPE) or an index the draw
put out of range (SIGSEGV) must not kill the process that checks, nor be read as TVM
crashing the path. The child inherits TVM loaded (fork, copy on write) and answers through
a pipe; the parent decides what its end means.
"""
from __future__ import annotations

import dataclasses
import os
import pickle
import signal

from harness import classify
from harness.verdict import first_line


@dataclasses.dataclass
class Forked:
    value: object = None
    error: str = ""         # TVM's exception, `Type: first line` ("" when it returned)
    ours: str = ""          # the harness's own exception in the child (a HarnessBug above)
    signal: str = ""        # the signal that ended the child (SIGFPE), "" for none

    @property
    def ok(self) -> bool:
        return not (self.error or self.ours or self.signal)


def call(work) -> Forked:
    """`work()` in a forked child: its value, TVM's exception, ours, or its signal."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:   # the child: answer through the pipe, never return into the caller
        os.close(read_end)
        try:
            payload = pickle.dumps(Forked(value=work()))
        except BaseException as exc:  # noqa: BLE001 - decided here: ours or TVM's
            text = first_line(exc)
            payload = pickle.dumps(Forked(ours=text) if classify.origin(exc) ==
                                   classify.HARNESS else Forked(error=text))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        return Forked(signal=signal.Signals(os.WTERMSIG(status)).name)
    if not payload:
        return Forked(ours=f"the forked run ended with status {status} and no answer")
    return pickle.loads(payload)

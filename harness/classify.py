"""Who raised: TVM (a violation to report) or the harness itself (a bug of ours).

Decided by origin, from the innermost traceback frame that belongs to either
side: TVM's Python packages (`tvm`, `tvm_ffi`), the C++ frames tvm-ffi appends
(`src/...cc`, `<unknown>`), or code on the path that is not ours (an injected
pass, wherever it is installed: `add_user_code` lists its files) count as
TVM's; a frame in the `harness` package is ours. Frames of the standard library
and of other third-party packages (numpy, onnx) are passed over. So an
AttributeError because harness.tvmapi calls an API a release removed is a harness
error (that layer needs the fix), never blamed on TVM.
"""
from __future__ import annotations

import dataclasses
import os
import sysconfig
import traceback
from typing import Any, Callable

from harness.verdict import first_line

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the harness package
TVM = "tvm"
HARNESS = "harness"
_NEUTRAL = tuple(os.path.realpath(p) + os.sep for p in
                 {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


_USER_CODE: set[str] = set()


def add_user_code(path: str) -> None:
    """A hook's file (or package folder) the user loaded onto the path: the code under
    test, never the harness's fault, even when installed under site-packages."""
    _USER_CODE.add(os.path.realpath(path))


def _is_user_code(filename: str) -> bool:
    real = os.path.realpath(filename)
    return any(real == path or real.startswith(path + os.sep) for path in _USER_CODE)


def _is_tvm_frame(filename: str) -> bool:
    parts = filename.replace("\\", "/").split("/")
    return ("tvm" in parts or "tvm_ffi" in parts or filename == "<unknown>"
            or filename.endswith((".cc", ".h", ".cpp", ".pxi", ".pyx")))


def _is_neutral(filename: str) -> bool:
    real = os.path.realpath(filename)
    if real.startswith(_NEUTRAL) and "site-packages" not in real:
        return True
    return "site-packages" in real.split(os.sep) or filename.startswith("<frozen")


USER = "user"   # code on the path neither TVM's, ours, nor a package's: a user's own


def innermost_owner(exc: BaseException) -> tuple[str, traceback.FrameSummary | None]:
    """(TVM, HARNESS or USER, that frame): whose is the innermost frame of `exc` that belongs
    to either side, frames of the standard library and of third-party packages passed over.
    USER is code on the path not registered by `add_user_code`: `origin` counts it as the
    thing under test (an injected pass's helper); a door that ran a user's model file knows
    it as that file's (or a module of theirs it imports)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        filename = frame.filename
        if os.path.realpath(filename).startswith(HARNESS_DIR):
            return HARNESS, frame
        if _is_tvm_frame(filename) or _is_user_code(filename):
            return TVM, frame
        if _is_neutral(filename):
            continue
        return USER, frame
    return HARNESS, None


def origin(exc: BaseException) -> str:
    """TVM or HARNESS: whose code raised `exc` (user code on the path: the thing under test)."""
    owner, _ = innermost_owner(exc)
    return HARNESS if owner == HARNESS else TVM


def summary(exc: BaseException, limit: int = 6) -> str:
    """The last frames of a harness bug, for the harness-error detail. Of a HarnessBug,
    its cause's: the frames that raised, not those that carried it out."""
    if isinstance(exc, HarnessBug) and exc.__cause__ is not None:
        exc = exc.__cause__
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if frame.filename != "<unknown>"][-limit:]   # not tvm-ffi's callback plumbing
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}"
                        for f in reversed(frames))
    return f"{first_line(exc)} (at {where})"


class HarnessBug(Exception):
    """An exception from the harness's own code while running a path (harness-error)."""

    def __init__(self, stage: str, exc: BaseException):
        super().__init__(summary(exc))
        self.stage = stage


def raise_if_ours(exc: BaseException, stage: str) -> None:
    """Re-raise `exc` as a HarnessBug when the harness's own code raised it. A HarnessBug
    passes through; one raised where no stage was known (stage "": a copier, the pass
    guard) takes the stage of the first caller that knows it."""
    if isinstance(exc, HarnessBug):
        exc.stage = exc.stage or stage
        raise exc
    if origin(exc) == HARNESS:
        raise HarnessBug(stage, exc) from exc


@dataclasses.dataclass
class Call:
    """What one call into TVM (or into our code on TVM's objects) did, as pytest's
    CallInfo.from_call records it: its value, or TVM's exception. The one place that
    decides whose exception it was: ours never comes back as a value, it leaves as a
    HarnessBug (harness-error), so no caller can read our bug as TVM's finding or as
    "this does not apply"."""
    stage: str
    value: Any = None
    error: Exception | None = None    # TVM's, or the user's code on the path

    @classmethod
    def of(cls, stage: str, function: Callable, /, *args,
           reraise: tuple[type[Exception], ...] = (), **kwargs) -> "Call":
        """`reraise` (pytest's own word): exceptions our code raises on purpose to say what
        the call decided (cannot test here; a copier that cannot carry this module), which
        leave as they are."""
        try:
            value = function(*args, **kwargs)
        except reraise:
            raise
        except Exception as exc:  # noqa: BLE001 - decided here: ours raised, TVM's kept
            raise_if_ours(exc, stage)
            return cls(stage, error=exc)
        return cls(stage, value=value)

    @property
    def ok(self) -> bool:
        return self.error is None

    def result(self):
        """The value, or TVM's exception raised on (for a caller whose own caller decides
        what TVM failing means there); ours never gets this far."""
        if self.error is not None:
            raise self.error
        return self.value

    @property
    def detail(self) -> str:
        """`Type: first line` of TVM's exception ("" when the call returned)."""
        return first_line(self.error) if self.error is not None else ""

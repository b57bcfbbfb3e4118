"""Who raised: TVM (a violation to report) or the harness itself (a bug of ours).

Decided by origin, from the innermost traceback frame that belongs to either
side: TVM's Python packages (`tvm`, `tvm_ffi`), the C++ frames tvm-ffi appends
(`src/...cc`, `<unknown>`), or code on the path that is not ours (an injected
pass, wherever it is installed: inject.user_code lists its files) count as
TVM's; a frame in the `harness` package is ours. Frames of the standard library
and of other third-party packages (numpy, onnx) are passed over. So an
AttributeError because harness.tvmapi calls an API a release removed is a harness
error (that layer needs the fix), never blamed on TVM.
"""
from __future__ import annotations

import os
import sysconfig
import traceback

from harness.tvmapi import inject
from harness.verdict import first_line

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the harness package
TVM = "tvm"
HARNESS = "harness"
_NEUTRAL = tuple(os.path.realpath(p) + os.sep for p in
                 {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def _is_user_code(filename: str) -> bool:
    real = os.path.realpath(filename)
    return any(real == path or real.startswith(path + os.sep) for path in inject.user_code())


def _is_tvm_frame(filename: str) -> bool:
    parts = filename.replace("\\", "/").split("/")
    return ("tvm" in parts or "tvm_ffi" in parts or filename == "<unknown>"
            or filename.endswith((".cc", ".h", ".cpp", ".pxi", ".pyx")))


def _is_neutral(filename: str) -> bool:
    real = os.path.realpath(filename)
    if real.startswith(_NEUTRAL) and "site-packages" not in real:
        return True
    return "site-packages" in real.split(os.sep) or filename.startswith("<frozen")


def origin(exc: BaseException) -> str:
    """TVM or HARNESS: whose code raised `exc`."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        filename = frame.filename
        if os.path.realpath(filename).startswith(HARNESS_DIR):
            return HARNESS
        if _is_tvm_frame(filename) or _is_user_code(filename):
            return TVM
        if _is_neutral(filename):
            continue
        return TVM   # user code on the path (an injected pass): the thing under test
    return HARNESS


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
    """Re-raise `exc` as a HarnessBug when the harness's own code raised it."""
    if origin(exc) == HARNESS:
        raise HarnessBug(stage, exc) from exc

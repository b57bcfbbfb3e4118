"""TVM itself: importing it (or saying it cannot be), where it came from, its versions.

`tvm()` is the only import of TVM in the harness; a TVM that does not import is
"cannot test here" (TVMUnavailable, exit 125), and a source build bisect-step
checks must be exactly the build it asked for (WrongTVM).
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import sys

from harness import paths


class TVMUnavailable(Exception):
    """TVM (or tvm_ffi) cannot be imported here: the case cannot be tested."""


class WrongTVM(Exception):
    """A source-build check loaded TVM from somewhere else: the step is broken, not TVM."""


# Set in a process that will not touch the PyTorch door (isolate.run_isolated sets it for
# every other case): TVM is imported there as where torch is not installed.
WITHOUT_TORCH = "HARNESS_WITHOUT_TORCH"


def torch_not_needed() -> None:
    """This process and its children will not use the PyTorch door: they import TVM as
    where torch is not installed (a door case's child imports it all the same: isolate)."""
    os.environ.setdefault(WITHOUT_TORCH, "1")


@contextlib.contextmanager
def _torch_hidden():
    """tvm_ffi imports torch whenever it is installed (a workaround of theirs for a symbol
    clash): 2-3 s of every TVM import, in every check's process. Where torch will not be
    used, it is hidden while TVM imports, and only then."""
    if not os.environ.get(WITHOUT_TORCH) or "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None     # `import torch` raises ImportError, as if absent
    try:
        yield
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


@functools.cache
def tvm():
    try:
        with _torch_hidden():
            import tvm as _tvm
            import tvm.relax  # registers the relax attrs types
            import tvm.relax.frontend.onnx  # and the ONNX frontend
    except Exception as exc:  # ImportError, OSError (undefined symbol), ...
        raise TVMUnavailable(f"cannot import tvm: {type(exc).__name__}: {exc}") from exc
    _assert_provenance(_tvm)
    return _tvm


def _loaded_libraries() -> list[str]:
    with open("/proc/self/maps") as handle:
        return sorted({line.split()[-1] for line in handle
                       if "libtvm" in line and line.rstrip().endswith(".so")})


def _assert_provenance(module) -> None:
    """bisect-step sets HARNESS_EXPECT_TVM_PYTHON / _LIB: check exactly that build.

    Without this a source-build step can silently check a wheel's TVM (as it did on
    a toy project) and bisect nothing.
    """
    source = os.environ.get("HARNESS_EXPECT_TVM_PYTHON")
    build = os.environ.get("HARNESS_EXPECT_TVM_LIB")
    if source and not os.path.realpath(module.__file__).startswith(os.path.realpath(source)):
        raise WrongTVM(f"tvm was imported from {module.__file__}, not from {source}")
    if build:
        compiler = [lib for lib in _loaded_libraries()
                    if os.path.basename(lib).startswith(("libtvm_compiler", "libtvm.so",
                                                         "libtvm_runtime"))]
        outside = [lib for lib in compiler
                   if not os.path.realpath(lib).startswith(os.path.realpath(build))]
        if not compiler or outside:
            raise WrongTVM(f"TVM libraries loaded from {outside or 'nowhere'}, not from {build}")


def preload_torch_frontend() -> None:
    """Import torch and TVM's PyTorch frontend (the warm server's torch flavour pays it
    once for every PyTorch-door check it forks)."""
    importlib.import_module(tvm().__name__ + ".relax.frontend.torch")   # imports torch too


@functools.cache
def ffi():
    tvm()
    import tvm_ffi
    return tvm_ffi


def versions() -> dict[str, str | None]:
    """Versions of the TVM stack, without importing it (works when TVM is broken)."""
    out = {key: paths.package_version(dist) for key, dist in
           (("tvm_version", "apache-tvm"), ("tvm_ffi_version", "apache-tvm-ffi"))}
    # A source build has no wheel metadata: bisect-step records the commit instead.
    if os.environ.get("HARNESS_TVM_COMMIT"):
        out["tvm_version"] = "git:" + os.environ["HARNESS_TVM_COMMIT"][:12]
    if os.environ.get("HARNESS_TVM_FFI_COMMIT"):
        out["tvm_ffi_version"] = "git:" + os.environ["HARNESS_TVM_FFI_COMMIT"][:12]
    return out


@functools.cache
def meta_schedule():
    for name in ("tvm.s_tir.meta_schedule", "tvm.meta_schedule"):
        try:
            tvm()
            return importlib.import_module(name)
        except ImportError:
            continue
    raise TVMUnavailable("this TVM has no meta_schedule module")


def build_identity() -> str:
    """This exact TVM build: versions, where tvm is imported from, and each loaded TVM
    library's size and mtime (a source build keeps its version across commits)."""
    tvm()
    parts = [json.dumps(versions(), sort_keys=True), os.path.realpath(tvm().__file__)]
    for library in _loaded_libraries():
        stat = os.stat(library)
        parts.append(f"{library}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)

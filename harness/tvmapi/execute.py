"""Running what the compile path built: a module's inputs, the Relax VM, and a compile
with only its first N optional pass applications (the pass bisect's probe).

The VM runs on the CPU (llvm executables only: a GPU target's code cannot run here).
`tvm.runtime.tensor` is 0.27's name for what 0.25-0.26 call `tvm.nd.array`.
"""
from __future__ import annotations

import dataclasses
import functools

from harness.tvmapi.loading import tvm

# Pass applications the pass bisect never skips: without them tvm.compile cannot finish
# (measured on 0.27 by skipping each pass of a conv/relu/mean/softmax model's compile
# alone: these fail the build; every other pass, skipped alone, built and answered the
# same), and four that lower what that model does not hold (symbolic shapes, runtime
# builtins, a host/device split, vectorized loops). The containers (a Sequential, the
# pipeline) run their members, which are decided one by one.
REQUIRED_PASSES = frozenset({
    "_pipeline", "sequential", "LegalizeOps", "CallTIRRewrite", "LowerAllocTensor",
    "LowerRuntimeBuiltin", "AttachGlobalSymbol", "VMShapeLower", "tirx.BindTarget",
    "s_tir.LowerInitBlock", "s_tir.ConvertBlocksToOpaque", "s_tir.LowerOpaqueBlock",
    "tirx.FlattenBuffer", "tirx.MakePackedAPI", "tirx.LowerIntrin", "tirx.LowerTVMBuiltin",
    "tirx.SplitHostDevice", "tirx.VectorizeLoop"})


@dataclasses.dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple | None     # None: a symbolic dimension (no value to draw)
    dtype: str


ENTRY_NAMES = ("main", "forward")   # a module's entry, by the names frontends give it


def entry_name(mod) -> str | None:
    """The function the VM runs: `main`, else `forward` (a relax.frontend.nn export)."""
    names = {gv.name_hint for gv in mod.get_global_vars()}
    return next((name for name in ENTRY_NAMES if name in names), None)


def input_specs(mod) -> list[InputSpec]:
    """The entry function's parameters: name, static shape (or None), dtype. A parameter
    that is not a tensor (a shape, a tuple) has dtype "?": nothing can be drawn for it."""
    from harness.tvmapi import ir
    specs = []
    for param in mod[entry_name(mod)].params:
        info = ir.expr_type(param)
        name = ir.var_name(param)
        if not isinstance(info, ir.tensor_type_class()) or info.shape is None:
            specs.append(InputSpec(name, None, "?"))
            continue
        dims = [getattr(dim, "value", None) for dim in info.shape.values]
        static = all(isinstance(dim, int) for dim in dims)
        specs.append(InputSpec(name, tuple(dims) if static else None, str(info.dtype)))
    return specs


def _to_device(array):
    runtime = tvm().runtime
    make = getattr(runtime, "tensor", None) or tvm().nd.array
    return make(array)


def run(executable, arrays: list, entry: str = "main") -> list:
    """The executable's `entry` on the Relax VM (CPU) over numpy `arrays`: its outputs as
    numpy arrays, a tuple flattened in order."""
    vm = tvm().relax.VirtualMachine(executable, tvm().cpu())
    return flatten(vm[entry](*[_to_device(array) for array in arrays]))


def flatten(value) -> list:
    """A VM result (a tensor, a tuple of them, nested; a shape) as numpy arrays. A shape
    (`R.Shape`, what the ONNX frontend's Shape converter returns for a static input) is one
    int64 array, the tensor ONNX's Shape answers: its values are what is compared, not its
    container (flattened, it read as one output per dimension: a false wrong answer)."""
    import numpy
    if hasattr(value, "numpy"):
        return [value.numpy()]
    if type(value).__name__ in ("Shape", "ShapeTuple"):   # tvm_ffi.Shape (0.26 on), older
        return [numpy.asarray([int(extent) for extent in value], dtype="int64")]
    if isinstance(value, (int, float, bool)):
        return [numpy.asarray(value)]
    if hasattr(value, "__len__") and not isinstance(value, str):
        flat = []
        for item in value:
            flat.extend(flatten(item))
        return flat
    return [numpy.asarray(int(value))]   # a PrimValue / IntImm


class Limit:
    """A PassInstrument policy: let the first `limit` optional pass applications run and
    skip every optional one after (LLVM's -opt-bisect-limit); records what it saw."""

    def __init__(self, limit: int | None):
        self.limit, self.seen = limit, []   # seen: the optional applications' pass names

    def should_run(self, name: str) -> bool:
        if name in REQUIRED_PASSES:
            return True
        self.seen.append(name)
        return self.limit is None or len(self.seen) <= self.limit


def compile_limited(mod, target, limit: int | None):
    """(executable, the optional pass names in order) of `tvm.compile` with only the first
    `limit` optional pass applications run (None: all of them)."""
    policy = Limit(limit)
    instrument = _limit_instrument()(policy)
    with tvm().transform.PassContext(opt_level=3, instruments=[instrument]):
        executable = tvm().compile(mod, target=target)
    return executable, policy.seen


@functools.cache
def _limit_instrument():
    """One instrument class for the process (TVM's decorator makes a new class per call,
    as calls._instrument_class says)."""
    @tvm().ir.instrument.pass_instrument
    class OptBisectLimit:
        def __init__(self, policy):
            self.policy = policy

        def should_run(self, mod, info):
            return self.policy.should_run(str(info.name))
    return OptBisectLimit

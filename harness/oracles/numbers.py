"""Numbers: the inputs a compiled module runs on, and the written tolerance policy.

Plain numpy, no TVM: what to draw for a module's inputs and when two answers are the same.

Inputs are seeded (numpy's PCG64, stable across numpy releases, so repro.py draws the same
numbers): floats uniform in [-1, 1), or in [0.5, 1.5) when the module calls an op whose
domain is positive (log, sqrt, rsqrt, pow, ...: the reference and TVM would produce NaN
differently); integers in {0, 1} (an index input stays in range of any axis longer than
one); booleans both ways.

The policy (`TOLERANCES`): answers of the *same code* (a copy of a module compiles to the
same executable) must be bit-for-bit equal; answers of *different code* (another layout,
a framework's kernels, a pass skipped) agree within |got - want| <= atol + rtol * |want|,
with atol scaled by the output's magnitude (max |want|, at least 1): float32 rtol 1e-4 and
atol 1e-4 x scale, float16 1e-2, bfloat16 2e-2, float64 1e-9; integers and booleans exactly.
On the clean catalog the largest error of an agreement used 6.9 % of its tolerance (each
comparison's `headroom` in the report rows; docs/explanation/findings/wrong-answers.md).
NaN matches NaN and an infinity its own sign.
"""
from __future__ import annotations

import dataclasses

SAME_CODE, DIFFERENT_CODE = "same code", "different code"
# Ops whose inputs are drawn positive: their domain excludes part of [-1, 1).
POSITIVE_DOMAIN_OPS = ("relax.log", "relax.sqrt", "relax.rsqrt", "relax.power", "relax.acos",
                       "relax.asin", "relax.acosh", "relax.atanh", "relax.log1p",
                       "relax.erfinv")


@dataclasses.dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float   # times the output's scale (max |want|, at least 1)

    def text(self, scale: float) -> str:
        if self.rtol == 0 and self.atol == 0:
            return "exact"
        return f"atol {self.atol * scale:.3g} + rtol {self.rtol:g} x |want|"


EXACT = Tolerance(0.0, 0.0)
TOLERANCES = {"float16": Tolerance(1e-2, 1e-2), "bfloat16": Tolerance(2e-2, 2e-2),
              "float32": Tolerance(1e-4, 1e-4), "float64": Tolerance(1e-9, 1e-9)}


def tolerance(dtype: str, code: str) -> Tolerance:
    if code == SAME_CODE:
        return EXACT
    return TOLERANCES.get(dtype, EXACT)   # integers, booleans: exactly


def draw(specs, seed: int, positive: bool) -> list:
    """One array per input spec (name, shape, dtype), seeded by (seed, position)."""
    import numpy
    arrays = []
    for position, spec in enumerate(specs):
        rng = numpy.random.default_rng([seed, position])
        dtype = numpy.dtype(_numpy_dtype(spec.dtype))
        if dtype.kind == "f":
            low, high = (0.5, 1.5) if positive else (-1.0, 1.0)
            arrays.append(rng.uniform(low, high, spec.shape).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, spec.shape).astype(bool))
        else:
            arrays.append(rng.integers(0, 2, spec.shape).astype(dtype))
    return arrays


def is_integer(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def drawable(spec) -> bool:
    return spec.shape is not None and _numpy_dtype(spec.dtype) is not None


def _numpy_dtype(dtype: str):
    import numpy
    if dtype == "bfloat16":
        return None   # numpy has none: not drawn here
    try:
        return numpy.dtype(dtype).name
    except TypeError:
        return None


@dataclasses.dataclass
class Difference:
    """How two answers compare: the errors over every output, and the first mismatch."""
    max_abs: float = 0.0
    max_rel: float = 0.0
    # the largest error over what the policy allows it (1 at the tolerance's edge): how
    # close an agreement came to a false alarm
    headroom: float = 0.0
    mismatch: str = ""   # "" when they agree within the policy

    @property
    def agree(self) -> bool:
        return not self.mismatch


def compare(want: list, got: list, code: str) -> Difference:
    """`got` against `want` output by output, under the policy for `code`."""
    import numpy
    found = Difference()
    want, got = _flat(want), _flat(got)
    if len(want) != len(got):
        found.mismatch = f"{len(got)} outputs where the reference has {len(want)}"
        return found
    for index, (expected, actual) in enumerate(zip(want, got, strict=True)):
        expected, actual = numpy.asarray(expected), numpy.asarray(actual)
        if expected.shape != actual.shape:
            found.mismatch = found.mismatch or (
                f"output {index}: shape {actual.shape} where the reference has "
                f"{expected.shape}")
            continue
        rule = tolerance(str(expected.dtype), code)
        mismatch, max_abs, max_rel, used = _one_output(index, expected, actual, rule)
        found.max_abs, found.max_rel = max(found.max_abs, max_abs), max(found.max_rel, max_rel)
        found.headroom = max(found.headroom, used)
        found.mismatch = found.mismatch or mismatch
    return found


def _flat(outputs) -> list:
    """Outputs with every sequence (ONNX Runtime's answer for a sequence output is a list of
    arrays, ragged ones too) spread in order, as the compiled module's tuples are
    (tvmapi.execute.flatten): made one array, a ragged sequence was our exception."""
    flat: list = []
    for output in outputs:
        if isinstance(output, (list, tuple)):
            flat.extend(_flat(output))
        else:
            flat.append(output)
    return flat


def _one_output(index: int, want, got, rule: Tolerance) -> tuple[str, float, float, float]:
    """(the first mismatch's text or "", max abs error, max rel error, the largest error
    over its allowance) of one output."""
    import numpy
    with numpy.errstate(invalid="ignore", over="ignore"):   # NaN and inf are compared below
        return _one_output_of(index, want, got, rule)


def _one_output_of(index: int, want, got, rule: Tolerance) -> tuple[str, float, float, float]:
    import numpy
    want64, got64 = want.astype(numpy.float64), got.astype(numpy.float64)
    both_nan = numpy.isnan(want64) & numpy.isnan(got64)
    same_inf = numpy.isinf(want64) & (want64 == got64)
    finite = numpy.isfinite(want64) & numpy.isfinite(got64)
    error = numpy.where(finite, numpy.abs(got64 - want64), 0.0)
    scale = max(1.0, float(numpy.max(numpy.abs(want64[finite])))) if finite.any() else 1.0
    # relative to the element, but never to less than a millionth of the output's scale:
    # an element the reference computes as 0 would make any error infinitely relative
    relative = numpy.where(finite, error / numpy.maximum(numpy.abs(want64), 1e-6 * scale),
                           0.0)
    allowed = rule.atol * scale + rule.rtol * numpy.abs(want64)
    bad = ~(both_nan | same_inf | (finite & (error <= allowed)))
    max_abs = float(error.max()) if error.size else 0.0
    max_rel = float(relative.max()) if relative.size else 0.0
    used = float(numpy.max(error / numpy.maximum(allowed, 1e-300))) if error.size and \
        allowed.size and rule != EXACT else (float(bad.any()) if error.size else 0.0)
    if not bad.any():
        return "", max_abs, max_rel, used
    first = tuple(int(i) for i in numpy.argwhere(bad)[0])
    return (f"output {index} ({want.dtype}{list(want.shape)}): {int(bad.sum())} of "
            f"{want.size} elements differ; first at {list(first)}: {_value(got[first])} where the "
            f"reference has {_value(want[first])}; max abs error {max_abs:.3g}, max rel error "
            f"{max_rel:.3g}; tolerance {rule.text(scale)}"), max_abs, max_rel, used


def _value(element) -> str:
    return f"{float(element):.7g}" if element.dtype.kind == "f" else str(element.item())


def sensitive(first: list, second: list) -> bool:
    """The answer at a second draw of the inputs differs beyond the tolerance: an agreement
    on this model says something (a saturated softmax answers the same for any input)."""
    return not compare(first, second, DIFFERENT_CODE).agree

"""What TVM's error texts mean: the frontend refusing an operator, or a module holding an
object structural hashing does not cover, is "cannot test"."""
from __future__ import annotations

# The frontend's explicit refusals (measured on the onnx-node catalog, 0.27.0.post1):
# "Dynamic Split not yet supported", "Dynamic pads are not supported yet",
# "Type <...Var> for size is currently unsupported".
_REFUSALS = ("not yet supported", "not supported yet", "currently unsupported",
             # the PyTorch frontend: "Unsupported function types ['aten.x']",
             # "Unsupported output type in exported graph output: <class ...>"
             "unsupported function types", "unsupported output type",
             # torch.fx (from_fx): "Unsupported module type <class ...>", "Unsupported
             # function target <built-in ...>"; StableHLO: "Unsupported operation stablehlo.x"
             # (not "Unsupported Attribute type": a converter failing on an op it has)
             "unsupported module type", "unsupported function target",
             "unsupported operation ",
             # the PyTorch frontend on PyTorch's OpInfo samples (torch-op, 2026-12-07):
             # "UnsupportedOperatorException: aten.geqrf.default", "input_type complex128 is
             # not handled yet", "Unsupported input kind: InputKind.TOKEN"
             "unsupportedoperatorexception", "is not handled yet", "unsupported input kind")


def is_unsupported_op_error(exc: BaseException) -> bool:
    """The frontend's way of saying it has no converter for an operator (or an attribute
    or input form of it); a crash inside a converter is an error, not this.
    OpAttributeInvalid: 0.25's Pad converter refuses mode="wrap" (0.26 converts it)."""
    text = f"{type(exc).__name__}: {exc}"
    lowered = text.lower()
    return ("OpNotImplemented" in text or "OpAttributeInvalid" in text
            or ("not supported" in lowered and "operator" in lowered)
            or any(refusal in lowered for refusal in _REFUSALS))


def is_unhashable(exc: BaseException) -> bool:
    """tvm_ffi's structural hash refusing a type it has no hash kind for (an extern module
    in a module's attrs, `relax.frontend.nn`'s ExternModule): a limit of the oracle, which
    cannot fingerprint or compare such a module, not a finding against a pass."""
    return isinstance(exc, TypeError) and "StructuralHash is not supported" in str(exc)

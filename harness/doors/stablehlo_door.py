"""The StableHLO door: JAX's export through TVM's StableHLO frontend (`from_stablehlo`,
which reads the text with `jaxlib.mlir`).

Models:
- a `.mlir` file of StableHLO text (`jax.jit(f).lower(*args).as_text()`, or any
  producer's);
- a Python model file that defines, at module level,
      jax_function   the function to lower (jax.numpy / jax.lax code)
      example_args   a tuple of arrays (or pytrees of them) to lower it with
  lowered with `jax.jit(jax_function, keep_unused=True)` (every argument stays an input
  of `main`, in the order of the flattened arguments).
JAX itself is the reference for a model file (jit-compiled by XLA on the CPU); a saved
text has no function to run. Needs the `jax` extra (pip install -e '.[jax]').
"""
from __future__ import annotations

import dataclasses

from harness.doors import python_file
from harness.doors.door import Door, ReferenceUnavailable, require
from harness.tvmapi import calls
from harness.verdict import BadInput, first_line

FUNCTION, ARGS = "jax_function", "example_args"   # the names a model file defines
EXTRA = "jax"


@dataclasses.dataclass(eq=False)
class StableHLOModel:
    """StableHLO text, and the JAX function and arguments it was lowered from (a model
    file's), which answer for it."""
    label: str
    text: str = dataclasses.field(repr=False)
    recipe: str = dataclasses.field(repr=False)
    function: object = dataclasses.field(default=None, repr=False)
    args: tuple = dataclasses.field(default=(), repr=False)


def _lowered(path: str) -> StableHLOModel:
    namespace = python_file.run(path)
    function, args = namespace.get(FUNCTION), namespace.get(ARGS)
    if not callable(function):
        raise BadInput(f"{path}: `{FUNCTION}` must be a function (it is a "
                       f"{type(function).__name__})")
    if not isinstance(args, (tuple, list)):
        raise BadInput(f"{path}: `{ARGS}` must be a tuple of arrays (it is a "
                       f"{type(args).__name__})")
    import jax
    try:
        text = jax.jit(function, keep_unused=True).lower(*args).as_text()
    except Exception as exc:  # noqa: BLE001 - JAX refusing the user's function: theirs
        raise BadInput(f"{python_file.where(exc, path)}: JAX cannot lower `{FUNCTION}` on "
                       f"`{ARGS}`: {type(exc).__name__}: {first_line(exc)[:300]}; it must "
                       f"lower on its own (jax.jit({FUNCTION}).lower(*{ARGS}))") from None
    recipe = "\n".join([
        f"_source = {python_file.read(path)!r}",
        "_namespace = {'__name__': 'model_file'}",
        "exec(compile(_source, 'model.py', 'exec'), _namespace)",
        "import jax",
        f"text = jax.jit(_namespace[{FUNCTION!r}], keep_unused=True).lower("
        f"*_namespace[{ARGS!r}]).as_text()"])
    return StableHLOModel(path, text, recipe, function, tuple(args))


class StableHLODoor(Door):
    name = "stablehlo"
    frontend = "StableHLO"
    suffixes = (".mlir", ".py")
    py_binds = FUNCTION
    extra = EXTRA
    reference = "JAX"
    reproducer = "stablehlo"
    converter_map = "stablehlo"

    def validate(self, path: str) -> None:
        if path.endswith(".mlir"):
            text = python_file.read(path)
            if "stablehlo." not in text and "func.func" not in text:
                raise BadInput(f"{path} holds no StableHLO (no stablehlo.* operation nor "
                               "func.func); write it with jax.jit(f).lower(*args).as_text()")
            return
        self.require_names(path, "JAX", {FUNCTION: "the function to lower",
                                         ARGS: "a tuple of arrays"})

    def load(self, path: str) -> StableHLOModel:
        require(EXTRA, "jax", "jaxlib")
        if path.endswith(".mlir"):
            text = python_file.read(path)
            return StableHLOModel(path, text, f"text = {text!r}")
        return _lowered(path)

    def owns(self, model) -> bool:
        return isinstance(model, StableHLOModel)

    def to_relax(self, model: StableHLOModel):
        return calls.from_stablehlo(model.text)

    def recipe(self, model: StableHLOModel) -> str:
        return model.recipe

    def answer(self, model: StableHLOModel, arrays: list) -> list:
        """JAX on the same arrays, put back into the arguments' structure."""
        if model.function is None:
            raise ReferenceUnavailable(f"{model.label} is StableHLO text: no JAX function "
                                       "to run")
        import jax
        import numpy
        structure = jax.tree_util.tree_structure(model.args)
        try:
            output = jax.jit(model.function)(*jax.tree_util.tree_unflatten(structure, arrays))
        except Exception as exc:  # noqa: BLE001 - JAX refusing our inputs is not TVM's
            raise ReferenceUnavailable(f"JAX cannot run the function on the drawn inputs: "
                                       f"{type(exc).__name__}: {first_line(exc)[:300]}") \
                from None
        return [numpy.asarray(leaf) for leaf in jax.tree_util.tree_leaves(output)]


DOOR = StableHLODoor()

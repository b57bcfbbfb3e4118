"""Random Relax programs over the whole operator registry: the spec, drawn and walked (data).

An `OpProgram` is plain data, so hypothesis can shrink it and a reproducer can print it:
its input tensors, and a list of op applications, each naming the op (`relax.cumsum`),
its drawn builder arguments and how many tensors it produced. A tensor argument is a
`Ref` to an earlier tensor or a `Fresh` new input. Tensors are numbered in the order they
appear: the inputs, then per application its fresh inputs (in argument order) and its
outputs.

There are no per-op rules here: each op's parameters and the kinds of value each takes
come from reflection (harness.tvmapi.op_registry), and whether an application is valid,
and what it produces, from TVM's own struct-info inference, asked through the `graph`
handed in (harness.tvmapi.op_program_relax; the catalog calls no TVM). An application
TVM refuses is drawn again, never kept.
"""
from __future__ import annotations

import dataclasses
import random
from typing import Protocol, Sequence

from harness.catalog.graphs import CONV_LAYOUTS, Chooser

# Input dtypes, float first (a shrunk program is float32); the casts' targets too.
DTYPES = ["float32", "int64", "bool", "int32", "float16"]
MAX_ELEMENTS = 4096   # an application's outputs stay small: legalizing them stays cheap


@dataclasses.dataclass(frozen=True)
class Ref:
    """An argument reading tensor `index` (numbered as the module docstring says)."""
    index: int


@dataclasses.dataclass(frozen=True)
class Fresh:
    """A new input tensor of the program, made where an application needs one."""
    shape: tuple[int, ...]
    dtype: str = "float32"


@dataclasses.dataclass(frozen=True)
class Application:
    op: str                                     # a relax op name: relax.cumsum
    args: tuple[tuple[str, object], ...] = ()   # drawn builder arguments; omitted: default
    produces: int = 1                           # tensors it made (a tuple's fields apart)

    def reads(self) -> list[int]:
        return [value.index for _, value in self.args for value in _flat(value)
                if isinstance(value, Ref)]


@dataclasses.dataclass(frozen=True)
class OpProgram:
    inputs: tuple[Fresh, ...]
    applications: tuple[Application, ...]
    desired: tuple[tuple[str, tuple[str, ...]], ...] = ()   # ConvertLayout, () = none

    def desired_layouts(self) -> dict | None:
        return {op: list(layouts) for op, layouts in self.desired} or None

    def ops(self) -> list[str]:
        return [application.op for application in self.applications]


class Graph(Protocol):
    """What a program is built on (harness.tvmapi.op_program_relax): `input` makes an
    input tensor, `apply` calls an op's builder with resolved arguments and returns its
    output tensors, or None when TVM refused it (`refusal` then says why); `type_of` is a
    tensor's (shape, dtype)."""

    refusal: str

    def input(self, shape: tuple[int, ...], dtype: str): ...
    def apply(self, op: str, kwargs: dict) -> list | None: ...
    def type_of(self, tensor) -> tuple[tuple[int, ...], str]: ...


def _flat(value) -> list:
    return list(value) if isinstance(value, tuple) else [value]


# ---- drawing ------------------------------------------------------------------------

def _draw_shape(choose: Chooser, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """A shape argument or a fresh input's shape: an existing tensor's (often what a
    broadcast, a reshape or a binary op needs), its element count, or any small one."""
    way = choose.integer(0, 3) if shapes else 3
    if way < 3:
        shape = shapes[choose.integer(0, len(shapes) - 1)]
        if way == 1:
            count = 1
            for size in shape:
                count *= size
            return (count,)
        if way == 2 and shape:
            return shape[1:] or (1,)
        return shape
    return tuple(choose.integer(1, 5) for _ in range(choose.integer(0, 4)))


def _draw_value(choose: Chooser, kind: str, shapes: Sequence[tuple[int, ...]]):
    if kind == "int":
        return choose.integer(-1, 4)
    if kind == "ints":
        return tuple(choose.integer(-1, 4) for _ in range(choose.integer(1, 4)))
    if kind == "float":
        return choose.choice([1.0, 0.5, 0.0, -1.0, 2.0, 1e-5])
    if kind == "floats":
        return tuple(choose.choice([0.0, 0.5, 1.0]) for _ in range(choose.integer(1, 4)))
    if kind == "bool":
        return choose.boolean()
    if kind == "dtype":
        return choose.choice(DTYPES)
    if kind == "shape":
        return _draw_shape(choose, shapes)
    if kind == "none":
        return None
    raise ValueError(f"no draw for kind {kind!r}")   # op_registry made a kind we lack


def _draw_tensor(choose: Chooser, types: Sequence[tuple[tuple[int, ...], str]]):
    """An existing tensor (most often) or a fresh input shaped like one or at random."""
    if types and choose.integer(0, 3) < 3:
        return Ref(choose.integer(0, len(types) - 1))
    shape = _draw_shape(choose, [shape for shape, _ in types])
    return Fresh(shape, choose.choice(DTYPES))


def draw_arguments(choose: Chooser, signature, types) -> tuple[tuple[str, object], ...]:
    """Values for one op's builder parameters (op_registry.OpSignature): a parameter with a
    default keeps it unless a boolean says otherwise (so shrinking restores defaults)."""
    args = []
    shapes = [shape for shape, _ in types]
    for param in signature.params:
        if not param.kinds or (param.has_default and not choose.boolean()):
            continue
        kind = choose.choice(list(param.kinds))
        if kind == "tensor":
            value = _draw_tensor(choose, types)
        elif kind == "tensors":
            value = tuple(_draw_tensor(choose, types) for _ in range(choose.integer(1, 3)))
        else:
            value = _draw_value(choose, kind, shapes)
        args.append((param.name, value))
    return tuple(args)


def _resolve(graph: Graph, value, tensors: list):
    """A drawn argument with its tensors made: a Ref read, a Fresh a new input (appended)."""
    if isinstance(value, tuple) and any(isinstance(v, (Ref, Fresh)) for v in value):
        return [_resolve(graph, v, tensors) for v in value]
    if isinstance(value, Ref):
        return tensors[value.index]
    if isinstance(value, Fresh):
        tensors.append(graph.input(value.shape, value.dtype))
        return tensors[-1]
    return value


def _apply(graph: Graph, application: Application, tensors: list) -> list | None:
    """One application on `graph`; its outputs appended to `tensors` (None: refused)."""
    kwargs = {name: _resolve(graph, value, tensors) for name, value in application.args}
    outputs = graph.apply(application.op, kwargs)
    if outputs is not None:
        tensors += outputs
    return outputs


def _small(graph: Graph, outputs: list) -> bool:
    for tensor in outputs:
        count = 1
        for size in graph.type_of(tensor)[0]:
            count *= size
        if count > MAX_ELEMENTS:
            graph.refusal = f"an output of {count} elements (more than {MAX_ELEMENTS})"
            return False
    return True


def draw_application(choose: Chooser, signatures: Sequence, graph: Graph, tensors: list,
                     attempts: int = 12) -> Application | None:
    """An application TVM accepts, built on `graph` (its outputs appended to `tensors`),
    or None after `attempts` refusals. A refused draw leaves `tensors` as it was."""
    for _ in range(attempts):
        signature = choose.choice(signatures)
        types = [graph.type_of(tensor) for tensor in tensors]
        args = draw_arguments(choose, signature, types)
        trial = list(tensors)
        outputs = _apply(graph, Application(signature.op, args), trial)
        if outputs is not None and _small(graph, outputs):
            tensors[:] = trial
            return Application(signature.op, args, len(outputs))
    return None


class _Simplest:
    """Every choice its simplest option: the same draws on every run."""

    def integer(self, low: int, high: int) -> int:
        return low

    def choice(self, options: Sequence):
        return options[0]

    def boolean(self) -> bool:
        return False


def _first_accepted(signatures: Sequence, graph: Graph, tensors: list) -> Application | None:
    """The first op, in the registry's order, TVM accepts on `tensors` with its simplest
    arguments. A program is never empty because its first draws were all refused: hypothesis
    found inputs, a (1, 1) and a (1,) float32, where twelve random ops were, and an empty
    program checks the inputs alone."""
    for signature in signatures:
        application = draw_application(_Simplest(), [signature], graph, tensors, attempts=1)
        if application is not None:
            return application
    return None


def draw_program(choose: Chooser, signatures: Sequence, graph: Graph,
                 max_applications: int = 4) -> OpProgram:
    """A program whose every choice comes from `choose`, each application one TVM accepted
    on `graph` (a checking graph: struct-info inference only)."""
    inputs = []
    for _ in range(choose.integer(1, 2)):
        shape = tuple(choose.integer(1, 5) for _ in range(choose.integer(1, 4)))
        inputs.append(Fresh(shape, choose.choice(DTYPES)))
    tensors = [graph.input(fresh.shape, fresh.dtype) for fresh in inputs]
    applications = []
    # A "one more?" before each application after the first (as hypothesis's own lists
    # do), not a count drawn up front: the shrinker then deletes any one application.
    for index in range(max_applications):
        if index and not choose.boolean():
            break
        application = draw_application(choose, signatures, graph, tensors)
        if application is None and not applications:
            application = _first_accepted(signatures, graph, tensors)
        if application is not None:
            applications.append(application)
    desired = ()
    if choose.boolean():
        desired = (("relax.nn.conv2d", tuple(choose.choice(CONV_LAYOUTS))),)
    return OpProgram(tuple(inputs), tuple(applications), desired)


# ---- a program walked ---------------------------------------------------------------

def tensor_count(program: OpProgram) -> int:
    count = len(program.inputs)
    for application in program.applications:
        count += sum(1 for _, value in application.args for v in _flat(value)
                     if isinstance(v, Fresh)) + application.produces
    return count


def outputs(program: OpProgram) -> list[int]:
    """The tensors applications made that no application reads: the program's results (so
    nothing is dead code); the last tensor when every one is read."""
    count, produced = len(program.inputs), []
    for application in program.applications:
        count += sum(1 for _, value in application.args for v in _flat(value)
                     if isinstance(v, Fresh))
        produced += range(count, count + application.produces)
        count += application.produces
    read = {index for application in program.applications for index in application.reads()}
    return [index for index in produced if index not in read] or [count - 1]


def emit(program: OpProgram, graph: Graph):
    """The program built once on `graph` (which then has `finish(outputs)`); an application
    refused here (the spec was edited by hand, or TVM changed) raises ValueError."""
    tensors = [graph.input(fresh.shape, fresh.dtype) for fresh in program.inputs]
    for application in program.applications:
        results = _apply(graph, application, tensors)
        if results is None or len(results) != application.produces:
            raise ValueError(f"{application.op} refused in a built program: {graph.refusal}")
    return graph.finish([tensors[index] for index in outputs(program)])


class RandomChooser:
    """A Chooser over Python's random (no hypothesis): the registry probe's draws."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    def choice(self, options):
        return self.random.choice(list(options))

    def boolean(self) -> bool:
        return self.random.random() < 0.5

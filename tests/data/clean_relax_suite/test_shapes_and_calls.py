"""Symbolic shapes, tuples, R.call_tir into a T.prim_func and R.call_packed into Python,
a TIR PrimFunc compiled alone."""
import numpy as np
import tvm
import tvm.testing
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@I.ir_module
class Symbolic:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")):
        n = T.int64()
        with R.dataflow():
            doubled: R.Tensor((n, 4), "float32") = R.add(x, x)
            pair = (doubled, x)
            first = pair[0]
            R.output(first, pair)
        return (first, pair[1])


@I.ir_module
class Calls:
    @T.prim_func
    def add_one(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i] + T.float32(1)

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        cls = Calls
        plus_one = R.call_tir(cls.add_one, (x,), out_ty=R.Tensor((4,), "float32"))
        doubled = R.call_packed("clean_suite.double", plus_one,
                                ty_args=R.Tensor((4,), "float32"))
        return doubled


def test_symbolic_shape_runs_for_two_lengths():
    machine = relax.VirtualMachine(tvm.compile(Symbolic, target="llvm"), tvm.cpu())
    for n in (1, 5):
        x = np.arange(n * 4, dtype="float32").reshape(n, 4)
        first, second = machine["main"](tvm.runtime.tensor(x))
        tvm.testing.assert_allclose(first.numpy(), x * 2)
        tvm.testing.assert_allclose(second.numpy(), x)


def test_call_tir_into_a_prim_func_then_call_packed_into_python():
    seen = []

    def double(x):
        seen.append(x.numpy())
        return tvm.runtime.tensor(x.numpy() * 2)

    tvm.register_global_func("clean_suite.double", double, override=True)
    machine = relax.VirtualMachine(tvm.compile(Calls, target="llvm"), tvm.cpu())
    out = machine["main"](tvm.runtime.tensor(np.zeros(4, "float32")))
    tvm.testing.assert_allclose(seen[0], np.ones(4, "float32"))       # call_tir's output
    tvm.testing.assert_allclose(out.numpy(), np.full(4, 2, "float32"))  # call_packed's


def test_prim_func_alone_compiles_and_runs():
    @T.prim_func
    def scale(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "scale"})
        for i in range(8):
            b[i] = a[i] * T.float32(3)

    library = tvm.compile(scale, target="llvm")
    a = tvm.runtime.tensor(np.arange(8, dtype="float32"))
    b = tvm.runtime.tensor(np.zeros(8, "float32"))
    library["scale"](a, b)
    tvm.testing.assert_allclose(b.numpy(), np.arange(8, dtype="float32") * 3)

"""Relax modules built with the BlockBuilder and with TVMScript, compiled and run on the VM."""
import numpy as np
import tvm
import tvm.testing
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R


def built_with_block_builder():
    """relu(x + y) in a dataflow block, as a frontend would emit it."""
    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    y = relax.Var("y", relax.TensorType((2, 3), "float32"))
    with builder.function("main", [x, y]):
        with builder.dataflow():
            total = builder.emit(relax.op.add(x, y))
            out = builder.emit_output(relax.op.nn.relu(total))
        builder.emit_func_output(out)
    return builder.get()


@I.ir_module
class Script:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            total = R.add(x, y)
            out = R.nn.relu(total)
            R.output(out)
        return out


def run(mod, *arrays):
    executable = tvm.compile(mod, target="llvm")
    machine = relax.VirtualMachine(executable, tvm.cpu())
    return machine["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def test_block_builder_and_script_build_the_same_module():
    tvm.ir.assert_structural_equal(built_with_block_builder(), Script)


def test_compiled_module_runs_on_the_vm():
    x = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    y = np.ones((2, 3), "float32")
    tvm.testing.assert_allclose(run(built_with_block_builder(), x, y), np.maximum(x + y, 0))


def test_constants_are_folded_and_kept():
    weight = np.arange(6, dtype="float32").reshape(2, 3)

    @I.ir_module
    class WithConstant:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                doubled = R.multiply(R.const(weight), R.const(2.0, "float32"))
                out = R.add(x, doubled)
                R.output(out)
            return out

    folded = relax.transform.FoldConstant()(WithConstant)
    x = np.zeros((2, 3), "float32")
    tvm.testing.assert_allclose(run(folded, x), weight * 2)

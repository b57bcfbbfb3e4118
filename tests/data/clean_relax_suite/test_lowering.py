"""Legalizing and fusing: LegalizeOps, FuseOps + FuseTIR, the zero pipeline."""
import numpy as np
import tvm
import tvm.testing
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Chain:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32")):
        with R.dataflow():
            product = R.matmul(x, w)
            shifted = R.add(product, R.const(1.0, "float32"))
            out = R.nn.relu(shifted)
            R.output(out)
        return out


def prim_func_count(mod):
    return sum(isinstance(func, tvm.tirx.PrimFunc) for func in mod.functions.values())


def test_legalize_ops_makes_a_prim_func_per_operator():
    legalized = relax.transform.LegalizeOps()(Chain)
    assert prim_func_count(legalized) == 3


def test_fuse_ops_and_fuse_tir_merge_the_elementwise_tail():
    legalized = relax.transform.LegalizeOps()(Chain)
    annotated = relax.transform.AnnotateTIROpPattern()(legalized)
    fused = relax.transform.FuseTIR()(relax.transform.FuseOps()(annotated))
    assert prim_func_count(fused) < prim_func_count(legalized)


def test_zero_pipeline_then_compile_gives_the_numpy_answer():
    lowered = relax.get_pipeline("zero")(Chain)
    machine = relax.VirtualMachine(tvm.compile(lowered, target="llvm"), tvm.cpu())
    x = np.random.default_rng(0).standard_normal((4, 4)).astype("float32")
    w = np.eye(4, dtype="float32")
    out = machine["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
    tvm.testing.assert_allclose(out, np.maximum(x + 1, 0), rtol=1e-5)

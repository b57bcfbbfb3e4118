#!/usr/bin/env python3
"""Reproducer: TVM's StableHLO frontend cannot read a DenseI64ArrayAttr, the form today's
StableHLO writes integer-array attributes in (reduce's dimensions, convolution's and
reduce_window's window_strides, ...): every reduction, convolution and pooling JAX lowers
fails to import.

Seen:        python -m harness check jax-conv-net (and jax-attention, jax-control-flow,
             any user's JAX file that broadcasts a bias, transposes or convolves):
             error at stage import, "ValueError: Unsupported Attribute type: <class
             'jaxlib.mlir._mlir_libs._mlir.ir.DenseI64ArrayAttr'>" (a mean, a softmax,
             a layer norm or a convolution is enough).
On:          apache-tvm 0.25.0 - 0.27.0.post1, apache/tvm main 5d4dc87213; jax/jaxlib
             0.4.38, 0.5.3 and 0.8.3 (every release that still imports at all: 0.9 and
             later fail earlier, stablehlo_shapedtype_isinstance_removed.py)
Cause:       StableHLOImporter._attr2value knows IntegerAttr, FloatAttr and
             DenseIntElementsAttr / DenseFPElementsAttr; StableHLO moved these attributes
             to DenseI64ArrayAttr (upstream StableHLO, 2023). TVM's own StableHLO tests run
             on a GPU only, and its convolution test is skipped.
Run:         python stablehlo_dense_i64_array_attr.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import jax  # noqa: F401 - from_stablehlo reads the text with jaxlib.mlir and jax
    from tvm.relax.frontend.stablehlo import from_stablehlo
except ImportError as exc:
    print(f"cannot run here: {exc}; this reproducer needs apache-tvm, jax and jaxlib")
    sys.exit(2)

# jax.jit(lambda x: jnp.sum(x, axis=1)).lower(jnp.ones((2, 3))).as_text(), trimmed
TEXT = """
module @jit_sum {
  func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] :
        (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""
try:
    module = from_stablehlo(TEXT)
except ValueError as exc:
    if "DenseI64ArrayAttr" not in str(exc):
        raise
    print(f"reproduces: from_stablehlo cannot read reduce's dimensions ({exc})")
    sys.exit(1)
print("does not reproduce: the function imports")
sys.exit(0)

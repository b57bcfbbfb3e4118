#!/usr/bin/env python3
"""Reproducer: TVM's torch.fx frontend converts an eval-mode nn.BatchNorm2d as a
training-mode batch norm: it normalizes with the batch's statistics, not the running ones,
so every model with BatchNorm imported by from_fx computes wrong answers.

Seen:        python -m harness report 'tv-*-fx' --path compile: wrong-result on every
             torchvision model with BatchNorm (resnet18, mobilenet_v2, mobilenet_v3_small,
             efficientnet_b0, densenet121, googlenet, mnasnet0_5, regnet_x_400mf: "TVM's
             answer is not PyTorch's", 991-1000 of 1000 logits differ, no optional pass to
             blame: the conversion); the same models by torch.export agree with PyTorch.
On:          apache-tvm 0.25.0 - 0.27.0.post1, apache/tvm main 5d4dc87213; torch 2.14.1
Cause:       TorchFXImporter._batch_norm_2d_module calls relax.op.nn.batch_norm without
             `training`, whose default is True since 51d4b6bcde ("[Relax] Batch norm
             correctness on eval mode", #17752); the module's own `training` (False in
             eval mode) is never read.
Run:         python fx_batch_norm_eval_module_converted_training.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import numpy
    import torch
    import tvm
    from tvm import relax
    from tvm.relax.frontend.torch import from_fx
except ImportError as exc:
    print(f"cannot run here: {exc}; this reproducer needs apache-tvm and torch")
    sys.exit(2)

norm = torch.nn.BatchNorm2d(2)
with torch.no_grad():   # running statistics that differ from any batch's
    norm.running_mean.copy_(torch.tensor([0.5, -1.0]))
    norm.running_var.copy_(torch.tensor([2.0, 0.25]))
model = torch.nn.Sequential(norm).eval()   # a leaf module, as inside any model
x = torch.arange(2 * 2 * 3 * 3, dtype=torch.float32).reshape(2, 2, 3, 3) / 10
want = model(x).detach().numpy()

module = from_fx(torch.fx.symbolic_trace(model), [((2, 2, 3, 3), "float32")])
executable = tvm.compile(module, target="llvm")
machine = relax.VirtualMachine(executable, tvm.cpu())
got = machine["main"](tvm.runtime.tensor(x.numpy()) if hasattr(tvm.runtime, "tensor")
                      else tvm.nd.array(x.numpy())).numpy()
if not numpy.allclose(got, want, atol=1e-5):
    print(f"reproduces: the eval-mode BatchNorm2d computes {got.ravel()[:3]} where torch has "
          f"{want.ravel()[:3]} (the batch's statistics, not the running ones)")
    sys.exit(1)
print("does not reproduce: the running statistics are used, as torch does")
sys.exit(0)

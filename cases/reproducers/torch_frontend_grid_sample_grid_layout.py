#!/usr/bin/env python3
"""Reproducer: TVM's PyTorch frontend converts F.grid_sample with the grid in the wrong layout.

Seen:        error at stage import (frontend) on tv-raft_small and tv-raft_large (python -m
             harness check tv-raft_small: "The channel size of the data should equal to the
             product of input channel size of the weight and the number of groups. However,
             the data channel size is 56 while the weight input channel size and number of
             groups are 196 and 1"): RAFT's correlation lookup samples with grid_sample, its
             result has the wrong shape, and a later conv2d refuses it. Their ONNX twins
             (tv-raft_*-onnx: torch.onnx.export, then the ONNX frontend) import and pass.
On:          apache-tvm 0.26.0 and 0.27.0.post1 (torch 2.14.1); 0.25.0 converts it right
             (a regression between 0.25.0 and 0.26.0)
Cause:       torch's grid is (N, H_out, W_out, 2); the frontend hands it as is to
             R.image.grid_sample(layout="NCHW"), which reads a grid as (N, 2, H_out, W_out):
             for data (2, 1, 4, 4) and a (2, 7, 7, 2) grid the output is inferred (2, 1, 7, 2),
             where torch gives (2, 1, 7, 7).
Run:         python torch_frontend_grid_sample_grid_layout.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import torch
    import torch.nn.functional as F
    from tvm.relax.frontend.torch import from_exported_program
except ImportError as exc:
    print(f"cannot run here: {exc} (needs apache-tvm and torch)")
    sys.exit(2)


class GridSample(torch.nn.Module):
    def forward(self, data, grid):
        return F.grid_sample(data, grid, align_corners=True)


data, grid = torch.randn(2, 1, 4, 4), torch.rand(2, 7, 7, 2) * 2 - 1
expected = tuple(GridSample()(data, grid).shape)
module = from_exported_program(torch.export.export(GridSample(), (data, grid)))
main = module["main"]
returned = main.ret_ty if hasattr(main, "ret_ty") else main.ret_struct_info   # 0.27 | before
shape = tuple(int(dim) for dim in returned.fields[0].shape)
if shape != expected:
    print(f"reproduces: the imported grid_sample returns {shape}, torch returns {expected}")
    sys.exit(1)
print(f"does not reproduce: both return {expected}")
sys.exit(0)

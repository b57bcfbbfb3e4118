"""The smallest nn model: an MLP block over a symbolic batch.

Linear -> GELU -> Linear, a residual and a LayerNorm, exported with `forward`'s batch
dimension symbolic ("batch") and the weights as plain parameters: the shape every
`relax.frontend.nn` model starts from, without a cache or an attention kernel.
"""
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op


class MLPBlock(nn.Module):
    def __init__(self, hidden: int = 64, inner: int = 128):
        self.fc1 = nn.Linear(hidden, inner)
        self.fc2 = nn.Linear(inner, hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x: nn.Tensor):
        return self.norm(x + self.fc2(op.gelu(self.fc1(x))))


MODEL = MLPBlock()
SPEC = {"forward": {"x": nn.spec.Tensor(["batch", 64], "float32"),
                    "$": {"param_mode": "plain", "effect_mode": "none"}}}

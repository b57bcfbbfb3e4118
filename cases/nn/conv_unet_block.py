"""A diffusion UNet's block over a symbolic batch, in `relax.frontend.nn`'s diffusers layers.

Web Stable Diffusion builds its UNet from these modules: `nn.modules.Timesteps` and
`nn.modules.TimestepEmbedding` (the sinusoidal timestep embedding and its MLP), GroupNorm,
SiLU, Conv2D, a strided down-sampling conv and `op.interpolate` back up. The batch
("batch") is symbolic in both the latent and the timesteps; 4 latent channels at 16x16,
32 channels inside.
"""
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import modules, op

LATENT, CHANNELS, TIME = 4, 32, 64


class ResnetBlock(nn.Module):
    def __init__(self):
        self.norm1 = nn.GroupNorm(8, CHANNELS)
        self.conv1 = nn.Conv2D(CHANNELS, CHANNELS, 3, padding=1)
        self.time_emb_proj = nn.Linear(TIME, CHANNELS)
        self.norm2 = nn.GroupNorm(8, CHANNELS)
        self.conv2 = nn.Conv2D(CHANNELS, CHANNELS, 3, padding=1)

    def forward(self, x: nn.Tensor, temb: nn.Tensor):
        h = self.conv1(op.silu(self.norm1(x)))
        b = temb.shape[0]
        h = h + op.reshape(self.time_emb_proj(op.silu(temb)), (b, CHANNELS, 1, 1))
        return x + self.conv2(op.silu(self.norm2(h)))


class TinyUNet(nn.Module):
    def __init__(self):
        self.time_proj = modules.Timesteps(CHANNELS, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embedding = modules.TimestepEmbedding(CHANNELS, TIME)
        self.conv_in = nn.Conv2D(LATENT, CHANNELS, 3, padding=1)
        self.down = ResnetBlock()
        self.downsample = nn.Conv2D(CHANNELS, CHANNELS, 3, stride=2, padding=1)
        self.up = ResnetBlock()
        self.conv_norm_out = nn.GroupNorm(8, CHANNELS)
        self.conv_out = nn.Conv2D(CHANNELS, LATENT, 3, padding=1)

    def forward(self, sample: nn.Tensor, timestep: nn.Tensor):
        temb = self.time_embedding(self.time_proj(timestep))
        h = self.down(self.conv_in(sample), temb)
        h = op.interpolate(self.downsample(h), scale_factor=2.0, mode="nearest")
        h = self.up(h, temb)
        return self.conv_out(op.silu(self.conv_norm_out(h)))


MODEL = TinyUNet()
SPEC = {"forward": {"sample": nn.spec.Tensor(["batch", LATENT, 16, 16], "float32"),
                    "timestep": nn.spec.Tensor(["batch"], "float32"),
                    "$": {"param_mode": "plain", "effect_mode": "none"}}}

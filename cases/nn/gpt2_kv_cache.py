"""A GPT-2-style decoder whose attention reads `nn.KVCache` effects over a symbolic length.

Before the paged KV cache, TVM's `nn` models (and MLC-LLM's first ones) kept keys and
values in `nn.KVCache`: an effect, so `export_tvm` threads its state through every
function as extra parameters and results, and adds `_initialize_effect`. `forward`
takes this step's tokens (a symbolic "seq_len") and the total length so far (an int,
"total_seq_len"), appends to the caches, views all of them and applies a causal mask
built with `op.tensor_expr_op` over both symbolic lengths. GPT-2's blocks (pre-LayerNorm,
fused QKV with bias, GELU MLP); hidden size 64, 2 layers, 4 heads.
"""
from tvm import te, tirx
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op

HIDDEN, HEADS, LAYERS, VOCAB, MAX_LEN = 64, 4, 2, 128, 32
HEAD_DIM = HIDDEN // HEADS


def _causal_mask(scores: te.Tensor):
    """-inf where a query (at total - seq + i) would see a later key j."""
    b, h, s, t = scores.shape
    return te.compute((b, h, s, t), lambda n, m, i, j: tirx.if_then_else(
        j > t - s + i, tirx.min_value(scores.dtype), scores[n, m, i, j]), name="causal_mask")


class GPT2Attention(nn.Module):
    def __init__(self):
        self.c_attn = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.c_proj = nn.Linear(HIDDEN, HIDDEN)
        self.k_cache = nn.KVCache(MAX_LEN, [HEADS, HEAD_DIM])
        self.v_cache = nn.KVCache(MAX_LEN, [HEADS, HEAD_DIM])

    def forward(self, x: nn.Tensor, total_seq_len):
        b, s, _ = x.shape
        q, k, v = op.split(op.reshape(self.c_attn(x), (b, s, 3 * HEADS, HEAD_DIM)), 3, axis=2)
        self.k_cache.append(op.squeeze(k, axis=0))
        self.v_cache.append(op.squeeze(v, axis=0))
        keys = op.reshape(self.k_cache.view(total_seq_len), (b, total_seq_len, HEADS, HEAD_DIM))
        values = op.reshape(self.v_cache.view(total_seq_len),
                            (b, total_seq_len, HEADS, HEAD_DIM))
        q, keys, values = (op.permute_dims(t, [0, 2, 1, 3]) for t in (q, keys, values))
        scores = op.matmul(q, op.permute_dims(keys, [0, 1, 3, 2])) / (HEAD_DIM**0.5)
        scores = op.tensor_expr_op(_causal_mask, name_hint="causal_mask", args=[scores])
        out = op.matmul(op.softmax(scores, axis=-1), values)
        return self.c_proj(op.reshape(op.permute_dims(out, [0, 2, 1, 3]), (b, s, HIDDEN)))


class GPT2Block(nn.Module):
    def __init__(self):
        self.ln_1 = nn.LayerNorm(HIDDEN)
        self.attn = GPT2Attention()
        self.ln_2 = nn.LayerNorm(HIDDEN)
        self.c_fc = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.c_proj = nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x: nn.Tensor, total_seq_len):
        x = x + self.attn(self.ln_1(x), total_seq_len)
        return x + self.c_proj(op.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2LMHead(nn.Module):
    def __init__(self):
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.h = nn.ModuleList([GPT2Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids: nn.Tensor, total_seq_len):
        x = self.wte(input_ids)
        for block in self.h:
            x = block(x, total_seq_len)
        return op.matmul(self.ln_f(x), op.permute_dims(self.wte.weight))   # tied lm_head


MODEL = GPT2LMHead()
SPEC = {"forward": {"input_ids": nn.spec.Tensor([1, "seq_len"], "int32"),
                    "total_seq_len": int}}

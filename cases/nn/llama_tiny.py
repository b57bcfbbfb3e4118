"""A tiny LLaMA built the way MLC-LLM builds its models (mlc_llm/model/llama/llama_model.py).

`tvm.relax.frontend.nn` modules with a fused QKV projection, RMSNorm, SiLU-gated MLP,
and attention through the paged KV cache of `tvm.relax.frontend.nn.llm`; the methods
MLC-LLM exports (embed, prefill, decode, batch_prefill, batch_decode,
create_paged_kv_cache) with its spec, whose sequence length and batch size are
symbolic ("seq_len", "batch_size"), parameters packed into one tuple, no effects.

One difference, forced by the release: MLC-LLM's `create_paged_kv_cache` calls
`PagedKVCache.create_generic` and its own `DispatchKVCacheCreation` pass later swaps in
`TIRPagedKVCache` for the target; TVM 0.27 has no `create_generic`, so the method builds
the `TIRPagedKVCache` for llvm directly: the CPU TIR kernels (paged prefill, decode,
tree attention, RoPE, page copy) MLC-LLM's pass adds on a CPU target. Hidden size 64,
2 layers, 4 heads (and 4 KV heads), vocabulary 128: a check takes seconds.
"""
import dataclasses

import tvm
from tvm import relax, te
from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op
from tvm.relax.frontend.nn.llm.kv_cache import PagedKVCache, RopeMode, TIRPagedKVCache

# 0.25 spells it relax.PrimValue; 0.26 on, relax.prim_value (as MLC-LLM of each era did)
_prim_value = getattr(relax, "prim_value", None) or relax.PrimValue


@dataclasses.dataclass(frozen=True)
class LlamaConfig:
    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 4
    vocab_size: int = 128
    rms_norm_eps: float = 1e-5
    rope_theta: int = 10000

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads


class LlamaFFN(nn.Module):
    def __init__(self, config: LlamaConfig):
        self.gate_up_proj = nn.Linear(config.hidden_size, 2 * config.intermediate_size,
                                      bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x: nn.Tensor):
        gate, up = op.split(self.gate_up_proj(x), 2, axis=-1)
        return self.down_proj(op.silu(gate) * up)


class LlamaAttention(nn.Module):
    def __init__(self, config: LlamaConfig):
        self.head_dim = config.head_dim
        self.num_q_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.qkv_proj = nn.Linear(config.hidden_size,
                                  (self.num_q_heads + 2 * self.num_kv_heads) * self.head_dim,
                                  bias=False)
        self.o_proj = nn.Linear(self.num_q_heads * self.head_dim, config.hidden_size,
                                bias=False)

    def forward(self, hidden_states: nn.Tensor, paged_kv_cache: PagedKVCache, layer_id: int):
        d, h_q, h_kv = self.head_dim, self.num_q_heads, self.num_kv_heads
        b, s, _ = hidden_states.shape
        qkv = op.reshape(self.qkv_proj(hidden_states), (b, s, h_q + 2 * h_kv, d))
        output = paged_kv_cache.attention_with_fused_qkv(layer_id, qkv, self.num_q_heads,
                                                         sm_scale=self.head_dim**-0.5)
        return self.o_proj(op.reshape(output, (b, s, h_q * d)))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config: LlamaConfig):
        eps = config.rms_norm_eps
        self.self_attn = LlamaAttention(config)
        self.mlp = LlamaFFN(config)
        self.input_layernorm = nn.RMSNorm(config.hidden_size, -1, eps, bias=False)
        self.post_attention_layernorm = nn.RMSNorm(config.hidden_size, -1, eps, bias=False)

    def forward(self, hidden_states: nn.Tensor, paged_kv_cache: PagedKVCache, layer_id: int):
        out = self.self_attn(self.input_layernorm(hidden_states), paged_kv_cache, layer_id)
        hidden_states = out + hidden_states
        return self.mlp(self.post_attention_layernorm(hidden_states)) + hidden_states


class LlamaModel(nn.Module):
    def __init__(self, config: LlamaConfig):
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(config)
                                     for _ in range(config.num_hidden_layers)])
        self.norm = nn.RMSNorm(config.hidden_size, -1, config.rms_norm_eps, bias=False)

    def forward(self, input_embed: nn.Tensor, paged_kv_cache: PagedKVCache):
        hidden_states = input_embed
        for layer_id, layer in enumerate(self.layers):
            hidden_states = layer(hidden_states, paged_kv_cache, layer_id)
        return self.norm(hidden_states)


class LlamaForCausalLM(nn.Module):
    def __init__(self, config: LlamaConfig):
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.dtype = "float32"

    def batch_forward(self, input_embeds: nn.Tensor, paged_kv_cache: PagedKVCache,
                      logit_positions: nn.Tensor | None = None):
        hidden_states = self.model(input_embeds, paged_kv_cache)
        if logit_positions is not None:
            hidden_states = op.take(hidden_states, logit_positions, axis=1)
        return self.get_logits(hidden_states)

    def embed(self, input_ids: nn.Tensor):
        return self.model.embed_tokens(input_ids)

    def get_logits(self, hidden_states: nn.Tensor):
        logits = self.lm_head(hidden_states)
        return logits if logits.dtype == "float32" else logits.astype("float32")

    def prefill(self, input_embed: nn.Tensor, paged_kv_cache: PagedKVCache):
        def _index(x: te.Tensor):   # the last token's hidden state: (b, s, d) -> (b, 1, d)
            b, s, d = x.shape
            return te.compute((b, 1, d), lambda i, _, k: x[i, s - 1, k], name="index")

        hidden_states = self.model(input_embed, paged_kv_cache)
        hidden_states = op.tensor_expr_op(_index, name_hint="index", args=[hidden_states])
        return self.get_logits(hidden_states), paged_kv_cache

    def decode(self, input_embed: nn.Tensor, paged_kv_cache: PagedKVCache):
        return self.get_logits(self.model(input_embed, paged_kv_cache)), paged_kv_cache

    def batch_prefill(self, input_embeds: nn.Tensor, logit_positions: nn.Tensor,
                      paged_kv_cache: PagedKVCache):
        return self.batch_forward(input_embeds, paged_kv_cache, logit_positions), paged_kv_cache

    def batch_decode(self, input_embeds: nn.Tensor, paged_kv_cache: PagedKVCache):
        return self.batch_forward(input_embeds, paged_kv_cache), paged_kv_cache

    def create_paged_kv_cache(self, max_batch_size, max_total_seq_len, prefill_chunk_size,
                              page_size, support_sliding_window) -> PagedKVCache:
        config = self.config
        return TIRPagedKVCache(
            attn_kind="mha", max_batch_size=max_batch_size, max_total_seq_len=max_total_seq_len,
            prefill_chunk_size=prefill_chunk_size, page_size=page_size,
            support_sliding_window=support_sliding_window,
            layer_partition=relax.ShapeExpr([0, config.num_hidden_layers]),
            num_hidden_layers=config.num_hidden_layers,
            num_attention_heads=config.num_attention_heads,
            num_key_value_heads=config.num_key_value_heads,
            qk_head_dim=config.head_dim, v_head_dim=config.head_dim,
            mla_original_qk_head_dim=0, mla_original_v_head_dim=0,
            rope_mode=RopeMode.NORMAL, rope_scale=1, rope_theta=config.rope_theta,
            rope_scaling={}, rope_ext_factors=_prim_value(0), rotary_dim=config.head_dim,
            enable_disaggregation=False, dtype=self.dtype,
            target=tvm.target.Target("llvm"))

    def get_default_spec(self):
        hidden, dtype = self.config.hidden_size, self.dtype
        packed = {"param_mode": "packed", "effect_mode": "none"}
        cache = nn.spec.Object(object_type=PagedKVCache)
        spec = {
            "embed": {"input_ids": nn.spec.Tensor(["seq_len"], "int32"), "$": packed},
            "prefill": {"input_embed": nn.spec.Tensor([1, "seq_len", hidden], dtype),
                        "paged_kv_cache": cache, "$": packed},
            "decode": {"input_embed": nn.spec.Tensor([1, 1, hidden], dtype),
                       "paged_kv_cache": cache, "$": packed},
            "batch_prefill": {"input_embeds": nn.spec.Tensor([1, "seq_len", hidden], dtype),
                              "logit_positions": nn.spec.Tensor(["batch_size"], "int32"),
                              "paged_kv_cache": cache, "$": packed},
            "batch_decode": {"input_embeds": nn.spec.Tensor(["batch_size", 1, hidden], dtype),
                             "paged_kv_cache": cache, "$": packed},
            "create_paged_kv_cache": {
                "max_batch_size": int, "max_total_seq_len": int, "prefill_chunk_size": int,
                "page_size": int, "support_sliding_window": int,
                "$": {"param_mode": "none", "effect_mode": "none"}},
        }
        return nn.spec.ModuleSpec.from_raw(spec, self)


# The harness's nn door reads MODEL (and, without SPEC, MODEL.get_default_spec()).
MODEL = LlamaForCausalLM(LlamaConfig())

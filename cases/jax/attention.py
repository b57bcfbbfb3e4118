"""One transformer block in jax.numpy: layer norm, multi-head self-attention with a
softmax over scaled dot products, a GELU feed-forward layer and residuals."""
import jax
import jax.numpy as jnp

SEQ, WIDTH, HEADS = 16, 32, 4
keys = jax.random.split(jax.random.PRNGKey(0), 6)
params = {name: jax.random.normal(key, shape) * 0.2 for name, key, shape in [
    ("qkv", keys[0], (WIDTH, 3 * WIDTH)), ("out", keys[1], (WIDTH, WIDTH)),
    ("up", keys[2], (WIDTH, 4 * WIDTH)), ("down", keys[3], (4 * WIDTH, WIDTH))]}


def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)


def split_heads(x):
    return x.reshape(SEQ, HEADS, WIDTH // HEADS).transpose(1, 0, 2)


def jax_function(tokens, params):
    q, k, v = (split_heads(part) for part in
               jnp.split(layer_norm(tokens) @ params["qkv"], 3, axis=-1))
    weights = jax.nn.softmax(q @ k.transpose(0, 2, 1) / jnp.sqrt(WIDTH // HEADS), axis=-1)
    attended = (weights @ v).transpose(1, 0, 2).reshape(SEQ, WIDTH)
    hidden = tokens + attended @ params["out"]
    return hidden + jax.nn.gelu(layer_norm(hidden) @ params["up"]) @ params["down"]


example_args = (jax.random.normal(keys[4], (SEQ, WIDTH)), params)

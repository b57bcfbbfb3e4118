"""Elementwise math and a matrix product in jax.numpy, the operations TVM's StableHLO
frontend converts (sine, cosine, exponential, square roots, maximum and minimum,
division, dot_general) on arrays of one shape."""
import jax
import jax.numpy as jnp

keys = jax.random.split(jax.random.PRNGKey(0), 3)


def jax_function(x, y, w):
    wave = jnp.cos(x) * jnp.exp(jnp.minimum(y, x)) - jnp.sin(y)
    root = jnp.sqrt(jnp.maximum(x, y) * jnp.maximum(x, y) + x * x + y * y)
    return (wave / (root + jnp.exp(x))) @ w


example_args = (jax.random.normal(keys[0], (8, 8)), jax.random.normal(keys[1], (8, 8)),
                jax.random.normal(keys[2], (8, 8)))

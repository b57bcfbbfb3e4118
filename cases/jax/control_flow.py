"""Control flow JAX lowers to StableHLO's own operations: lax.cond (stablehlo.case or
select) and lax.fori_loop (stablehlo.while)."""
import jax
import jax.numpy as jnp
from jax import lax


def jax_function(x):
    y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    return lax.fori_loop(0, 3, lambda i, acc: jnp.tanh(acc) + i, y)


example_args = (jax.random.normal(jax.random.PRNGKey(0), (4, 8)),)

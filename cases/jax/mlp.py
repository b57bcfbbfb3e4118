"""A multilayer perceptron in jax.numpy: dot_general, bias broadcast, tanh and
sigmoid activations, a log-softmax head."""
import jax
import jax.numpy as jnp

keys = jax.random.split(jax.random.PRNGKey(0), 4)
weights = [jax.random.normal(keys[0], (64, 128)) * 0.1, jax.random.normal(keys[1], (128, 32)) * 0.1]
biases = [jnp.full((128,), 0.01), jnp.full((32,), -0.02)]


def jax_function(x, weights, biases):
    hidden = jnp.tanh(x @ weights[0] + biases[0])
    hidden = jax.nn.sigmoid(hidden @ weights[1] + biases[1])
    return jax.nn.log_softmax(hidden, axis=-1)


example_args = (jax.random.normal(keys[2], (4, 64)), weights, biases)

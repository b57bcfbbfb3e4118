"""A small convolutional network in jax.lax: two convolutions (NHWC, one strided, one
grouped), ReLU, max pooling by reduce_window, global mean and a dense layer."""
import jax
import jax.numpy as jnp
from jax import lax

keys = jax.random.split(jax.random.PRNGKey(0), 4)
params = {
    "conv1": jax.random.normal(keys[0], (3, 3, 3, 16)) * 0.3,
    "conv2": jax.random.normal(keys[1], (3, 3, 4, 16)) * 0.3,
    "dense": jax.random.normal(keys[2], (16, 10)) * 0.3,
}
NHWC = ("NHWC", "HWIO", "NHWC")


def jax_function(image, params):
    hidden = lax.conv_general_dilated(image, params["conv1"], (2, 2), "SAME",
                                      dimension_numbers=NHWC)
    hidden = jax.nn.relu(hidden)
    hidden = lax.conv_general_dilated(hidden, params["conv2"], (1, 1), "SAME",
                                      dimension_numbers=NHWC, feature_group_count=4)
    hidden = lax.reduce_window(jax.nn.relu(hidden), -jnp.inf, lax.max, (1, 2, 2, 1),
                               (1, 2, 2, 1), "VALID")
    return jnp.mean(hidden, axis=(1, 2)) @ params["dense"]


example_args = (jax.random.normal(keys[3], (1, 32, 32, 3)), params)

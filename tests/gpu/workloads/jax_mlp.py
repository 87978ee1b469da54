"""A JAX user's training loop: a 3-layer MLP under `jax.jit`, STEPS steps (default 300) of SGD.

XLA compiles the dots into gemm fusions and, at its default autotune level, benchmarks several
compiled variants of each fusion on the GPU before picking one: the trace shows one kernel name
(e.g. `gemm_fusion_dot_4`) in several variants, launched in a burst and never again (#29).
Prints 'jax STEPS steps loss X'.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # take memory as needed

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

STEPS = int(os.environ.get("STEPS", "300"))
BATCH, D_IN, HIDDEN, D_OUT = 512, 1024, 4096, 256


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    scale = lambda fan_in: 1.0 / jnp.sqrt(fan_in)  # noqa: E731
    return {
        "w1": jax.random.normal(k1, (D_IN, HIDDEN), jnp.float32) * scale(D_IN),
        "b1": jnp.zeros((HIDDEN,), jnp.float32),
        "w2": jax.random.normal(k2, (HIDDEN, HIDDEN), jnp.float32) * scale(HIDDEN),
        "b2": jnp.zeros((HIDDEN,), jnp.float32),
        "w3": jax.random.normal(k3, (HIDDEN, D_OUT), jnp.float32) * scale(HIDDEN),
        "b3": jnp.zeros((D_OUT,), jnp.float32),
    }


def loss_fn(params, x, y):
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    h = jax.nn.gelu(h.astype(jnp.bfloat16) @ params["w2"].astype(jnp.bfloat16) + params["b2"])
    out = h.astype(jnp.float32) @ params["w3"] + params["b3"]
    return jnp.mean((out - y) ** 2)


@jax.jit
def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads), loss


key = jax.random.PRNGKey(0)
params = init(key)
x = jax.random.normal(jax.random.PRNGKey(1), (BATCH, D_IN), jnp.float32)
y = jax.random.normal(jax.random.PRNGKey(2), (BATCH, D_OUT), jnp.float32)
for _ in range(STEPS):
    params, loss = step(params, x, y)
loss.block_until_ready()
print(f"jax {STEPS} steps loss {float(loss):.5f} devices {jax.devices()}")

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A JAX jitted training step (MLP + Adam written out, no optax), for recording under cuclimb on
a GPU. Flat by design: the step is compiled once and its buffers are donated. XLA emits NVTX
ranges of its own per executable and per thunk; the program emits none. Prints one summary JSON
line."""
import argparse
import functools
import json
import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax
import jax.numpy as jnp


def init(key, width, depth):
    params = []
    for _ in range(depth):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (width, width)) * 0.02, jnp.zeros(width)))
    return params


def loss_fn(params, x, y):
    h = x
    for w, b in params:
        h = jax.nn.relu(h @ w + b)
    return jnp.mean((h.sum(axis=1, keepdims=True) - y) ** 2)


def adam_update(params, grads, m, v, t, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
    mh = jax.tree_util.tree_map(lambda m_: m_ / (1 - b1 ** t), m)
    vh = jax.tree_util.tree_map(lambda v_: v_ / (1 - b2 ** t), v)
    params = jax.tree_util.tree_map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps), params, mh, vh)
    return params, m, v


@functools.partial(jax.jit, donate_argnums=(0, 1, 2))
def train_step(params, m, v, t, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params, m, v = adam_update(params, grads, m, v, t)
    return params, m, v, loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=600)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args()
    key = jax.random.PRNGKey(0)
    params = init(key, args.width, args.depth)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    x = jax.random.normal(key, (args.batch, args.width))
    y = jnp.ones((args.batch, 1))
    times = []
    for it in range(args.iters):
        t0 = time.perf_counter()
        params, m, v, loss = train_step(params, m, v, jnp.float32(it + 1), x, y)
        loss.block_until_ready()
        times.append(time.perf_counter() - t0)
    tenth = max(1, len(times) // 10)
    first, last = sorted(times[:tenth])[tenth // 2], sorted(times[-tenth:])[tenth // 2]
    print(json.dumps({"program": "jax_step", "iters": args.iters, "first_ms": first * 1e3,
                      "last_ms": last * 1e3, "change_pct": 100 * (last / first - 1),
                      "loss": float(loss), "jax": jax.__version__,
                      "devices": [str(d) for d in jax.devices()]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

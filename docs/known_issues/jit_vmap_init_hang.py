"""Known issue (jax 0.10.2, XLA:CPU, 2-core machine): jit(vmap(init)) over 3 seeds never returns.

    PYTHONPATH=$PWD timeout 120 python docs/known_issues/jit_vmap_init_hang.py 1   # compiles ~3 s, runs 0.5 s
    PYTHONPATH=$PWD timeout 120 python docs/known_issues/jit_vmap_init_hang.py 3   # compiles ~3 s, then hangs

What we know (2026-11-21): compilation finishes; the *execution* of the compiled batched
initialisation does not return. It needs jaxgames' ``MLP`` with 132 actions and hidden 128
(animal shogi's shapes): 37 actions or hidden 64 run fine, a flat (288,) input runs fine, and a
hand-written Flax net with the same three Dense layers (no value head) runs fine; the
orthogonal initialiser alone, at every shape involved, runs fine. So it is not yet minimal.

Workaround in use: ``experiments/common.train_seeds`` runs ``jax.vmap(algo.init)`` un-jitted
(op by op, about a second), then compiles the seed-vmapped training chunk as usual.
"""

import sys
import time

import jax
import jax.numpy as jnp

from jaxgames.agents.networks import MLP

seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
net = MLP(132, hidden=128, layers=2)
keys = jnp.stack([jax.random.PRNGKey(s) for s in range(seeds)])
t = time.time()
compiled = jax.jit(jax.vmap(lambda k: net.init(k, jnp.zeros((1, 4, 3, 24))))).lower(keys).compile()
print(f"seeds={seeds}: compiled in {time.time() - t:.1f}s", flush=True)
t = time.time()
jax.block_until_ready(compiled(keys))
print(f"seeds={seeds}: ran in {time.time() - t:.1f}s", flush=True)

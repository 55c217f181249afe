"""Known issue (jax 0.10.2, XLA:CPU, 2-core machine): jit(vmap(init)) over 3 seeds could
deadlock; the library works around it (below), so this script now finishes.

    PYTHONPATH=$PWD timeout 120 python docs/known_issues/jit_vmap_init_hang.py 3

Root cause: a thread-pool deadlock in XLA:CPU, not a jaxgames bug. The orthogonal
initialisers of the heads, vmapped over the seeds, become *batched* LAPACK QR calls
(``lapack_sgeqrf_ffi``) that XLA runs concurrently on its intra-op pool. Each fans its batch out
with ``jax::ParallelBatchMap`` into the same pool and waits on an ``absl::BlockingCounter``; on 2
cores both workers park in those waits and the fanned-out work never runs (a gdb backtrace of a
hung run shows exactly that). It is a race: pinned to one core (``taskset -c 0``) it never
hangs. The same pattern is described for XLA:CPU's ``FftThunk`` in PyAutoLabs/PyAutoFit #1530.

Workaround in the library: the networks' orthogonal initialisers run the keys one after the
other when vmapped (``jaxgames.agents.networks.one_key_at_a_time``: a ``custom_vmap`` whose
batching rule is ``lax.map``), so there is no batched QR; the values are the unbatched init's,
bit for bit (``tests/test_driver.py``). To see the hang, replace ``orthogonal`` by
``nn.initializers.orthogonal`` in ``jaxgames/agents/networks.py`` and run this file with 3 seeds.
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

"""Known issue (jax 0.10.2, XLA:CPU, 2-core machine): jit(vmap(init)) over 3 seeds may never
return.

    # compiles ~3 s, runs 0.5 s
    PYTHONPATH=$PWD timeout 120 python docs/known_issues/jit_vmap_init_hang.py 1
    # compiles ~3 s, then often hangs
    PYTHONPATH=$PWD timeout 120 python docs/known_issues/jit_vmap_init_hang.py 3
    # one core: never hangs
    PYTHONPATH=$PWD taskset -c 0 python docs/known_issues/jit_vmap_init_hang.py 3

Root cause: a **thread-pool deadlock in XLA:CPU**, not a jaxgames
bug. The two orthogonal initialisers of the heads (policy 128x132, value 128x1), vmapped over the
seeds, become two *batched* LAPACK QR calls (``lapack_sgeqrf_ffi``) that XLA runs concurrently on
its intra-op pool. Each one fans its batch out with ``jax::ParallelBatchMap`` into the same pool
and waits on an ``absl::BlockingCounter``; on a 2-core machine both pool workers are then parked
in those waits and the fanned-out work never runs. A gdb backtrace of a hung run
(``gdb -p PID -batch -ex "thread apply all bt 12"``) shows exactly two threads in
``BlockingCounter::Wait <- jax::ParallelBatchMap <- jax::QrFactorization <- lapack_sgeqrf_ffi``
and every other worker idle in ``Eigen::ThreadPoolTempl::WaitForWork``. Consistent with it:

* it is a race: a 40-line Flax equivalent of the MLP (same shapes and initialisers) hung in 2 of
  5 tries (15 s limit) and finished in 0.0 s otherwise;
* pinned to one core (``taskset -c 0 python ...``) it finished in all 5 tries (and this script
  with 3 seeds too);
* ``--xla_cpu_multi_thread_eigen=false`` does not help (the pool is not Eigen's matmul threading);
* it needs both orthogonal heads *and* two hidden layers before them (fewer layers, or either
  head with another initialiser, finished in the one try each);
  two vmapped QRs on their own (``jnp.linalg.qr``) did not hang in 6 tries, so the race also
  depends on what else is scheduled around them.

The same pattern (a thunk re-entering the intra-op pool it runs on and blocking on a latch) is
described for XLA:CPU's ``FftThunk`` in PyAutoLabs/PyAutoFit issue #1530.

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

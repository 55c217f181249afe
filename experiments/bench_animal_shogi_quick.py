"""Quick throughput check: jaxgames animal shogi vs pgx, random legal play with auto-reset.

    PYTHONPATH=$PWD python experiments/bench_animal_shogi_quick.py --batch 4096 --steps 200

One jitted ``lax.scan`` of ``--steps`` batched steps per measurement (compile excluded); reports
env steps per second (batch * steps / seconds), best of ``--repeats``. ``--obs`` also reads the
observation every step (pgx computes it inside every step anyway).
"""

import argparse
import time

import jax
import jax.numpy as jnp

import jaxgames

SAMPLER = "categorical"


def sample(key, mask):
    """Random legal action per row of ``mask`` (bool[B, A]) -> int32[B].

    ``categorical``: :func:`jaxgames.random_action` (Gumbel noise, two logs per logit: for
    animal shogi its RNG costs several times a whole env step). ``bits``: argmax of one random
    uint32 per legal action (uniform up to ~1e-8 tie bias). ``hash``: one random word per game
    mixed with the action id by an integer hash (close to uniform, cheapest).
    """
    if SAMPLER == "categorical":
        return jaxgames.random_action(key, mask)
    if SAMPLER == "bits":
        x = jax.random.bits(key, mask.shape, jnp.uint32) | 1
        return jnp.argmax(jnp.where(mask, x, 0), axis=-1).astype(jnp.int32)
    u = jax.random.bits(key, mask.shape[:-1], jnp.uint32)
    x = u[..., None] ^ (jnp.arange(mask.shape[-1], dtype=jnp.uint32) * jnp.uint32(0x9E3779B9))
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    x = x ^ (x >> 16)
    return jnp.argmax(jnp.where(mask, x, 0), axis=-1).astype(jnp.int32)


def bench_jaxgames(batch, steps, repeats, obs, max_steps=256):
    env = jaxgames.make("animal_shogi", max_steps=max_steps)

    def body(carry, _):
        states, key, acc = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        actions = sample(k_act, states.legal_action_mask)
        out = jax.vmap(lambda s, a, k: jaxgames.step_autoreset(env, s, a, k))(
            states, actions, jax.random.split(k_reset, batch))
        acc = acc + out.rewards[:, 0].sum()
        if obs:
            acc = acc + out.state.observation.sum()
        return (out.state, key, acc), None

    @jax.jit
    def run(key):
        states = jax.vmap(env.init)(jax.random.split(key, batch))
        (states, _, acc), _ = jax.lax.scan(body, (states, key, 0.0), None, length=steps)
        return acc, states.step_count.sum()

    return _time(run, batch, steps, repeats)


def bench_pgx(batch, steps, repeats):
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make("animal_shogi")
    step = jax.vmap(auto_reset(env.step, env.init))

    def body(carry, _):
        states, key, acc = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        actions = sample(k_act, states.legal_action_mask)
        states = step(states, actions, jax.random.split(k_reset, batch))
        return (states, key, acc + states.rewards[:, 0].sum()), None

    @jax.jit
    def run(key):
        states = jax.vmap(env.init)(jax.random.split(key, batch))
        (states, _, acc), _ = jax.lax.scan(body, (states, key, 0.0), None, length=steps)
        return acc, states._step_count.sum()

    return _time(run, batch, steps, repeats)


def _time(run, batch, steps, repeats):
    key = jax.random.PRNGKey(0)
    t0 = time.perf_counter()
    jax.block_until_ready(run(key))
    compile_s = time.perf_counter() - t0
    best = float("inf")
    for i in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run(jax.random.PRNGKey(i + 1)))
        best = min(best, time.perf_counter() - t0)
    return batch * steps / best, compile_s


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--which", default="both", choices=["both", "jaxgames", "pgx"])
    ap.add_argument("--obs", action="store_true")
    ap.add_argument("--sampler", default="categorical", choices=["categorical", "bits", "hash"])
    args = ap.parse_args()
    SAMPLER = args.sampler
    print(f"devices={jax.devices()} batch={args.batch} steps={args.steps} sampler={args.sampler}")
    if args.which in ("both", "jaxgames"):
        sps, c = bench_jaxgames(args.batch, args.steps, args.repeats, args.obs)
        print(f"jaxgames animal_shogi{' +obs' if args.obs else ''}: {sps:,.0f} steps/s (compile {c:.1f}s)")
    if args.which in ("both", "pgx"):
        sps_pgx, c = bench_pgx(args.batch, args.steps, args.repeats)
        print(f"pgx animal_shogi: {sps_pgx:,.0f} steps/s (compile {c:.1f}s)")
    if args.which == "both":
        print(f"ratio: {sps / sps_pgx:.1f}x")

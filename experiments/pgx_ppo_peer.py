"""The peer: a straightforward purejaxrl-style PPO on pgx's othello, timed beside jaxgames' PPO.

    python experiments/pgx_ppo_peer.py                       # 128 envs, 5 rounds
    python experiments/pgx_ppo_peer.py --num-envs 128 1024 --repeats 7
    python experiments/pgx_ppo_peer.py --train-updates 200   # trains it, then plays random
    python experiments/pgx_ppo_peer.py --quick               # 2 rounds of 2-update chunks

What "purejaxrl-style" means here (Lu et al. 2022, purejaxrl's ``ppo.py``): one file, a pure
``make_update(config) -> update(runner_state)`` that rolls out ``num_steps`` plies of
``num_envs`` games with ``lax.scan`` and learns from them with ``update_epochs`` x
``num_minibatches`` Adam steps, every env reset computed each step and selected where a game
ended (gymnax's AutoReset wrapper), self-play with one shared network (each ply's mover acts
from its own view, pgx's ``observation``), the masked categorical over pgx's
``legal_action_mask`` (65 actions: the 64 squares and pass), and negamax GAE (the next
position's value is the opponent's, so it enters with a minus sign; pgx's othello always
alternates, passing being a move). The hyper-parameters and the network are those of
jaxgames' reversi PPO preset (MLP 256x3, 128 envs x 32 plies, 4 x 4 minibatches, lr 1e-3 with
linear decay, gamma 1, lambda 0.95, clip 0.2, entropy 0.03, value 0.5, gradient norm 0.5).

The benchmark compiles both updates, then times them in rounds (one chunk of
``--updates-per-chunk`` updates of each, in turn, so a load change hits both alike) and reports
median plies/s and the ratio, for jaxgames' PPO in pure self-play (``partners={}``, the
comparable setting) and with the preset's training partners. ``--train-updates N`` also trains
the peer for N updates and plays its greedy policy against uniformly random moves (pgx
states, 256 games per colour), to show it is a working PPO and not only a timing loop.

Writes ``<out>/peer.csv`` (one row per variant and batch size) and ``<out>/config.json``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.training.experiment import prepare_out, write_csv

PEER_CONFIG = dict(
    num_envs=128,
    num_steps=32,
    update_epochs=4,
    num_minibatches=4,
    hidden=256,
    layers=3,
    lr=1e-3,
    total_updates=1000,  # the learning-rate schedule's length
    gamma=1.0,
    gae_lambda=0.95,
    clip_eps=0.2,
    ent_coef=0.03,
    vf_coef=0.5,
    max_grad_norm=0.5,
)


class ActorCritic(nn.Module):
    """Shared MLP torso -> masked-later logits [B, A] and a tanh value [B] (mover's view)."""

    num_actions: int
    hidden: int
    layers: int

    @nn.compact
    def __call__(self, obs):
        x = obs.reshape(obs.shape[0], -1).astype(jnp.float32)
        for _ in range(self.layers):
            x = nn.relu(
                nn.Dense(self.hidden, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x)
            )
        logits = nn.Dense(self.num_actions, kernel_init=nn.initializers.orthogonal(0.01))(x)
        value = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0))(x)
        return logits, jnp.tanh(value[:, 0])


class Transition(NamedTuple):
    obs: jax.Array  # [B, 8, 8, 2]
    mask: jax.Array  # bool [B, 65]
    action: jax.Array  # int32 [B]
    log_prob: jax.Array  # [B]
    value: jax.Array  # [B] mover's view
    reward: jax.Array  # [B] the mover's reward of this ply
    done: jax.Array  # bool [B]


def masked_logits(logits, mask):
    return jnp.where(mask, logits, -1e9)


def make_update(config: dict[str, Any]):
    """-> (init(key) -> runner_state, update(runner_state) -> (runner_state, metrics))."""
    import pgx

    c = dict(PEER_CONFIG, **config)
    env = pgx.make("othello")
    net = ActorCritic(env.num_actions, c["hidden"], c["layers"])
    batch = c["num_envs"] * c["num_steps"]
    minibatch = batch // c["num_minibatches"]
    schedule = optax.linear_schedule(
        c["lr"], 0.0, c["total_updates"] * c["update_epochs"] * c["num_minibatches"]
    )
    tx = optax.chain(optax.clip_by_global_norm(c["max_grad_norm"]), optax.adam(schedule, eps=1e-5))
    v_init, v_step = jax.vmap(env.init), jax.vmap(env.step)

    def init(key):
        k_net, k_env, key = jax.random.split(key, 3)
        params = net.init(k_net, jnp.zeros((1, *env.observation_shape)))
        states = v_init(jax.random.split(k_env, c["num_envs"]))
        return (params, tx.init(params), states, key)

    def env_step(carry, _):
        params, states, key = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        logits, value = net.apply(params, states.observation)
        logits = masked_logits(logits, states.legal_action_mask)
        action = jax.random.categorical(k_act, logits)
        log_prob = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]
        mover = states.current_player
        nxt = v_step(states, action)
        reward = nxt.rewards[jnp.arange(action.shape[0]), mover]
        done = nxt.terminated | nxt.truncated
        fresh = v_init(jax.random.split(k_reset, c["num_envs"]))  # AutoReset: every step

        def pick(a, b):
            return jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)

        nxt = jax.tree_util.tree_map(pick, fresh, nxt)
        t = Transition(
            states.observation, states.legal_action_mask, action, log_prob, value, reward, done
        )
        return (params, nxt, key), t

    def gae(traj: Transition, last_value):
        def back(carry, t):
            adv_next, v_next = carry
            not_done = 1.0 - t.done
            # negamax: the next position belongs to the opponent (its value enters negated)
            delta = t.reward + c["gamma"] * -v_next * not_done - t.value
            adv = delta + c["gamma"] * c["gae_lambda"] * -adv_next * not_done
            return (adv, t.value), adv

        _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
        return adv, adv + traj.value

    def loss_fn(params, mb):
        t, adv, target = mb
        logits, value = net.apply(params, t.obs)
        logp_all = jax.nn.log_softmax(masked_logits(logits, t.mask))
        logp = logp_all[jnp.arange(t.action.shape[0]), t.action]
        ratio = jnp.exp(logp - t.log_prob)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -jnp.minimum(
            ratio * adv, jnp.clip(ratio, 1 - c["clip_eps"], 1 + c["clip_eps"]) * adv
        ).mean()
        v_loss = 0.5 * ((value - target) ** 2).mean()
        probs = jnp.exp(logp_all)
        entropy = -(jnp.where(t.mask, probs * logp_all, 0.0)).sum(-1).mean()
        return pg + c["vf_coef"] * v_loss - c["ent_coef"] * entropy

    def update(runner_state):
        params, opt_state, states, key = runner_state
        (params, states, key), traj = jax.lax.scan(
            env_step, (params, states, key), None, c["num_steps"]
        )
        _, last_value = net.apply(params, states.observation)
        adv, target = gae(traj, last_value)
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape((batch,) + x.shape[2:]), (traj, adv, target)
        )

        def epoch(carry, _):
            params, opt_state, key = carry
            key, k_perm = jax.random.split(key)
            perm = jax.random.permutation(k_perm, batch)
            mbs = jax.tree_util.tree_map(
                lambda x: x[perm].reshape((c["num_minibatches"], minibatch) + x.shape[1:]), flat
            )

            def step(carry, mb):
                params, opt_state = carry
                loss, grads = jax.value_and_grad(loss_fn)(params, mb)
                updates, opt_state = tx.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), loss

            (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), mbs)
            return (params, opt_state, key), losses

        (params, opt_state, key), losses = jax.lax.scan(
            epoch, (params, opt_state, key), None, c["update_epochs"]
        )
        metrics = dict(loss=losses.mean(), episodes=traj.done.sum())
        return (params, opt_state, states, key), metrics

    return init, update, env, net


def make_chunk(update, n: int):
    """jit(runner_state -> runner_state) of ``n`` updates in one ``lax.scan``."""

    def chunk(runner_state):
        runner_state, _ = jax.lax.scan(lambda s, _: update(s), runner_state, None, n)
        return runner_state

    return jax.jit(chunk, donate_argnums=0)


def vs_random(env, net, params, key, games: int = 256) -> dict[str, float]:
    """The peer's greedy policy vs uniformly random legal moves on pgx states: win/draw/loss
    rates per colour (``games`` games each)."""
    v_init, v_step = jax.vmap(env.init), jax.vmap(env.step)

    @jax.jit
    def play(key, learner):
        k0, key = jax.random.split(key)
        s = v_init(jax.random.split(k0, games))

        def body(carry):
            s, key, ret = carry
            key, k = jax.random.split(key)
            logits, _ = net.apply(params, s.observation)
            greedy = jnp.argmax(masked_logits(logits, s.legal_action_mask), -1)
            rnd = jax.random.categorical(k, jnp.where(s.legal_action_mask, 0.0, -1e9))
            s = v_step(s, jnp.where(s.current_player == learner, greedy, rnd))
            # pgx pays a game's rewards on its last step only (0 after): sum them
            return s, key, ret + s.rewards[:, learner]

        s, _, ret = jax.lax.while_loop(
            lambda c: ~c[0].terminated.all(), body, (s, key, jnp.zeros(games))
        )
        return ret

    out = {}
    for learner, side in ((0, "first"), (1, "second")):
        r = np.asarray(play(jax.random.fold_in(key, learner), learner))
        out[f"win_{side}"], out[f"draw_{side}"] = float((r > 0).mean()), float((r == 0).mean())
        out[f"loss_{side}"] = float((r < 0).mean())
    return out


def jaxgames_chunk(num_envs: int, updates: int, partners):
    """(compiled chunk, state, plies per chunk) of jaxgames' reversi 8x8 PPO preset with
    ``num_envs`` games and ``partners`` (None: the preset's)."""
    from jaxgames.agents import ppo

    over = dict(num_envs=num_envs, updates_per_chunk=updates)
    if partners is not None:
        over["partners"] = partners
    cfg = ppo.default_config("reversi", {"size": 8}, **over)
    algo = ppo.make_algorithm(cfg)
    state = algo.init(jax.random.PRNGKey(0))
    chunk = jax.jit(algo.chunk, donate_argnums=0).lower(state).compile()
    return (lambda s: chunk(s)[0]), state, algo.steps_per_chunk


def bench(num_envs: int, updates: int, repeats: int, echo=print) -> list[dict[str, Any]]:
    """Median/best plies/s of the peer and of jaxgames' PPO (self-play and preset) at
    ``num_envs`` games, timed in rounds."""
    init, update, _, _ = make_update(dict(num_envs=num_envs))
    peer = make_chunk(update, updates)
    peer_state = init(jax.random.PRNGKey(0))
    t = time.perf_counter()
    peer_state = jax.block_until_ready(peer(peer_state))  # compile + first run
    peer_plies = num_envs * PEER_CONFIG["num_steps"] * updates
    variants: dict[str, list] = {"pgx peer (purejaxrl-style)": [peer, peer_state, peer_plies, []]}
    echo(f"  peer compiled and ran once in {time.perf_counter() - t:.1f}s")
    for name, partners in (("jaxgames ppo self-play", {}), ("jaxgames ppo preset", None)):
        t = time.perf_counter()
        fn, state, plies = jaxgames_chunk(num_envs, updates, partners)
        state = jax.block_until_ready(fn(state))
        variants[name] = [fn, state, plies, []]
        echo(f"  {name} compiled and ran once in {time.perf_counter() - t:.1f}s")
    for r in range(repeats):
        for v in variants.values():
            t = time.perf_counter()
            v[1] = jax.block_until_ready(v[0](v[1]))
            v[3].append(time.perf_counter() - t)
    base = statistics.median(variants["pgx peer (purejaxrl-style)"][3])
    rows = []
    for name, (_, _, plies, times) in variants.items():
        med = statistics.median(times)
        rows.append(
            dict(
                variant=name,
                num_envs=num_envs,
                plies_per_chunk=plies,
                rounds=repeats,
                median_plies_per_s=round(plies / med),
                best_plies_per_s=round(plies / min(times)),
                time_vs_peer=round(med / base * peer_plies / plies, 3),
            )
        )
    return rows


def main(argv=None) -> list[dict[str, Any]]:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--num-envs", type=int, nargs="+", default=[128])
    p.add_argument("--updates-per-chunk", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5, help="timed rounds")
    p.add_argument(
        "--train-updates", type=int, default=0, help="also train the peer (128 envs) and rate it"
    )
    p.add_argument("--out", default="runs/pgx_ppo_peer")
    p.add_argument("--quick", action="store_true", help="2 rounds of 2-update chunks")
    a = p.parse_args(argv)
    if a.quick:
        a.repeats, a.updates_per_chunk = min(a.repeats, 2), min(a.updates_per_chunk, 2)
    for name in ("updates_per_chunk", "repeats"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if min(a.num_envs) < 4 or any(n % 4 for n in a.num_envs):
        p.error(f"--num-envs must be positive multiples of 4 (minibatches), got {a.num_envs}")
    try:
        import pgx  # noqa: F401
    except ImportError:
        p.error("pgx is not installed: pip install 'jaxgames[test]' (or pip install pgx)")
    prepare_out(a.out, dict(script="pgx_ppo_peer.py", **vars(a), peer=PEER_CONFIG))
    rows = []
    for n in a.num_envs:
        print(f"== {n} envs, {a.updates_per_chunk} updates per chunk, {a.repeats} rounds")
        rows += bench(n, a.updates_per_chunk, a.repeats)
    print("| variant | envs | median plies/s | best plies/s | time per ply vs peer |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['variant']} | {r['num_envs']} | {r['median_plies_per_s']:,} | "
            f"{r['best_plies_per_s']:,} | {r['time_vs_peer']:.2f}x |"
        )
    if a.train_updates:
        init, update, env, net = make_update(dict(total_updates=a.train_updates))
        chunk = make_chunk(update, a.train_updates)
        t = time.perf_counter()
        params = jax.block_until_ready(chunk(init(jax.random.PRNGKey(0))))[0]
        res = vs_random(env, net, params, jax.random.PRNGKey(1))
        plies = a.train_updates * PEER_CONFIG["num_envs"] * PEER_CONFIG["num_steps"]
        print(
            f"peer trained {plies:,} plies in {time.perf_counter() - t:.0f}s (with compile): "
            f"vs random W/D/L first {res['win_first']:.1%}/{res['draw_first']:.1%}/"
            f"{res['loss_first']:.1%}, second {res['win_second']:.1%}/"
            f"{res['draw_second']:.1%}/{res['loss_second']:.1%}"
        )
        rows.append(dict(variant="peer trained", plies=plies, **res))
    write_csv(os.path.join(a.out, "peer.csv"), rows)
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))

"""Where the time of a self-play update goes: Gumbel AlphaZero and PPO, piece by piece.

    python experiments/profile_selfplay.py --games reversi8 animal_shogi \\
        --num-envs 128 512 2048 --num-simulations 8 32 --out runs/profile
    python experiments/profile_selfplay.py --num-envs 128 512 --num-simulations 8   # small
    python experiments/profile_selfplay.py --quick --games reversi6 --algos alphazero
    python experiments/profile_selfplay.py --games reversi8 --algos alphazero \\
        --num-envs 4096 16384 65536 --num-simulations 32 --num-steps 2 --repeats 2   # GPU

Each piece is its own jitted function on the shapes of one update, compiled ahead of the clock
(``lower().compile()``), run once to warm up, then timed ``--repeats`` times after
``block_until_ready``; the median is kept. Every piece of every configuration is traced first,
then all are compiled side by side (``--compile-workers``; XLA compiles without holding
Python's lock), then timed one after another. Per AlphaZero update of B games and T plies with
S simulations (the algorithm's own functions, not copies of them):

    update         the whole jitted update (rollout of T searched plies, targets, replay, learning)
    search         search_batch over the B states of a ply (the real guide: the network)
    search_free    the same search with a zero-cost guide (constant logits and value):
                   mctx bookkeeping + the env steps inside the search
    search_bare    zero-cost guide and a no-op env step (the child is the parent): mctx alone
    network        the guide's forward pass, observation features included, on B * (S + 1)
                   states (a search calls it once at the root and once per simulation)
    network_calls  the same states as the search calls the guide: S + 1 calls of B states,
                   one after another in a loop on the device; network_calls / network is what
                   calling in small pieces costs, (search - search_free) / network_calls what
                   calling from inside mctx's tree costs besides
    features       the observation features alone (the game's ``input_features``) on the
                   B * (S + 1) observations; network - features is the network's own layers
    env_step       env.step on B * S states (one per simulation)
    replay         extend the replay ring by the rollout and draw update_epochs minibatch sets
                   (with the symmetry augmentation)
    learner        update_epochs x num_minibatches Adam steps on fixed minibatches

Shares of the update: network = T (search - search_free), env in search = T (search_free -
search_bare), bookkeeping = T search_bare, replay, learner; other = what is left (the rollout's
own env steps and resets, observations, targets, metrics). ``network`` and ``env_step`` alone
are the cross-checks of the first two differences. PPO: ``rollout`` (T sampled plies),
``network`` on B observations and ``env_step`` (the training games' step: auto-reset and any
partner's replies) per ply, ``learner``; shares network = T network, env = T env_step.

FLOPs come from XLA's cost analysis of loop-free pieces as lowered, before optimisation (the same
count on every backend: compiled for a GPU, matmuls are cuBLAS calls the analysis leaves out;
XLA counts a loop body once, so the
whole update's own count, ``xla_flops["update"]`` in the JSON, misses every iteration after
the first): update FLOPs = T x the network piece's + the learner's one-minibatch step x its steps.
Achieved FLOP/s = those / the update's time, as a fraction of ``--peak-tflops`` (default: the
best of a few float32 matmuls measured here on CPU; 67 on a GPU, an H200's float32 peak; its bf16
tensor-core peak, 990, is in the JSON beside it).

Settings per game (:data:`GAME_SETTINGS`): the preset of ``experiments/gpu_session.sh``'s
GPU stage (reversi8: MLP 512x3 on mobility features, 32 simulations), scaled to each number of
games by the rule gpu_session.sh trains with (``TrainConfig.scaled_to``: the replay ring keeps
its plies per game, at most ``--max-replay`` positions; minibatches grow to 2048 positions;
docs/presets.md#more-games-at-once). PPO runs its game preset (partners included), scaled the
same way. ``--field=value`` sets a config field of whichever algorithm has it.

Writes ``<out>/profile.json`` (every timing, FLOP count and setting) and ``<out>/profile.md``
(the tables printed).

``--against-commit REV`` (before/after): the same profile of the package as of git commit REV
too, this script run in a subprocess on a temporary worktree of REV (written to
``<out>/commit_<REV>/``), after this one's: a last table puts both updates' plies/s side by side.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp

from jaxgames.agents import alphazero, ppo
from jaxgames.agents.common import batch_observation
from jaxgames.agents.config import minibatch_count, parse_overrides
from jaxgames.agents.presets import default_config
from jaxgames.agents.replay import make_trajectory_buffer
from jaxgames.agents.rollout_learning import make_setup, optimise
from jaxgames.agents.search import guide_outputs, search_batch
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.specs import make_partners
from jaxgames.training import experiment as ex

#: game variant -> AlphaZero settings over its preset (gpu_session.sh's GPU stage of the game)
GAME_SETTINGS: dict[str, dict[str, Any]] = {
    "reversi8": dict(net={"hidden": 512, "layers": 3}, features="mobility", num_simulations=32),
    "reversi6": dict(net={"hidden": 1024, "layers": 3}, features="mobility", num_simulations=16),
    "animal_shogi": dict(
        net={"hidden": 512, "layers": 6}, features="observation", num_simulations=16
    ),
}
#: peak TFLOP/s of a GPU (an H200): float32 (no tensor cores) and bf16 dense tensor cores
GPU_PEAK_TFLOPS = {"float32": 67.0, "bfloat16": 990.0}
ALGOS = ("alphazero", "ppo")
CONFIGS = {"alphazero": alphazero.AlphaZeroConfig, "ppo": ppo.PPOConfig}
#: ``--quick``: a few seconds of measuring per configuration (compiling takes longer)
QUICK: dict[str, Any] = dict(num_envs=[64], num_simulations=[4], num_steps=2, repeats=1)


# ----------------------------------------------------------------------------- timing
@dataclasses.dataclass
class Piece:
    """One jitted piece of an update: ``fn(*args(state))``, ``state`` the train state after a
    timed update (a fresh one for the update itself). ``donate``: the first argument is donated
    and the output's ``feed`` (index; ``None``: all of it) is the next call's first argument, as
    training carries its state and replay ring. ``timed`` False: compiled for its FLOPs only."""

    name: str
    fn: Callable
    args: Callable[[Any], tuple]
    donate: bool = False
    feed: int | None = None
    timed: bool = True
    lowered: Any = None
    compiled: Any = None
    make_args: Any = None
    compile_s: float = 0.0
    flops: float = 0.0
    seconds: float = float("nan")


def xla_flops(lowered: Any) -> float:
    """The ``flops`` of XLA's cost analysis of a lowered function (0 if not reported): the
    program before XLA's optimisations, the same count on every backend (compiled for a GPU,
    the matmuls become cuBLAS calls that the analysis leaves out)."""
    cost = lowered.cost_analysis()
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else {}
    return float((cost or {}).get("flops", 0.0))


def lower(piece: Piece, abstract_state: Any) -> None:
    """Trace and lower ``piece`` for the shapes of ``abstract_state`` (no compile yet)."""
    make_args = jax.jit(piece.args).lower(abstract_state)
    jitted = jax.jit(piece.fn, donate_argnums=0 if piece.donate else ())
    piece.lowered = (jitted.lower(*make_args.out_info), make_args)


def compile_piece(piece: Piece) -> None:
    """Compile a lowered piece (thread-safe: XLA compiles without the GIL)."""
    t0 = time.perf_counter()
    fn, args = piece.lowered
    piece.compiled = fn.compile()
    piece.compile_s = time.perf_counter() - t0
    piece.make_args = args.compile()
    piece.flops = xla_flops(fn)
    piece.lowered = None


def compile_all(pieces: list[Piece], workers: int) -> None:
    """Compile every piece, ``workers`` at a time."""
    with concurrent.futures.ThreadPoolExecutor(max(workers, 1)) as pool:
        for future in [pool.submit(compile_piece, p) for p in pieces]:
            future.result()


def time_piece(piece: Piece, state: Any, repeats: int) -> Any:
    """Run a compiled piece once to warm up, then time ``repeats`` calls (median into
    ``piece.seconds``) -> the last call's output."""
    args = piece.make_args(state)

    def call(args):
        out = jax.block_until_ready(piece.compiled(*args))
        if piece.donate:
            args = ((out if piece.feed is None else out[piece.feed]), *args[1:])
        return out, args

    out, args = call(args)  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out, args = call(args)
        times.append(time.perf_counter() - t0)
    piece.seconds = statistics.median(times)
    return out


def cpu_peak_flops(n: int = 2048, repeats: int = 5) -> float:
    """FLOP/s of an n x n float32 matmul on the default device: the best of ``repeats`` rounds
    of ``repeats`` calls (a peak: other processes only ever slow it down)."""
    a = jnp.ones((n, n), jnp.float32)
    piece = Piece("matmul", lambda x, y: x @ y, lambda _: (a, a))
    lower(piece, None)
    compile_piece(piece)
    best = float("inf")
    for _ in range(repeats):
        time_piece(piece, None, repeats)
        best = min(best, piece.seconds)
    return 2.0 * n**3 / best


# ----------------------------------------------------------------------------- configs
def make_config(
    algo: str,
    game: str,
    num_envs: int,
    num_simulations: int | None,
    num_steps: int | None,
    max_replay: int,
    overrides: dict[str, str],
) -> Any:
    """The config profiled: the game's settings over its preset, scaled to ``num_envs`` games
    by the library's rule (``TrainConfig.scaled_to``: replay, minibatches, learning rate), then
    the simulations and plies per update (the minibatch's size kept), then ``overrides``
    (those of its fields: the others are the other algorithm's)."""
    name, options = ex.parse_variant(game)
    settings = GAME_SETTINGS.get(game, {}) if algo == "alphazero" else {}
    config = default_config(algo, name, options).override(settings).scaled_to(num_envs)
    changes: dict[str, Any] = {"updates_per_chunk": 1}
    if num_steps is not None:
        minibatch = config.batch_size // config.num_minibatches
        changes["num_steps"] = num_steps
        rows = num_envs * num_steps
        changes["num_minibatches"] = minibatch_count(rows, -(-rows // minibatch))
    if algo == "alphazero":
        if num_simulations is not None:
            changes["num_simulations"] = num_simulations
        if config.replay_size:
            changes["replay_size"] = min(config.replay_size, max_replay)
    types = config.field_types()
    mine = {k: v for k, v in overrides.items() if k.replace("-", "_").partition(".")[0] in types}
    config = config.override(changes).override(mine)
    config.validate()
    return config


# ----------------------------------------------------------------------------- pieces
class ZeroGuide:
    """A guide that costs nothing: constant prior logits and value for every state."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions

    def search_outputs(self, state: Any) -> tuple[jax.Array, jax.Array]:
        return jnp.zeros((self.num_actions,), jnp.float32), jnp.zeros((), jnp.float32)


@dataclasses.dataclass(frozen=True, eq=False)
class NoStepEnv:
    """``env`` whose step returns the state unchanged (no game logic in the search)."""

    env: Any

    def __getattr__(self, name: str) -> Any:
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def step(self, state: Any, action: jax.Array) -> Any:
        del action
        return state


def tile(tree: Any, times: int) -> Any:
    """Leaves [B, ...] -> [times * B, ...]."""
    return jax.tree_util.tree_map(lambda x: jnp.concatenate([x] * times, axis=0), tree)


def stack(tree: Any, times: int) -> Any:
    """Leaves [B, ...] -> [times, B, ...]."""
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (times, *x.shape)), tree)


def legal_actions(key: jax.Array, mask: jax.Array) -> jax.Array:
    """int32[N]: a uniformly random legal action of each row of mask bool[N, A] (0 if none)."""
    noise = jax.random.uniform(key, mask.shape)
    return jnp.argmax(jnp.where(mask, noise, -1.0), axis=-1).astype(jnp.int32)


def over_plies(x: jax.Array, t: int) -> jax.Array:
    """x [B, ...] -> [t, B, ...] (the same positions at every ply: stand-in rollout data)."""
    return jnp.broadcast_to(x, (t, *x.shape))


def to_minibatches(data: Any, num_minibatches: int) -> Any:
    """Leaves [T, B, ...] -> [num_minibatches, T * B / num_minibatches, ...]."""
    return jax.tree_util.tree_map(lambda x: x.reshape(num_minibatches, -1, *x.shape[2:]), data)


@dataclasses.dataclass
class Plan:
    """The pieces of one profiled config, in the order they run (the update first)."""

    game: str
    algo: str
    config: Any
    init: Callable[[jax.Array], Any]
    pieces: list[Piece]
    shared_from: int | None = None  # the plan whose replay and learner pieces this one reuses


def learner_pieces(setup: Any, config: Any, loss: Callable, minibatches: Callable) -> list[Piece]:
    """``learner``: update_epochs passes over fixed minibatches (``minibatches(state)``, leaves
    [num_minibatches, minibatch, ...]), one Adam step each; ``learner_step`` (FLOPs only): one."""

    def learn(epochs):
        def run(params, opt_state, key, mbs):
            draw = lambda k: mbs  # noqa: E731
            return optimise(loss, setup.optimizer, params, opt_state, key, draw, epochs)[:2]

        return run

    def args(state):
        return state.params, state.opt_state, state.key, minibatches(state)

    def one(state):
        mbs = jax.tree_util.tree_map(lambda x: x[:1], minibatches(state))
        return state.params, state.opt_state, state.key, mbs

    return [
        Piece("learner", learn(config.update_epochs), args),
        Piece("learner_step", learn(1), one, timed=False),
    ]


def plan_alphazero(game: str, config: Any, pieces: set[str], share: bool) -> Plan:
    """The pieces of one AlphaZero update of ``config`` (module docstring); ``share`` False:
    no replay and learner pieces (an earlier plan of the same shapes has them)."""
    algo = alphazero.make_algorithm(config, make_partners(config.partners, config.make_env()))
    setup = make_setup(config, alphazero.AlphaZeroConfig)
    env, agent = algo.env, algo.agent
    t, s = config.num_steps, config.num_simulations
    key = jax.random.PRNGKey(1)
    plan = Plan(game, "alphazero", config, algo.init, [])
    plan.pieces.append(Piece("update", algo.chunk, lambda st: (st,), donate=True, feed=0))

    def search_fn(guide_of, search_env):
        def run(params, states, key):
            out = search_batch(search_env, guide_of(params), key, states, config.search)
            return out.action, out.action_weights, out.search_tree.summary().value

        return run

    zero = ZeroGuide(env.num_actions)
    roots = lambda st: (st.params, st.env_state, key)  # noqa: E731
    searches = {
        "search": (agent.policy, env),
        "search_free": (lambda p: zero, env),
        "search_bare": (lambda p: zero, NoStepEnv(env)),
    }
    for name, (guide_of, search_env) in searches.items():
        if name in pieces:
            plan.pieces.append(Piece(name, search_fn(guide_of, search_env), roots))
    if "network" in pieces:
        plan.pieces.append(
            Piece(
                "network",
                lambda p, x: guide_outputs(agent.policy(p), x),
                lambda st: (st.params, tile(st.env_state, s + 1)),
            )
        )
    if "network_calls" in pieces:

        def calls(p, states):  # leaves [S + 1, B, ...]: S + 1 calls of B states, in order
            return jax.lax.map(lambda x: guide_outputs(agent.policy(p), x), states)

        plan.pieces.append(
            Piece("network_calls", calls, lambda st: (st.params, stack(st.env_state, s + 1)))
        )
    if "features" in pieces:
        plan.pieces.append(
            Piece(
                "features",
                agent.network_input,
                lambda st: (batch_observation(tile(st.env_state, s + 1)),),
            )
        )
    if "env_step" in pieces:

        def children(st):
            states = tile(st.env_state, s)
            return states, legal_actions(key, states.legal_action_mask)

        plan.pieces.append(Piece("env_step", jax.vmap(env.step), children))
    if not share:
        return plan

    # the learner reads minibatches drawn from the replay ring (or the fresh rollout)
    b, mb = config.num_envs, config.batch_size // config.num_minibatches
    symmetries = env.symmetries if config.augment and env.symmetries.count > 1 else None
    buffer = make_trajectory_buffer(config.replay_rows, b) if config.replay_rows else None

    def rollout(st):
        mask = st.env_state.legal_action_mask
        policy = mask / jnp.maximum(mask.sum(-1, keepdims=True), 1)
        obs = batch_observation(st.env_state)
        zeros = jnp.zeros((b,), jnp.float32)
        return alphazero.SearchTarget(*(over_plies(x, t) for x in (obs, mask, policy, zeros)))

    def draw(buf, key):
        return alphazero.sample_targets(buffer, buf, key, config.num_minibatches, mb, symmetries)

    def minibatches(st):
        if buffer is not None:
            return draw(st.buffer, st.key)
        return to_minibatches(rollout(st), config.num_minibatches)

    def loss(params, minibatch):
        return alphazero.alphazero_loss(agent, params, minibatch, config)

    if "learner" in pieces:
        plan.pieces += learner_pieces(setup, config, loss, minibatches)
    if "replay" in pieces and buffer is not None:  # last: it donates the ring

        def replay(buf, data, key):
            buf = buffer.extend(buf, data)
            keys = jax.random.split(key, config.update_epochs)
            return buf, [draw(buf, k) for k in keys]

        plan.pieces.append(
            Piece("replay", replay, lambda st: (st.buffer, rollout(st), st.key), True, 0)
        )
    return plan


def plan_ppo(game: str, config: Any, pieces: set[str]) -> Plan:
    """The pieces of one PPO update of ``config`` (module docstring)."""
    partners = make_partners(config.partners, config.make_env())
    algo = ppo.make_algorithm(config, partners)
    setup = make_setup(config, ppo.PPOConfig, partners)
    agent, games = setup.agent, setup.games
    b, t = config.num_envs, config.num_steps
    key = jax.random.PRNGKey(1)
    plan = Plan(game, "ppo", config, algo.init, [])
    plan.pieces.append(Piece("update", algo.chunk, lambda st: (st,), donate=True, feed=0))
    if "rollout" in pieces:

        def rollout(params, env_state, key):
            return ppo.play_rollout(games, agent, params, env_state, key, t)[2]

        plan.pieces.append(Piece("rollout", rollout, lambda st: (st.params, st.env_state, key)))
    if "network" in pieces:
        plan.pieces.append(
            Piece(
                "network",
                lambda p, s: agent.apply(p, batch_observation(s)),
                lambda st: (st.params, st.env_state),
            )
        )
    if "env_step" in pieces:

        def step_args(st):
            return st.env_state, legal_actions(key, st.env_state.legal_action_mask), key

        plan.pieces.append(Piece("env_step", games.step, step_args))
    if "learner" in pieces:

        def minibatches(st):
            s = st.env_state
            zeros = jnp.zeros((b,), jnp.float32)
            traj = ppo.Transition(
                batch_observation(s),
                s.legal_action_mask,
                legal_actions(key, s.legal_action_mask),
                zeros,
                zeros,
                zeros,
                jnp.zeros((b,), jnp.bool_),
                zeros,
                jnp.ones((b,), jnp.int32),
            )
            data = jax.tree_util.tree_map(lambda x: over_plies(x, t), (traj, zeros, zeros))
            return to_minibatches(data, config.num_minibatches)

        def loss(params, minibatch):
            return ppo.ppo_loss(agent, params, *minibatch, config)

        plan.pieces += learner_pieces(setup, config, loss, minibatches)
    return plan


def run_plan(plan: Plan, repeats: int) -> None:
    """Time every piece of ``plan`` (compiled): the update from a fresh state, the rest on the
    state it leaves."""
    init = next(p for p in plan.pieces if p.name == "init")
    state = init.compiled(*init.make_args(None))
    for piece in plan.pieces:
        if not piece.timed:
            continue
        out = time_piece(piece, state, repeats)
        if piece.name == "update":
            state = out[0]


def finish_row(plan: Plan, shared: Plan | None) -> dict[str, Any]:
    """The row of one profiled config: seconds per piece, shares of the update, FLOPs."""
    config, t = plan.config, plan.config.num_steps
    pieces = {p.name: p for p in plan.pieces}
    if shared is not None:
        pieces.update(
            {p.name: p for p in shared.pieces if p.name in ("replay", "learner", "learner_step")}
        )
    sec = {k: p.seconds for k, p in pieces.items() if p.timed}
    update = sec["update"]
    parts: dict[str, float | None] = {}
    if "search" in sec and "search_free" in sec:
        parts["network"] = t * (sec["search"] - sec["search_free"])
    elif "network" in sec:
        parts["network"] = t * sec["network"]
    if "search_free" in sec and "search_bare" in sec:
        parts["env"] = t * (sec["search_free"] - sec["search_bare"])
    elif "env_step" in sec:
        parts["env"] = t * sec["env_step"]
    if "search_bare" in sec:
        parts["bookkeeping"] = t * sec["search_bare"]
    for name in ("replay", "learner"):
        if name in sec:
            parts[name] = sec[name]
    share = {k: v / update for k, v in parts.items()}
    share["other"] = 1.0 - sum(share.values())
    flops = None
    if "network" in pieces and "learner_step" in pieces:
        steps = config.update_epochs * config.num_minibatches
        flops = t * pieces["network"].flops + steps * pieces["learner_step"].flops
    net = pieces.get("network")
    return dict(
        game=plan.game,
        algo=plan.algo,
        num_envs=config.num_envs,
        num_simulations=getattr(config, "num_simulations", None)
        if plan.algo == "alphazero"
        else None,
        num_steps=t,
        num_minibatches=config.num_minibatches,
        update_epochs=config.update_epochs,
        replay_size=getattr(config, "replay_size", 0),
        network=config.network,
        net=dict(config.net),
        features=config.features,
        partners=dict(config.partners),
        plies_per_update=config.num_envs * t,
        update_s=update,
        plies_per_s=config.num_envs * t / update,
        seconds=sec,
        compile_s={k: p.compile_s for k, p in pieces.items()},
        xla_flops={k: p.flops for k, p in pieces.items()},
        share=share,
        update_flops=flops,
        flops_per_s=None if flops is None else flops / update,
        network_flops_per_s=None if net is None else net.flops / net.seconds,
    )


# ----------------------------------------------------------------------------- tables
SHARES = ("network", "env", "bookkeeping", "replay", "learner", "other")
PIECES = ("search", "search_free", "search_bare", "rollout", "network", "network_calls",
          "features", "env_step", "replay", "learner")  # fmt: skip


def flops_cells(row: dict, peak: float) -> list[str]:
    """GFLOP/s of the update, its % of ``peak``, GFLOP/s of the network piece alone."""
    f, n = row["flops_per_s"], row["network_flops_per_s"]
    if f is None:
        return ["-", "-", "-" if n is None else f"{n / 1e9:,.1f}"]
    net = "-" if n is None else f"{n / 1e9:,.1f}"
    return [f"{f / 1e9:,.1f}", f"{100 * f / peak:.2f}", net]


def tables(rows: list[dict], peak: float) -> str:
    """The shares table and the pieces-in-isolation table, markdown."""
    head = (
        "| game | algo | games | sims | update s | plies/s | "
        + " | ".join(f"{s} %" for s in SHARES)
        + " | GFLOP/s | % peak | net alone GFLOP/s |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        sims = r["num_simulations"] if r["num_simulations"] is not None else "-"
        cells = [f"{100 * r['share'][s]:.1f}" if s in r["share"] else "-" for s in SHARES]
        lines.append(
            f"| {r['game']} | {r['algo']} | {r['num_envs']} | {sims} | {r['update_s']:.3g} | "
            f"{r['plies_per_s']:,.0f} | "
            + " | ".join(cells)
            + " | "
            + " | ".join(flops_cells(r, peak))
            + " |"
        )
    lines += [
        "",
        "Pieces in isolation, ms per call; compile: seconds of all the config's compiles (run "
        "side by side):",
        "",
    ]
    head = "| game | algo | games | sims | " + " | ".join(PIECES) + " | compile s |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        sims = r["num_simulations"] if r["num_simulations"] is not None else "-"
        cells = [f"{1e3 * r['seconds'][p]:,.2f}" if p in r["seconds"] else "-" for p in PIECES]
        lines.append(
            f"| {r['game']} | {r['algo']} | {r['num_envs']} | {sims} | "
            + " | ".join(cells)
            + f" | {sum(r['compile_s'].values()):.1f} |"
        )
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main
def profile_commit(rev: str, argv: list[str], out: str) -> list[dict]:
    """This script's rows for the package as of git commit ``rev`` (``argv`` without
    ``--against-commit`` and ``--out``): a temporary worktree of ``rev``, this script run in
    a subprocess with that tree's package first on the path, its output in
    ``<out>/commit_<rev>/``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = subprocess.run(
        ["git", "-C", root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode:
        raise ValueError(f"--against-commit: {rev!r} is not a commit of the repository at {root}")
    sub_out = os.path.abspath(
        os.path.join(out, "commit_" + "".join(c if c.isalnum() else "_" for c in rev))
    )
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        subprocess.run(
            ["git", "-C", root, "worktree", "add", "--detach", "-q", tree, rev], check=True
        )
        try:
            env = dict(
                os.environ, PYTHONPATH=os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")])
            )
            cmd = [sys.executable, os.path.abspath(__file__), *argv, "--out", sub_out]
            subprocess.run(cmd, check=True, env=env, cwd=tmp)
        finally:
            subprocess.run(["git", "-C", root, "worktree", "remove", "--force", tree], check=False)
    with open(os.path.join(sub_out, "profile.json")) as f:
        return json.load(f)["rows"]


def compare_table(rows: list[dict], other: list[dict], rev: str) -> str:
    """The updates' plies/s here and at ``rev``, configuration by configuration."""
    ident = lambda r: (r["game"], r["algo"], r["num_envs"], r["num_simulations"])  # noqa: E731
    theirs = {ident(r): r for r in other}
    lines = [
        f"| game | algo | games | sims | plies/s at {rev} | plies/s here | here / {rev} |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        o = theirs.get(ident(r))
        before = f"{o['plies_per_s']:,.0f}" if o else "-"
        ratio = f"{r['plies_per_s'] / o['plies_per_s']:.2f}" if o else "-"
        sims = "-" if r["num_simulations"] is None else r["num_simulations"]
        lines.append(
            f"| {r['game']} | {r['algo']} | {r['num_envs']} | {sims} | {before} | "
            f"{r['plies_per_s']:,.0f} | {ratio} |"
        )
    return "\n".join(lines)


def _without(argv: list[str], *options: str) -> list[str]:
    """``argv`` without ``options`` and their values (``--o V`` or ``--o=V``)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in options:
            skip = True
        elif not any(arg.startswith(o + "=") for o in options):
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    """Profile every game x algorithm x num_envs (x simulations); returns the rows."""
    ap = ArgumentParser(
        allow_abbrev=False,
        description=__doc__.split("\n\n")[0],
        epilog="--field=value overrides any config field (e.g. --net.hidden=256)",
    )
    ap.add_argument("--games", nargs="+", default=["reversi8"], help="variant keys, e.g. reversi6")
    ap.add_argument("--algos", nargs="+", default=list(ALGOS), choices=ALGOS)
    ap.add_argument("--num-envs", nargs="+", type=int, default=[128, 512])
    ap.add_argument(
        "--num-simulations", nargs="+", type=int, default=None, help="default: the game's"
    )
    ap.add_argument(
        "--num-steps", type=int, default=None, help="plies per update (default: preset)"
    )
    ap.add_argument("--repeats", type=int, default=3, help="measured calls per piece (median)")
    ap.add_argument(
        "--max-replay", type=int, default=1 << 22, help="replay positions at most (memory)"
    )
    ap.add_argument(
        "--peak-tflops",
        type=float,
        default=None,
        help="the device's peak (default: the best of a float32 matmul measured on CPU, 67 on GPU)",
    )
    ap.add_argument(
        "--pieces",
        nargs="+",
        default=list(PIECES),
        choices=PIECES,
        help="pieces timed besides the whole update (default all)",
    )
    ap.add_argument(
        "--compile-workers",
        type=int,
        default=os.cpu_count() or 1,
        help="compiles run side by side (default: one per CPU)",
    )
    ap.add_argument("--out", default="runs/profile")
    ap.add_argument(
        "--against-commit",
        metavar="REV",
        help="also profile the package as of this git commit and compare (before/after)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK['num_envs'][0]} games, {QUICK['num_simulations'][0]} simulations, "
        f"{QUICK['num_steps']} plies per update, {QUICK['repeats']} repeat",
    )
    args, extra = ap.parse_known_args(argv)
    if args.quick:  # the quick values, where the command line gives none
        ap.set_defaults(**QUICK)
        args, extra = ap.parse_known_args(argv)
    overrides = parse_overrides(extra)
    for name in ("num_envs", "repeats", "max_replay", "compile_workers"):
        values = getattr(args, name)
        for v in values if isinstance(values, list) else [values]:
            if v < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {v}")
    for label in args.games:
        ex.parse_variant(label)  # ValueError naming the valid games
    known = set().union(*(CONFIGS[a].field_types() for a in args.algos))
    unknown = sorted(k for k in overrides if k.replace("-", "_").partition(".")[0] not in known)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown} for {' or '.join(args.algos)}")
    ex.check_experiment_out(args.out)
    pieces = set(args.pieces)
    t_all = time.perf_counter()
    plans: list[Plan] = []
    shared: dict[tuple, int] = {}  # replay and learner shapes -> the plan that measures them
    for game in args.games:
        for algo in args.algos:
            sims_list = (args.num_simulations or [None]) if algo == "alphazero" else [None]
            for num_envs in args.num_envs:
                for sims in sims_list:
                    config = make_config(
                        algo, game, num_envs, sims, args.num_steps, args.max_replay, overrides
                    )
                    if algo == "ppo":
                        plans.append(plan_ppo(game, config, pieces))
                        continue
                    same = (game, num_envs, config.replay_rows, repr(sorted(overrides.items())))
                    plan = plan_alphazero(game, config, pieces, same not in shared)
                    plan.shared_from = shared.setdefault(same, len(plans))
                    plans.append(plan)

    backend = jax.default_backend()
    if args.peak_tflops is not None:
        peak = args.peak_tflops * 1e12
    elif backend == "cpu":
        peak = cpu_peak_flops()
    else:
        peak = GPU_PEAK_TFLOPS["float32"] * 1e12
    ex.prepare_out(args.out, {**vars(args), "overrides": overrides, "peak_flops": peak})
    print(f"{backend}: peak {peak / 1e9:,.1f} GFLOP/s", flush=True)

    t0 = time.perf_counter()
    for plan in plans:
        key = jax.random.PRNGKey(plan.config.seed)
        plan.pieces.append(Piece("init", plan.init, lambda _, k=key: (k,), timed=False))
        lower(plan.pieces[-1], None)
        abstract = plan.pieces[-1].lowered[0].out_info
        for piece in plan.pieces[:-1]:
            lower(piece, abstract)
    lower_s = time.perf_counter() - t0
    all_pieces = [p for plan in plans for p in plan.pieces]
    print(f"{len(all_pieces)} pieces traced in {lower_s:.0f} s; compiling", flush=True)
    compile_all(all_pieces, args.compile_workers)
    compile_s = time.perf_counter() - t0 - lower_s
    print(
        f"compiled in {compile_s:.0f} s ({args.compile_workers} at a time)",
        flush=True,
    )
    meta = dict(
        backend=backend,
        device=str(jax.devices()[0].device_kind),
        peak_flops=peak,
        gpu_peak_tflops=GPU_PEAK_TFLOPS if backend == "gpu" else None,
        command=" ".join(["python experiments/profile_selfplay.py", *(argv or sys.argv[1:])]),
        lower_s=lower_s,
        compile_s=compile_s,
    )

    def write(rows: list[dict], md: str) -> None:
        """profile.json and profile.md of the rows so far (a run stopped by a time limit, as
        on a lent GPU, keeps the configurations it finished)."""
        meta["seconds"] = time.perf_counter() - t_all
        ex.write_json(os.path.join(args.out, "profile.json"), {**meta, "rows": rows})
        with open(os.path.join(args.out, "profile.md"), "w") as f:
            f.write(f"`{meta['command']}` on {meta['device']} ({backend}), peak "
                    f"{peak / 1e9:,.1f} GFLOP/s\n\n{md}\n")  # fmt: skip

    rows: list[dict] = []
    for plan in plans:
        t0 = time.perf_counter()
        run_plan(plan, args.repeats)
        shared_plan = plans[plan.shared_from] if plan.shared_from is not None else None
        row = finish_row(plan, shared_plan if shared_plan is not plan else None)
        rows.append(row)
        print(
            f"{plan.game} {plan.algo} games {row['num_envs']} sims {row['num_simulations']}: "
            f"{row['plies_per_s']:,.0f} plies/s, update {row['update_s']:.3g} s "
            f"(timed in {time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        write(rows, tables(rows, peak))
    md = tables(rows, peak)
    if args.against_commit:
        given = list(sys.argv[1:] if argv is None else argv)
        other = profile_commit(
            args.against_commit, _without(given, "--against-commit", "--out"), args.out
        )
        md += "\n\n" + compare_table(rows, other, args.against_commit)
    print("\n" + md)
    write(rows, md)
    print(f"\nwrote {args.out}/profile.json and profile.md ({meta['seconds']:.0f} s)")
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))

"""What the experiment scripts (``experiments/``) share: game variants by name, the ladder of a
game, every seed's greedy policy against opponents in one vmap, output files and seed bands.

    env = make_variant("reversi6")                        # the names ladders and agents use
    evaluate = seed_evaluator(agent, env, make_opponent("random", env), 200, opening_plies=4)
    results = evaluate(params, keys)                      # params[S, ...] -> S MatchResults
    out = prepare_out("runs/x", {"seeds": [0, 1, 2]})     # out/config.json with the machine
    mu, lo, hi = mean_band(values)                        # float[S, T]: 95% t-interval of the mean
    finished = random_plies(env, 4096, 100)(key)          # games finished in 100 random plies
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import time
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import distributed
from jaxgames.agents.registry import algorithm_module
from jaxgames.core import Env, Policy, step_autoreset
from jaxgames.evaluation.elo import t_quantile_975
from jaxgames.evaluation.ladder import (
    Ladder,
    Pairing,
    game_key,
    ladder_path,
    load_ladder,
    rate_against_ladder,
)
from jaxgames.evaluation.match import MatchResult, arena_layout, play_games
from jaxgames.games import game_variants, make, registered_games
from jaxgames.provenance import machine_description
from jaxgames.runs.outputs import check_output_path


# ----------------------------------------------------------------------------- games
def variant_keys() -> list[str]:
    """Every registered game variant by its ladder key (:func:`~jaxgames.evaluation.ladder.
    game_key`): ``["tic_tac_toe", "reversi6", "reversi8", "animal_shogi"]``."""
    return [game_key(make(name, **options)) for name, options in game_variants()]


def parse_variant(key: str) -> tuple[str, dict[str, Any]]:
    """``(name, options)`` of a variant key: a registered name, or a name with its board size
    appended (``reversi6`` -> ``("reversi", {"size": 6})``, ``reversi4`` too). ``ValueError``
    naming the valid keys otherwise."""
    for name in sorted(registered_games(), key=len, reverse=True):
        size = key[len(name) :]
        if key.startswith(name) and (not size or size.isdigit()):
            return name, ({"size": int(size)} if size else {})
    raise ValueError(f"unknown game {key!r}; valid: {', '.join(variant_keys())}")


def make_variant(key: str) -> Env:
    """The game of a variant key (:func:`parse_variant`)."""
    name, options = parse_variant(key)
    return make(name, **options)


def game_ladder(env: Env) -> Ladder | None:
    """The shipped ladder of ``env``'s game, else that of another variant of the same game
    (its rungs and opening plies suit a reversi 4x4 too); ``None`` if the game has none."""
    keys = [game_key(env)] + [
        game_key(make(name, **options)) for name, options in game_variants(env.name)
    ]
    for key in keys:
        if os.path.exists(ladder_path(key)):
            return load_ladder(key)
    return None


def with_chunks(algorithm: str, config: Any, n: int) -> Any:
    """``config`` cut into about ``n`` chunks (an experiment evaluates after each), the number
    of updates unchanged."""
    algo = algorithm_module(algorithm).make_algorithm(config)
    updates = max(1, round(config.total_steps * config.updates_per_chunk / algo.steps_per_chunk))
    return config.override({"updates_per_chunk": max(1, round(updates / max(1, n)))})


# ----------------------------------------------------------------------------- evaluation
def seed_evaluator(
    agent: Any, env: Env, opponent: Policy, n_games: int, *, opening_plies: int = 0
) -> Callable[[Any, jax.Array], list[MatchResult]]:
    """``evaluate(params, keys)``: every seed's greedy policy (``params`` with a leading seed
    axis S, ``keys`` uint32[S, 2]) against ``opponent``, ``n_games`` each as
    :func:`~jaxgames.evaluation.match.arena` plays them (half as first player, each game from
    ``opening_plies`` random plies, common random numbers across colours), in one jitted vmap.
    Returns one :class:`MatchResult` per seed."""
    a_player, ids = arena_layout(n_games)

    def one(params, key):
        policy = agent.policy(params, greedy=True)
        return play_games(policy, opponent, env, a_player, key, opening_plies, None, ids)

    run = jax.jit(jax.vmap(one))

    def evaluate(params: Any, keys: jax.Array) -> list[MatchResult]:
        total, plies = jax.device_get(run(params, keys))
        return [MatchResult.of(a_player, ids, t, p) for t, p in zip(total, plies)]

    return evaluate


def result_rows(chunk: int, seeds: Sequence[int], results: dict[str, list[MatchResult]]):
    """One row per seed and opponent of ``results`` (opponent -> one result per seed): the
    chunk, W/D/L counts and rates as first, as second and overall, the score, and ``units``
    the bootstrap units of :class:`~jaxgames.evaluation.ladder.Pairing` (an opening's two
    games, which share their random numbers, are one unit) as space-separated counts."""
    rows = []
    for opponent, per_seed in results.items():
        for seed, r in zip(seeds, per_seed):
            row: dict[str, Any] = dict(chunk=chunk, seed=seed, opponent=opponent)
            for side, rec in (("first", r.as_first), ("second", r.as_second), ("all", r.overall)):
                for what, n in (("win", rec.wins), ("draw", rec.draws), ("loss", rec.losses)):
                    row[f"{what}_{side}"] = n
                    row[f"{what}_rate_{side}"] = n / rec.games if rec.games else float("nan")
            units = " ".join(map(str, Pairing.from_match("<agent>", opponent, r).units))
            rows.append({**row, "score": r.overall.score, "units": units})
    return rows


def curve_arrays(rows: Sequence[dict], opponent: str | None, column: str):
    """From :func:`result_rows` rows with ``env_steps`` and ``train_seconds`` (or CSV rows of
    them): (env_steps float[T], train_seconds float[T], values float[S, T]) of ``column``
    against ``opponent`` (``None``: every row, for rows with one value per point and seed)."""
    sel = [r for r in rows if opponent is None or r["opponent"] == opponent]
    by = {(int(r["seed"]), int(r["chunk"])): r for r in sel}
    seeds, chunks = sorted({s for s, _ in by}), sorted({c for _, c in by})
    first = [by[(seeds[0], c)] for c in chunks]
    return (
        np.array([float(r["env_steps"]) for r in first]),
        np.array([float(r["train_seconds"]) for r in first]),
        np.array([[float(by[(s, c)][column]) for c in chunks] for s in seeds]),
    )


def _pairing(row: dict) -> Pairing:
    """The row's games in openings' units (a row without ``units``: single games)."""
    if row.get("units"):
        return Pairing("<agent>", row["opponent"], tuple(int(u) for u in row["units"].split()))
    w, d, lost = (int(row[f"{x}_all"]) for x in ("win", "draw", "loss"))
    return Pairing.from_counts("<agent>", row["opponent"], w, d, lost)


def ladder_ratings(rows: Sequence[dict], ladder: Ladder) -> list[dict]:
    """One row per (chunk, seed) of :func:`curve_arrays`-style rows: the Elo on ``ladder``
    from that point's games against its rungs (resampled by opening), their ratings held fixed
    (:func:`~jaxgames.evaluation.ladder.rate_against_ladder`; ``bound`` "lower"/"upper" where
    every game was won/lost)."""
    fit = ladder.fit()
    groups: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        if r["opponent"] in fit.names:
            groups.setdefault((int(r["chunk"]), int(r["seed"])), []).append(r)
    out = []
    for (chunk, seed), rs in sorted(groups.items()):
        pairs = {r["opponent"]: _pairing(r) for r in rs}
        rating = rate_against_ladder(pairs, fit)
        out.append(
            {
                "chunk": chunk,
                "env_steps": rs[0]["env_steps"],
                "train_seconds": rs[0]["train_seconds"],
                "seed": seed,
                "elo": round(rating.elo, 1),
                "elo_lo": round(rating.lo, 1),
                "elo_hi": round(rating.hi, 1),
                "bound": rating.bound or "",
                "rungs": " ".join(pairs),
            }
        )
    return out


# ----------------------------------------------------------------------------- random play
def fmix32(x: jax.Array) -> jax.Array:
    """murmur3's 32-bit finaliser: a cheap bijective mixer, uint32[...] -> uint32[...]."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    return x ^ (x >> 16)


def uniform_legal_action(seed: jax.Array, t: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """Uniformly random legal action per game: seed uint32[], t int32[] step index,
    legal_action_mask bool[B, A] -> int32[B].

    Each game hashes (seed, t, game) into r, takes k = floor(count * (r >> 16) / 2**16) (k-th
    legal action, uniform up to 2**-16) and finds it with a running count over the columns.
    Written as a Python loop over the A columns so XLA fuses it into one vectorised pass over
    the batch, far cheaper on CPU than ``jnp.cumsum``/``jax.random.categorical`` on [B, A].
    """
    batch, num_actions = legal_action_mask.shape
    games = jnp.arange(batch, dtype=jnp.uint32)
    r = fmix32(
        seed
        ^ fmix32(t.astype(jnp.uint32) * jnp.uint32(0x9E3779B9) + games * jnp.uint32(0x632BE5AB))
    )
    cols = [legal_action_mask[:, i].astype(jnp.uint32) for i in range(num_actions)]
    count = sum(cols[1:], cols[0])
    k = ((r >> 16) * count) >> 16
    seen = jnp.zeros(batch, jnp.uint32)
    action = jnp.zeros(batch, jnp.int32)
    for c in cols:
        seen = seen + c
        action = action + (seen <= k).astype(jnp.int32)
    return jnp.minimum(action, num_actions - 1)


def random_rollout(
    init: Callable, step_one: Callable, batch: int, steps: int, mesh=None
) -> Callable:
    """jit(key -> int32[] games finished) playing ``steps`` plies of ``batch`` games.

    mesh: a ``jaxgames.distributed.make_mesh`` mesh to split the games over (``None``: default
    device).

    init(key) -> state and step_one(state, action, key) -> (state, done) (a step that restarts a
    finished game) act on ONE game;
    they are vmapped here. Reset keys are derived per game and step by XOR-ing the step index
    into per-game keys drawn once (threefry-splitting 4096 keys per step would cost more than a
    reversi step); the policy is :func:`uniform_legal_action`.
    """

    def run(key):
        k0, k1, k2 = jax.random.split(key, 3)
        game_keys = jax.random.split(k1, batch)
        seed = jax.random.bits(k2, (), jnp.uint32)
        state = jax.vmap(init)(jax.random.split(k0, batch))
        if mesh is not None:
            state, game_keys = distributed.constrain_batch((state, game_keys), mesh)
        step = jax.vmap(step_one)

        def body(carry, t):
            # the action is chosen at the end of the previous iteration and carried, so it is
            # materialised once instead of being fused (and recomputed) into every consumer
            state, action, finished = carry
            state, done = step(state, action, game_keys ^ t.astype(jnp.uint32))
            if mesh is not None:
                # count finished games per game and sum once at the end: a per-ply sum over
                # the sharded batch would be an all-reduce (a device sync) every ply
                state = distributed.constrain_batch(state, mesh)
                finished = finished + done.astype(jnp.int32)
                done_count = jnp.int32(0)
            else:
                done_count = jnp.sum(done, dtype=jnp.int32)
            action = uniform_legal_action(seed, t + 1, state.legal_action_mask)
            return (state, action, finished), done_count

        first = uniform_legal_action(seed, jnp.int32(0), state.legal_action_mask)
        finished = jnp.zeros(batch, jnp.int32)
        (_, _, finished), done = jax.lax.scan(
            body, (state, first, finished), jnp.arange(steps, dtype=jnp.int32)
        )
        return done.sum() + finished.sum()

    return jax.jit(run)


def random_plies(env: Env, batch: int, steps: int, mesh=None) -> Callable:
    """:func:`random_rollout` of ``env`` through :func:`jaxgames.core.step_autoreset`."""

    def step(state, action, key):
        out = step_autoreset(env, state, action, key)
        return out.state, out.terminated | out.truncated

    return random_rollout(env.init, step, batch, steps, mesh)


# ----------------------------------------------------------------------------- files
def check_experiment_out(out: str) -> None:
    """``ValueError`` naming ``--out`` when ``out`` is a training run's folder (or an exported
    agent's) or inside one (an experiment writing its ``config.json`` there would replace the
    run's), or a folder that cannot be created."""
    check_output_path(out, "--out", folder=True)


def prepare_out(out: str, config: dict[str, Any], name: str = "config.json") -> str:
    """Create ``out`` and write ``config`` to ``out/<name>`` with the backend, devices, jax
    version, machine and time. Returns ``out``. ``ValueError`` (before writing) when ``out``
    is a training run's folder or inside one: its files are the run's."""
    check_experiment_out(out)
    os.makedirs(out, exist_ok=True)
    write_json(
        os.path.join(out, name),
        {
            **config,
            "backend": jax.default_backend(),
            "devices": [str(d) for d in jax.devices()],
            "jax": jax.__version__,
            "machine": machine_description(),
            "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        },
    )
    return out


def write_json(path: str, data: Any) -> str:
    """``data`` as indented JSON (numpy values and dataclasses converted). Returns ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def default(x):
        if isinstance(x, (np.ndarray, np.generic)):
            return x.tolist()
        if dataclasses.is_dataclass(x):
            return dataclasses.asdict(x)
        return str(x)

    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=default)
    return path


def write_csv(path: str, rows: Sequence[dict[str, Any]]) -> str:
    """``rows`` (columns: every key, in first-seen order). Returns ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    cols: list[str] = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols or ["empty"])
        w.writeheader()
        w.writerows(rows)
    return path


def read_csv(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ----------------------------------------------------------------------------- seed bands
def mean_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """values float[S, T] -> (mean, low, high) float[T]: the 95% t-interval of the mean over
    the S seeds (``low == high == mean`` for one seed; rates stay inside [0, 1])."""
    v = np.asarray(values, dtype=np.float64)
    mu, n = v.mean(0), v.shape[0]
    if n < 2:
        return mu, mu, mu
    half = t_quantile_975(n - 1) * v.std(0, ddof=1) / math.sqrt(n)
    lo, hi = mu - half, mu + half
    if v.min() >= 0.0 and v.max() <= 1.0:
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return mu, lo, hi


def band(values) -> dict[str, Any]:
    """``{"mean", "ci95": [low, high]}`` over the seeds of ``values`` float[S, 1]; one seed
    has no interval (``"ci95": None``, not a zero-width one), none is a ``ValueError``."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"a band needs values of at least one seed, shape [S, 1]; got {v.shape}")
    mu, lo, hi = mean_band(v)
    ci = [float(lo[0]), float(hi[0])] if v.shape[0] > 1 else None
    return {"mean": float(mu[0]), "ci95": ci}


def pyplot():
    """matplotlib.pyplot with the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_band(ax, x, values, label: str, color=None, style: str = "-", alpha: float = 0.2):
    """Seed mean of ``values`` float[S, T] against ``x`` float[T] with its 95% band."""
    mu, lo, hi = mean_band(values)
    (line,) = ax.plot(x, mu, style, color=color, label=label, marker="o", ms=2.5)
    if np.asarray(values).shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=alpha, lw=0)
    return line


def save_figure(fig, stem: str) -> list[str]:
    """Save ``fig`` as ``stem.png`` and ``stem.pdf`` and close it. Returns the paths."""
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    paths = [f"{stem}.png", f"{stem}.pdf"]
    fig.savefig(paths[0], dpi=120)
    fig.savefig(paths[1])
    pyplot().close(fig)
    return paths

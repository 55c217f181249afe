"""Move accuracy against perfect play: how often a player's moves keep the game-theoretic
value of animal-shogi positions (the solved table of
:mod:`jaxgames.evaluation.animal_shogi_solver`).

    out = move_accuracy(policy_a, policy_b, env, table, games=100)
    print(format_accuracy(out))

Protocol as ``jaxgames match`` (:mod:`jaxgames.evaluation.reports`): ``games`` distinct random
openings, each played twice with the colours swapped; the games are stepped on the host one
ply at a time so that every move of A is recorded with the position it was made in. A move
*keeps* the value when the position after it has the value, for A, of the position before it
(a win stays a win, a draw a draw); a *blunder* drops it (win -> draw or loss, draw -> loss).
The share kept counts the moves from won or drawn positions (from a lost one every move keeps
the value; their number is given apart). Reported overall, per colour of A and by game phase
(the ply of the move), each share with its 95% Wilson interval over moves (moves of one game
are correlated, so the interval is a lower bound on the uncertainty), and blunders per game
with a normal interval over games. The table ignores repetition and the ``max_steps`` cap (a
position no side can force is a draw), so a "kept" draw can still be lost on the clock.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, Policy
from jaxgames.evaluation import animal_shogi_solver as solver
from jaxgames.evaluation.elo import Z95, wilson_interval
from jaxgames.evaluation.openings import openings
from jaxgames.validation import check_int, check_seed

#: game phases by the ply of the move (opening included): [lo, hi)
PHASES = ((0, 20), (20, 40), (40, 80), (80, 10_000))
VALUES = {1: "win", 0: "draw", -1: "loss"}


def play_recorded(
    policy_a: Policy, policy_b: Policy, env: Env, starts, key: jax.Array, max_plies: int
) -> dict[str, np.ndarray]:
    """Play each start twice (A first, then A second; G = 2 x starts) and record A's moves:
    ``positions`` uint8[M, 18] (mover's frame), ``actions`` int32[M], ``game`` int32[M],
    ``ply`` int32[M] (the state's step count), ``a_player`` int32[G], ``winner`` int32[G]."""
    n = int(jax.tree_util.tree_leaves(starts)[0].shape[0])
    states = jax.tree.map(lambda x: jnp.concatenate([x, x]), starts)
    a_player = jnp.asarray(np.repeat([0, 1], n), jnp.int32)
    act_a, act_b = jax.jit(jax.vmap(policy_a)), jax.jit(jax.vmap(policy_b))

    @jax.jit
    def advance(states, action):
        done = states.terminated | states.truncated
        nxt = jax.vmap(env.step)(states, action)
        keep = lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
        return jax.tree.map(keep, states, nxt)

    positions_of = jax.jit(jax.vmap(solver.state_positions))
    rec: dict[str, list] = {"positions": [], "actions": [], "game": [], "ply": []}
    for _ in range(max_plies):
        done = np.asarray(states.terminated | states.truncated)
        if done.all():
            break
        key, k = jax.random.split(key)
        keys = jax.random.split(k, 2 * n)
        a, b = act_a(keys, states), act_b(keys, states)
        a_turn = (np.asarray(states.current_player) == np.asarray(a_player)) & ~done
        pos = np.asarray(positions_of(states.board, states.hand, states.current_player))
        rec["positions"].append(pos[a_turn].astype(np.uint8))
        rec["actions"].append(np.asarray(a)[a_turn])
        rec["game"].append(np.flatnonzero(a_turn))
        rec["ply"].append(np.asarray(states.step_count)[a_turn])
        states = advance(states, jnp.where(states.current_player == a_player, a, b))
    out = {k: np.concatenate(v) if v else np.zeros(0) for k, v in rec.items()}
    out["a_player"] = np.asarray(a_player)
    out["winner"] = np.asarray(states.winner)
    return out


def verdicts(table: solver.SolvedTable, positions: np.ndarray, actions: np.ndarray):
    """(int8[M] value before for the mover, int8[M] value after the move for the mover) of
    moves ``actions`` int32[M] from ``positions`` uint8[M, 18]."""
    before, _ = table.lookup(positions)
    succ = jax.jit(jax.vmap(solver.successor_positions))(jnp.asarray(positions, jnp.int32))
    after_pos = np.asarray(succ)[np.arange(len(actions)), actions].astype(np.uint8)
    after, _ = table.lookup(after_pos)
    return before, (-after).astype(np.int8)


def _share(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson_interval(k, n)
    return {"moves": int(n), "share": k / n if n else None, "lo": lo, "hi": hi}


def _summary(before, after, game, games) -> dict[str, Any]:
    kept = after == before
    blunder = after < before
    open_ = before >= 0  # from a lost position every move keeps the value: left out
    out = _share(int((kept & open_).sum()), int(open_.sum()))
    out["from_lost"] = int((~open_).sum())
    per_game = np.bincount(np.searchsorted(games, game), weights=blunder, minlength=len(games))
    mean = float(per_game.mean()) if len(games) else float("nan")
    half = Z95 * float(per_game.std(ddof=1)) / math.sqrt(len(games)) if len(games) > 1 else 0.0
    out["blunders"] = int(blunder.sum())
    out["blunders_per_game"] = {"mean": mean, "lo": max(0.0, mean - half), "hi": mean + half}
    out["by_value"] = {
        VALUES[v]: _share(int((kept & (before == v)).sum()), int((before == v).sum()))
        for v in (1, 0)
    }
    return out


def move_accuracy(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    table: solver.SolvedTable | None = None,
    *,
    games: int = 100,
    opening_plies: int = 4,
    seed: int = 0,
    max_plies: int | None = None,
    starts=None,
) -> dict[str, Any]:
    """A's move accuracy against B on animal shogi (module docstring): plain Python values,
    ``overall``, ``as_first``, ``as_second`` and ``phases`` (each: moves, share kept with
    ``lo``/``hi``, blunders, blunders per game, the share by the value before the move).
    ``starts``: a batched state of the openings instead (``games``, ``opening_plies`` unused)."""
    if env.name != "animal_shogi":
        raise ValueError(f"move accuracy needs the solved animal-shogi table, not {env.name}")
    check_int("games", games)
    check_int("opening_plies", opening_plies, minimum=0)
    check_seed("seed", seed)
    table = solver.load_table() if table is None else table
    max_plies = env.max_game_length if max_plies is None else max_plies
    if starts is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            starts = openings(env, games, opening_plies, seed)
    games = int(jax.tree_util.tree_leaves(starts)[0].shape[0])
    rec = play_recorded(policy_a, policy_b, env, starts, jax.random.PRNGKey(seed), max_plies)
    before, after = verdicts(table, rec["positions"], rec["actions"].astype(np.int64))
    a_of_move = rec["a_player"][rec["game"]]
    all_games = np.arange(len(rec["a_player"]))
    out: dict[str, Any] = {"games": int(len(all_games)), "openings": games, "seed": seed}
    out["overall"] = _summary(before, after, rec["game"], all_games)
    for colour, p in (("as_first", 0), ("as_second", 1)):
        m = a_of_move == p
        out[colour] = _summary(before[m], after[m], rec["game"][m], all_games[rec["a_player"] == p])
    out["phases"] = {}
    for lo, hi in PHASES:
        m = (rec["ply"] >= lo) & (rec["ply"] < hi)
        name = f"plies {lo}-{hi - 1}" if hi < 10_000 else f"plies {lo}+"
        out["phases"][name] = _summary(before[m], after[m], rec["game"][m], all_games)
    winner = rec["winner"]
    out["a_won"] = int(np.sum(winner == rec["a_player"]))
    out["a_lost"] = int(np.sum((winner >= 0) & (winner != rec["a_player"])))
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def format_accuracy(out: dict[str, Any]) -> str:
    """Text lines of :func:`move_accuracy`'s result."""
    lines = [
        f"{out['games']} games ({out['openings']} openings x 2 colours): A won {out['a_won']}, "
        f"lost {out['a_lost']}"
    ]
    rows = [("overall", out["overall"]), ("as first", out["as_first"])]
    rows += [("as second", out["as_second"])] + list(out["phases"].items())
    for name, s in rows:
        b = s["blunders_per_game"]
        lines.append(
            f"{name:>12}: {s['moves']:5d} moves from won/drawn positions ({s['from_lost']} from "
            f"lost), value kept {_pct(s['share'])} "
            f"[{_pct(s['lo'])}, {_pct(s['hi'])}], blunders {s['blunders']} "
            f"({b['mean']:.2f} [{b['lo']:.2f}, {b['hi']:.2f}] per game); from won positions "
            f"{_pct(s['by_value']['win']['share'])}, from drawn "
            f"{_pct(s['by_value']['draw']['share'])}"
        )
    return "\n".join(lines)

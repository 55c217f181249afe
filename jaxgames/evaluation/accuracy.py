"""Move accuracy against perfect play: how often a player's moves keep the game-theoretic
value of the position, judged by an oracle: the solved animal-shogi table
(:mod:`jaxgames.evaluation.animal_shogi_solver`) or, on reversi, the exact solver
(:mod:`jaxgames.evaluation.reversi_solver`) from a number of empty squares, or any
:class:`Oracle` (tic-tac-toe: value iteration's, in :mod:`jaxgames.baselines.value_iteration`).

    out = move_accuracy(policy_a, policy_b, env, table, games=100)       # animal shogi
    out = move_accuracy(policy_a, policy_b, env, games=20, empties=14)   # reversi
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

On reversi the oracle judges A's placements from positions with at most ``empties`` empty
squares (passes are forced and left out): the value is the sign class (win / draw / loss) of
the final disc margin with perfect play, the position's being its best move's; each judged
move also loses ``best margin - the move's margin`` discs (0 for a perfect move), reported as
the mean disc margin lost per judged move with a normal interval over moves. Phases are by the
empty squares at the move instead of the ply.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, Policy
from jaxgames.evaluation import animal_shogi_solver as solver
from jaxgames.evaluation import reversi_solver
from jaxgames.evaluation.elo import Z95, wilson_interval
from jaxgames.evaluation.openings import openings
from jaxgames.validation import check_int, check_seed

#: game phases by the ply of the move (opening included): (name, lo, hi), lo <= ply < hi
PHASES = (
    ("plies 0-19", 0, 20),
    ("plies 20-39", 20, 40),
    ("plies 40-79", 40, 80),
    ("plies 80+", 80, 10_000),
)
#: reversi phases by the empty squares at the move: (name, lo, hi), lo <= empties < hi
REVERSI_PHASES = (("empties 11+", 11, 10_000), ("empties 6-10", 6, 11), ("empties 1-5", 1, 6))
VALUES = {1: "win", 0: "draw", -1: "loss"}
#: default empties judged on reversi, by board size (a few solves per move, see docs)
DEFAULT_EMPTIES = {4: 10, 6: 16, 8: 14}


@dataclasses.dataclass(frozen=True)
class Oracle:
    """What judges the moves: ``positions_of`` (jittable, one state -> its position as an
    array[K] in the mover's frame), ``judge(positions[M, K], actions int64[M], ply int32[M])``
    -> dict of ``judged`` bool[M], ``before`` / ``after`` int8[M] (the mover's value before
    and after the move: 1 win, 0 draw, -1 loss), ``phase`` int[M] (the number ``phases``
    bucket) and, where the oracle knows margins, ``lost`` float64[M] (margin lost);
    ``phases``: (name, lo, hi) buckets; ``note``: what was judged, for the report;
    ``empties``: the reversi oracle's most empty squares judged (``None``: every move)."""

    positions_of: Callable[[Any], jax.Array]
    judge: Callable[[np.ndarray, np.ndarray, np.ndarray], dict[str, np.ndarray]]
    phases: tuple[tuple[str, int, int], ...]
    note: str = "every move"
    empties: int | None = None


def animal_shogi_oracle(table: solver.SolvedTable) -> Oracle:
    """The solved table as the oracle: every move judged, phases by ply."""

    def judge(positions, actions, ply):
        before, after = verdicts(table, positions.astype(np.uint8), actions)
        return {
            "judged": np.ones(len(actions), bool),
            "before": before,
            "after": after,
            "phase": ply,
        }

    return Oracle(
        positions_of=lambda s: solver.state_positions(s.board, s.hand, s.current_player),
        judge=judge,
        phases=PHASES,
    )


def reversi_oracle(size: int, empties: int) -> Oracle:
    """The exact reversi solver as the oracle for placements from positions with at most
    ``empties`` empty squares (one full-window solve per legal move, on the host)."""
    check_int("empties", empties, minimum=1)
    cells = size * size

    def positions_of(s):
        flag = jnp.asarray(s.passed, jnp.uint32)[None]
        return jnp.concatenate([s.mover.astype(jnp.uint32), s.opponent.astype(jnp.uint32), flag])

    def judge(positions, actions, ply):
        m = len(actions)
        w = (positions.shape[1] - 1) // 2 if m else 0
        out = {
            "judged": np.zeros(m, bool),
            "before": np.zeros(m, np.int8),
            "after": np.zeros(m, np.int8),
            "lost": np.zeros(m),
            "phase": np.zeros(m, int),
        }
        for i in range(m):
            words = positions[i]
            p, o = reversi_solver.join_words(words[:w]), reversi_solver.join_words(words[w:-1])
            left = cells - bin(p | o).count("1")
            if left > empties or int(actions[i]) == cells:
                continue
            margins = reversi_solver.move_margins(size, p, o, bool(words[-1]))
            best, mine = max(margins.values()), margins[int(actions[i])]
            out["judged"][i] = True
            out["before"][i], out["after"][i] = np.sign(best), np.sign(mine)
            out["lost"][i], out["phase"][i] = best - mine, left
        return out

    return Oracle(
        positions_of=positions_of,
        judge=judge,
        phases=REVERSI_PHASES,
        note=f"placements with <= {empties} empty squares",
        empties=empties,
    )


def default_oracle(
    env: Env, table: solver.SolvedTable | None = None, *, empties: int | None = None
) -> Oracle:
    """The solved game's oracle: animal shogi's table (default: the cached one, else
    :class:`~jaxgames.evaluation.animal_shogi_solver.TableMissing`), or on reversi 4x4, 6x6
    and 8x8 the exact solver from ``empties`` empty squares (default :data:`DEFAULT_EMPTIES`
    of the size); a one-line ``ValueError`` for anything else (tic-tac-toe's oracle is value
    iteration's, a layer above: :func:`jaxgames.specs.make_oracle` picks any game's)."""
    if env.name == "animal_shogi":
        if empties is not None:
            raise ValueError("empties is for reversi: animal_shogi judges every move")
        return animal_shogi_oracle(solver.load_table() if table is None else table)
    if env.name != "reversi":
        raise ValueError(
            f"move accuracy needs animal_shogi, reversi or an oracle for {env.name} (tic-tac-toe:"
            " value_iteration.tic_tac_toe_oracle())"
        )
    size = env.size
    if size not in DEFAULT_EMPTIES:
        raise ValueError(f"the exact reversi solver takes sizes 4, 6 or 8, not {size}")
    empties = DEFAULT_EMPTIES[size] if empties is None else empties
    if not 1 <= empties <= size * size - 4:
        most = size * size - 4
        raise ValueError(f"empties must be from 1 to {most} on {size}x{size}, not {empties}")
    return reversi_oracle(size, empties)


def play_recorded(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    starts,
    key: jax.Array,
    max_plies: int,
    positions_of: Callable[[Any], jax.Array] | None = None,
) -> dict[str, np.ndarray]:
    """Play each start twice (A first, then A second; G = 2 x starts) and record A's moves:
    ``positions`` [M, K] (``positions_of`` of the state, default the animal-shogi position
    uint8[M, 18] in the mover's frame), ``actions`` int32[M], ``game`` int32[M], ``ply``
    int32[M] (the state's step count), ``a_player`` int32[G], ``winner`` int32[G]."""
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

    if positions_of is None:
        positions_of = lambda s: solver.state_positions(s.board, s.hand, s.current_player)  # noqa: E731
    positions_of = jax.jit(jax.vmap(positions_of))
    rec: dict[str, list] = {"positions": [], "actions": [], "game": [], "ply": []}
    for _ in range(max_plies):
        done = np.asarray(states.terminated | states.truncated)
        if done.all():
            break
        key, k = jax.random.split(key)
        keys = jax.random.split(k, 2 * n)
        a, b = act_a(keys, states), act_b(keys, states)
        a_turn = (np.asarray(states.current_player) == np.asarray(a_player)) & ~done
        pos = np.asarray(positions_of(states))
        rec["positions"].append(pos[a_turn])
        rec["actions"].append(np.asarray(a)[a_turn])
        rec["game"].append(np.flatnonzero(a_turn))
        rec["ply"].append(np.asarray(states.step_count)[a_turn])
        states = advance(states, jnp.where(states.current_player == a_player, a, b))
    out = {k: np.concatenate(v) if v else np.zeros(0) for k, v in rec.items()}
    out["a_player"] = np.asarray(a_player)
    rewards = np.asarray(states.rewards)  # the final step's, per player: +1 to the winner
    out["winner"] = np.where(rewards.max(-1) > 0, rewards.argmax(-1), -1)
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


def _mean_interval(x: np.ndarray) -> dict[str, float | None]:
    """Mean of ``x`` with its normal 95% interval (lower end at least 0); ``None`` for none."""
    if not len(x):
        return {"mean": None, "lo": None, "hi": None}
    mean = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else 0.0
    return {"mean": mean, "lo": max(0.0, mean - half), "hi": mean + half}


def _summary(before, after, game, games, lost=None) -> dict[str, Any]:
    kept = after == before
    blunder = after < before
    open_ = before >= 0  # from a lost position every move keeps the value: left out
    out = _share(int((kept & open_).sum()), int(open_.sum()))
    out["from_lost"] = int((~open_).sum())
    per_game = np.bincount(np.searchsorted(games, game), weights=blunder, minlength=len(games))
    out["blunders"] = int(blunder.sum())
    out["blunders_per_game"] = _mean_interval(per_game)
    out["by_value"] = {
        VALUES[v]: _share(int((kept & (before == v)).sum()), int((before == v).sum()))
        for v in (1, 0)
    }
    if lost is not None:
        out["margin_lost"] = _mean_interval(np.asarray(lost))
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
    empties: int | None = None,
    oracle: Oracle | None = None,
) -> dict[str, Any]:
    """A's move accuracy against B (module docstring): plain Python values, ``overall``,
    ``as_first``, ``as_second`` and ``phases`` (each: moves, share kept with ``lo``/``hi``,
    blunders, blunders per game, the share by the value before the move and, on reversi, the
    disc margin lost per move). Animal shogi: judged by ``table`` (default: the cached one);
    reversi: by the exact solver from ``empties`` empty squares (default
    :data:`DEFAULT_EMPTIES` of the size). ``starts``: a batched state of the openings instead
    (``games``, ``opening_plies`` unused). ``oracle``: any other :class:`Oracle` (tic-tac-toe:
    :func:`jaxgames.baselines.value_iteration.tic_tac_toe_oracle`)."""
    if oracle is None:
        oracle = default_oracle(env, table, empties=empties)
    check_int("games", games)
    check_int("opening_plies", opening_plies, minimum=0)
    check_seed("seed", seed)
    max_plies = env.max_game_length if max_plies is None else max_plies
    if starts is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            starts = openings(env, games, opening_plies, seed)
    games = int(jax.tree_util.tree_leaves(starts)[0].shape[0])
    rec = play_recorded(
        policy_a, policy_b, env, starts, jax.random.PRNGKey(seed), max_plies, oracle.positions_of
    )
    v = oracle.judge(rec["positions"], rec["actions"].astype(np.int64), rec["ply"])
    j = v["judged"]
    before, after, game, phase = v["before"][j], v["after"][j], rec["game"][j], v["phase"][j]
    lost = v["lost"][j] if "lost" in v else None
    sub = lambda m: None if lost is None else lost[m]  # noqa: E731
    a_of_move = rec["a_player"][game]
    all_games = np.arange(len(rec["a_player"]))
    out: dict[str, Any] = {"games": int(len(all_games)), "openings": games, "seed": seed}
    out["distinct_games"] = distinct_games(rec)
    out["judged"] = oracle.note
    out["unjudged"] = int((~j).sum())
    out["overall"] = _summary(before, after, game, all_games, lost)
    for colour, p in (("as_first", 0), ("as_second", 1)):
        m = a_of_move == p
        out[colour] = _summary(
            before[m], after[m], game[m], all_games[rec["a_player"] == p], sub(m)
        )
    out["phases"] = {}
    for name, lo, hi in oracle.phases:
        m = (phase >= lo) & (phase < hi)
        out["phases"][name] = _summary(before[m], after[m], game[m], all_games, sub(m))
    winner = rec["winner"]
    out["a_won"] = int(np.sum(winner == rec["a_player"]))
    out["a_lost"] = int(np.sum((winner >= 0) & (winner != rec["a_player"])))
    return out


def distinct_games(rec: dict[str, np.ndarray]) -> int:
    """How many of :func:`play_recorded`'s games differ: in A's colour, or in a position A
    moved from or a move A made (from the start, only the players' random tie-breaks vary
    the games)."""
    pos, act, game = rec["positions"], rec["actions"], rec["game"]
    seen = {
        (int(a), pos[game == g].tobytes(), act[game == g].tobytes())
        for g, a in enumerate(rec["a_player"])
    }
    return len(seen)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def format_accuracy(out: dict[str, Any]) -> str:
    """Text lines of :func:`move_accuracy`'s result."""
    lines = [
        f"{out['games']} games ({out['openings']} openings x 2 colours, "
        f"{out['distinct_games']} distinct): A won {out['a_won']}, "
        f"lost {out['a_lost']}; judged: {out['judged']} ({out['unjudged']} other moves of A)"
    ]
    rows = [("overall", out["overall"]), ("as first", out["as_first"])]
    rows += [("as second", out["as_second"])] + list(out["phases"].items())
    for name, s in rows:
        b = s["blunders_per_game"]
        line = (
            f"{name:>12}: {s['moves']:5d} moves from won/drawn positions ({s['from_lost']} from "
            f"lost), value kept {_pct(s['share'])} "
            f"[{_pct(s['lo'])}, {_pct(s['hi'])}], blunders {s['blunders']} "
            f"({_num(b['mean'])} [{_num(b['lo'])}, {_num(b['hi'])}] per game); from won positions "
            f"{_pct(s['by_value']['win']['share'])}, from drawn "
            f"{_pct(s['by_value']['draw']['share'])}"
        )
        if "margin_lost" in s:
            d = s["margin_lost"]
            line += f"; discs lost per move {_num(d['mean'])} [{_num(d['lo'])}, {_num(d['hi'])}]"
        lines.append(line)
    return "\n".join(lines)

"""Arena: play two policies against each other, all games in parallel, with Wilson intervals.

    result = arena(policy_a, policy_b, env, n_games=4000, key=key, opening_plies=2)
    print(result)                      # W/D/L of A overall, as first player, as second player
    result.score                       # (wins + draws / 2) / games, from A's side

Half of the games (the first ``n_games // 2``, rounded up) give A the first move (player 0);
the other half give it to B; game k of each half uses the same random numbers (common random
numbers: ``arena(a, b).swapped() == arena(b, a)`` exactly for even ``n_games``). All games run
at once in one jitted ``lax.while_loop`` over plies (stopping when every game is over); both
policies are evaluated on the whole batch at every ply and the mover's choice is kept (so an
expensive search costs twice what it would if only the movers were searched; the rating
module's ``play_match`` avoids that with ``play_from(..., paired=True)``). Compiled arenas are
cached per (policies, env, n_games, max_plies). ``opening_plies = k`` first plays k uniformly
random plies in every game (as the animal-shogi article did) so that deterministic policies
meet varied games.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState, Policy, random_action


def wilson_interval(k: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% (default ``z``) Wilson score interval for ``k`` successes in ``n`` trials.

    Returns ``(low, high)`` in [0, 1]; ``(0.0, 1.0)`` when ``n == 0``. Fractional ``k`` is
    allowed (e.g. wins + draws / 2).
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclasses.dataclass(frozen=True)
class Record:
    """Wins/draws/losses of policy A in a set of games (Python ints)."""

    wins: int
    draws: int
    losses: int

    @classmethod
    def of(cls, outcomes: np.ndarray) -> "Record":
        """The record of game outcomes (+1 A won, 0 draw, -1 A lost)."""
        o = np.asarray(outcomes)
        return cls(int(np.sum(o > 0)), int(np.sum(o == 0)), int(np.sum(o < 0)))

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def _rate(self, k: float) -> float:
        return k / self.games if self.games else float("nan")

    @property
    def win_rate(self) -> float:
        return self._rate(self.wins)

    @property
    def draw_rate(self) -> float:
        return self._rate(self.draws)

    @property
    def loss_rate(self) -> float:
        return self._rate(self.losses)

    @property
    def score(self) -> float:
        """(wins + draws / 2) / games."""
        return self._rate(self.wins + 0.5 * self.draws)

    def ci(self, what: str = "win") -> tuple[float, float]:
        """95% Wilson interval of the ``"win"``, ``"draw"``, ``"loss"`` rate or the ``"score"``."""
        k = {
            "win": self.wins,
            "draw": self.draws,
            "loss": self.losses,
            "score": self.wins + 0.5 * self.draws,
        }.get(what)
        if k is None:
            raise ValueError(f"unknown rate {what!r}; valid: win, draw, loss, score")
        return wilson_interval(k, self.games)

    def __str__(self) -> str:
        if not self.games:
            return "no games"
        lo, hi = self.ci("win")
        slo, shi = self.ci("score")
        return (
            f"W {self.wins} D {self.draws} L {self.losses} / {self.games}: "
            f"win {self.win_rate:.1%} [{lo:.1%}, {hi:.1%}], "
            f"draw {self.draw_rate:.1%}, loss {self.loss_rate:.1%}, "
            f"score {self.score:.1%} [{slo:.1%}, {shi:.1%}]"
        )


def game_outcomes(total: np.ndarray, a_player: np.ndarray) -> np.ndarray:
    """int8[G] from A's side (+1 won, 0 draw, -1 lost): the sign of A's summed reward minus
    B's, from rewards float32[G, 2] and A's player id per game, int[G]."""
    total, a_np = np.asarray(total), np.asarray(a_player)
    games = np.arange(len(a_np))
    return np.sign(total[games, a_np] - total[games, 1 - a_np]).astype(np.int8)


@dataclasses.dataclass(frozen=True)
class ArenaResult:
    """Outcome of :func:`arena`, from policy A's side.

    overall / as_first / as_second: :class:`Record` (as_first: games where A was player 0).
    outcomes: int8[n_games] +1 A won, 0 draw, -1 A lost; a_player: int32[n_games] A's id.
    plies: int32[n_games] game lengths (opening plies included).
    """

    overall: Record
    as_first: Record
    as_second: Record
    outcomes: np.ndarray
    a_player: np.ndarray
    plies: np.ndarray

    @classmethod
    def of(cls, total: np.ndarray, plies: np.ndarray, a_player: np.ndarray) -> "ArenaResult":
        """From a :func:`play_games` call's (rewards float32[G, 2], plies int32[G]) and A's
        player id per game, int[G]."""
        a_np = np.asarray(a_player)
        outcomes = game_outcomes(total, a_np)
        return cls(
            Record.of(outcomes),
            Record.of(outcomes[a_np == 0]),
            Record.of(outcomes[a_np == 1]),
            outcomes,
            a_np,
            np.asarray(plies),
        )

    @property
    def score(self) -> float:
        return self.overall.score

    def swapped(self) -> "ArenaResult":
        """The same games seen from B's side."""

        def flip(r: Record) -> Record:
            return Record(r.losses, r.draws, r.wins)

        return ArenaResult(
            flip(self.overall),
            flip(self.as_second),
            flip(self.as_first),
            -self.outcomes,
            1 - self.a_player,
            self.plies,
        )

    def to_dict(self) -> dict:
        """Plain-Python summary (counts, rates and Wilson intervals) for JSON/CSV."""
        out = {}
        for name in ("overall", "as_first", "as_second"):
            r = getattr(self, name)
            out[name] = dict(
                wins=r.wins,
                draws=r.draws,
                losses=r.losses,
                games=r.games,
                win_rate=r.win_rate,
                win_ci=r.ci("win"),
                draw_rate=r.draw_rate,
                loss_rate=r.loss_rate,
                score=r.score,
                score_ci=r.ci("score"),
            )
        out["mean_plies"] = float(np.mean(self.plies)) if len(self.plies) else float("nan")
        return out

    def __str__(self) -> str:
        return (
            f"A overall:   {self.overall}\n"
            f"A as first:  {self.as_first}\n"
            f"A as second: {self.as_second}"
        )


def play_from(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    states,
    a_player: jax.Array,
    key: jax.Array,
    opening_plies: int | jax.Array = 0,
    max_plies: int | None = None,
    game_ids: jax.Array | None = None,
    paired: bool = False,
    snapshot: Callable[[GameState], jax.Array] | None = None,
):
    """Play the batch of games ``states`` (leading axis G) on to the end, in parallel (jit this;
    no Python loop over plies). The one game loop behind :func:`arena` and
    :func:`jaxgames.evaluation.rating.play_match`.

    a_player: int32[G] A's player id per game. game_ids: int32[G] (default ``arange(G)``, or
    ``arange(G/2)`` twice when ``paired``) seeds each game's randomness: at loop step t the
    mover's policy gets a key derived from (key, t, id), whichever policy it is, so games with
    equal ids share their random numbers. The first ``opening_plies`` steps play uniformly
    random moves instead. Returns (final states, summed rewards float32[G, 2]). Stops when all
    games are over or after ``max_plies`` loop steps (if given).

    ``paired`` (static): game i and game i + G/2 are the same game with colours swapped (they
    must have equal game ids and different ``a_player``), so in every pair one game has A to
    move and the other B (the games here alternate strictly): A and B are then each evaluated
    on G/2 states per ply instead of G (half the cost), with the same keys and states, so the
    same moves (up to float rounding that depends on the batch size, e.g. in a network). A
    step where some pair has A (or B) to move in both live games falls back to evaluating both
    policies on all G games.
    """
    g = a_player.shape[0]
    if paired and g % 2:
        raise ValueError(f"paired play needs an even number of games, got {g}")
    h = g // 2
    if game_ids is not None:
        ids = game_ids
    elif paired:
        ids = jnp.concatenate([jnp.arange(h, dtype=jnp.int32)] * 2)
    else:
        ids = jnp.arange(g, dtype=jnp.int32)
    vpol_a, vpol_b = jax.vmap(policy_a), jax.vmap(policy_b)

    def full(states, k_pol):
        act_a = vpol_a(k_pol, states)
        act_b = vpol_b(k_pol, states)
        return jnp.where(states.current_player == a_player, act_a, act_b).astype(jnp.int32)

    def split_pairs(states, k_pol):
        """Each policy on the half of the states where it is to move (see ``paired``)."""
        live = ~(states.terminated | states.truncated)
        a_moves = states.current_player == a_player
        a_in_first = jnp.where(live[:h], a_moves[:h], ~a_moves[h:])  # A's game is game i

        def pick(x, take_first):
            sel = take_first.reshape((h,) + (1,) * (x.ndim - 1))
            return jnp.where(sel, x[:h], x[h:])

        s_a = jax.tree_util.tree_map(lambda x: pick(x, a_in_first), states)
        s_b = jax.tree_util.tree_map(lambda x: pick(x, ~a_in_first), states)
        act_a = vpol_a(k_pol[:h], s_a).astype(jnp.int32)
        act_b = vpol_b(k_pol[:h], s_b).astype(jnp.int32)
        first = jnp.where(a_in_first, act_a, act_b)
        second = jnp.where(a_in_first, act_b, act_a)
        return jnp.concatenate([first, second])

    def choose(states, k_pol):
        if not paired:
            return full(states, k_pol)
        live = ~(states.terminated | states.truncated)
        a_moves = states.current_player == a_player
        clash = live[:h] & live[h:] & (a_moves[:h] == a_moves[h:])
        return jax.lax.cond(jnp.any(clash), full, split_pairs, states, k_pol)

    def keep(snaps, taken, states):
        """(snaps, taken) with each game's state kept the first time ``snapshot`` holds."""
        if snapshot is None:  # nothing carried: the loop is the plain one
            return snaps, taken
        take = ~taken & jax.vmap(snapshot)(states)
        return _where_games(take, states, snaps), taken | take

    def cond(c):
        states, _, t, _ = c
        live = jnp.any(~(states.terminated | states.truncated))
        return live if max_plies is None else live & (t < max_plies)

    def body(c):
        states, total, t, (snaps, taken) = c
        k_t = jax.random.fold_in(key, t)
        keys = jax.vmap(lambda i: jax.random.split(jax.random.fold_in(k_t, i)))(ids)  # [G, 2, key]
        k_pol, k_rand = keys[:, 0], keys[:, 1]
        action = choose(states, k_pol)
        act_r = jax.vmap(random_action)(k_rand, states.legal_action_mask)
        action = jnp.where(t < opening_plies, act_r, action).astype(jnp.int32)
        states = jax.vmap(env.step)(states, action)
        return states, total + states.rewards, t + 1, keep(snaps, taken, states)

    zeros = jnp.zeros((g, env.num_players), jnp.float32)
    snapped = keep(states, jnp.zeros(g, bool), states) if snapshot is not None else ((), ())
    init = (states, zeros, jnp.int32(0), snapped)
    states, total, _, (snaps, taken) = jax.lax.while_loop(cond, body, init)
    if snapshot is None:
        return states, total
    return states, total, _where_games(taken, snaps, states)


def _where_games(mask: jax.Array, a, b):
    """Per game (leading axis G of every leaf): ``a``'s where ``mask`` bool[G], else ``b``'s."""
    pick = lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y)  # noqa: E731
    return jax.tree_util.tree_map(pick, a, b)


def play_games(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    a_player: jax.Array,
    key: jax.Array,
    opening_plies: int | jax.Array = 0,
    max_plies: int | None = None,
    game_ids: jax.Array | None = None,
    snapshot: Callable[[GameState], jax.Array] | None = None,
):
    """Play ``len(a_player)`` games in parallel from the start position (jit this).

    a_player: int32[G] A's player id per game. game_ids: int32[G] (default ``arange(G)``) seeds
    each game's randomness: at ply t the mover's policy gets a key derived from (key, t, id),
    whichever policy it is, so games with equal ids share their random numbers. Returns
    (final rewards float32[G, 2], plies int32[G]). Stops when all games are over or after
    ``max_plies`` (if given). The loop is :func:`play_from`; with ``snapshot`` its snapshots
    come third.
    """
    g = a_player.shape[0]
    ids = jnp.arange(g, dtype=jnp.int32) if game_ids is None else game_ids
    key_init, key_play = jax.random.split(key)
    states = jax.vmap(env.init)(jax.vmap(lambda i: jax.random.fold_in(key_init, i))(ids))
    states, total, *snaps = play_from(
        policy_a,
        policy_b,
        env,
        states,
        a_player,
        key_play,
        opening_plies,
        max_plies,
        ids,
        snapshot=snapshot,
    )
    return (total, states.step_count, *snaps)


def _compiled(policy_a: Policy, policy_b: Policy, env: Env, n_games: int, max_plies: int | None):
    """Jitted ``(key, opening_plies) -> (rewards, plies)`` for one pairing, cached (repeated
    arenas of the same policies and size compile once); unhashable policies are not cached."""
    try:
        return _compiled_cached(policy_a, policy_b, env, n_games, max_plies)
    except TypeError:  # an unhashable policy object
        return _build(policy_a, policy_b, env, n_games, max_plies)


@functools.lru_cache(maxsize=16)
def _compiled_cached(policy_a, policy_b, env, n_games, max_plies):
    return _build(policy_a, policy_b, env, n_games, max_plies)


def arena_layout(n_games: int) -> tuple[jax.Array, jax.Array]:
    """(a_player, game_ids), int32[n_games] each: how :func:`arena` lays out its games (A first
    in the first half, rounded up; game k of each half shares its random numbers), so that a
    :func:`play_games` call with them and ``arena``'s key plays ``arena``'s games."""
    first = (n_games + 1) // 2
    i = jnp.arange(n_games, dtype=jnp.int32)
    return jnp.where(i < first, 0, 1).astype(jnp.int32), jnp.where(i < first, i, i - first)


def _build(policy_a: Policy, policy_b: Policy, env: Env, n_games: int, max_plies: int | None):
    a_player, game_ids = arena_layout(n_games)
    return jax.jit(
        lambda k, o: play_games(policy_a, policy_b, env, a_player, k, o, max_plies, game_ids)
    )


def arena(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    n_games: int,
    key: jax.Array,
    opening_plies: int = 0,
    max_plies: int | None = None,
) -> ArenaResult:
    """Play ``n_games`` games of A against B, half with each colour, all in parallel.

    Policies are ``policy(key, state) -> int32[]`` (see :mod:`jaxgames.evaluation.opponents`).
    ``opening_plies``: random plies played first in every game. ``max_plies``: optional cap
    (unfinished games count as draws). Returns an :class:`ArenaResult` (from A's side).
    """
    if n_games < 1:
        raise ValueError(f"n_games must be >= 1, got {n_games}")
    if opening_plies < 0:
        raise ValueError(f"opening_plies must be >= 0, got {opening_plies}")
    a_player = arena_layout(n_games)[0]
    run = _compiled(policy_a, policy_b, env, n_games, max_plies)
    total, plies = run(key, jnp.int32(opening_plies))
    return ArenaResult.of(total, plies, a_player)


def evaluate_vs(
    env: Env, policy: Policy, opponent: Policy, key: jax.Array, n_games: int
) -> dict[str, jax.Array]:
    """``policy`` against ``opponent``, ``n_games`` as each side, in one batch. Jittable.

    Returns float32[] rates keyed ``{win,draw,loss}_first`` (policy is player 0) and
    ``{win,draw,loss}_second`` (policy is player 1). Used for evaluation inside training.
    """
    if int(n_games) < 1:
        raise ValueError(f"n_games must be >= 1, got {n_games}")
    a_player = jnp.repeat(jnp.arange(2, dtype=jnp.int32), n_games)
    total, _ = play_games(policy, opponent, env, a_player, key)
    mine = total[jnp.arange(2 * n_games), a_player].reshape(2, n_games)
    out = {}
    for side, name in enumerate(("first", "second")):
        r = mine[side]
        out[f"win_{name}"] = jnp.mean(r > 0).astype(jnp.float32)
        out[f"draw_{name}"] = jnp.mean(r == 0).astype(jnp.float32)
        out[f"loss_{name}"] = jnp.mean(r < 0).astype(jnp.float32)
    return out

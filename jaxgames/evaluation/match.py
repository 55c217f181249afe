"""Match play: the one game loop of the evaluation (:func:`play_from`) and its result type.

    result = play_match(policy_a, policy_b, env, openings(env, 200, 4), key)   # ladders, rate
    result = arena(policy_a, policy_b, env, 4000, key, opening_plies=2)        # jaxgames eval
    print(result)                # W/D/L of A overall, as first, as second; A's score margin

A call plays its games in one jitted ``lax.while_loop``, up to ``batch`` games at once (a
larger match in pieces of that many, so a search's trees fit in memory), compiled once per
(policies, env, number of games at once, options). At loop step t the mover's policy gets a
key from (key, t, game id), whichever policy it is, so games with equal ids share their
random numbers: both colours of a pairing meet the same luck (common random numbers), and a
game does not depend on the batch it was played in (up to a network's batch-size-dependent
float rounding).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState, Policy, random_action
from jaxgames.evaluation.elo import Match, Record, effective_games, t_quantile_975
from jaxgames.evaluation.openings import num_games, position_keys
from jaxgames.validation import check_int, fail

BATCH = 16384
"""Games played at once by default: a search's trees grow with the games played at once."""
MAX_GAMES = 10_000_000
"""The most games in one match: each game's record is kept on the host."""


# ============================================================================ the result
def game_outcomes(total: np.ndarray, a_player: np.ndarray) -> np.ndarray:
    """int8[G] from A's side (+1 won, 0 draw, -1 lost): the sign of A's summed reward minus
    B's, from rewards float32[G, 2] and A's player id per game, int[G]."""
    total, a_np = np.asarray(total), np.asarray(a_player)
    games = np.arange(len(a_np))
    return np.sign(total[games, a_np] - total[games, 1 - a_np]).astype(np.int8)


@dataclasses.dataclass(frozen=True, eq=False)
class MatchResult:
    """The games of policy A against policy B, from A's side.

    outcomes: int8[G] +1 A won, 0 draw, -1 A lost. a_player: int32[G] A's player id.
    opening: int32[G] each game's opening (:func:`arena`: its pair of games), the bootstrap
    unit. plies: int32[G] final ply counts. margin: float32[G] A's final :meth:`Env.score`
    margin, None without a score. states / snapshots: the final states (their rewards the
    last move's) and each game's first state where ``snapshot`` held (numpy leaves
    [G, ...]), when asked for. keys: with ``fingerprint``, one byte string per game naming
    it move for move (A's side, its start position, a 64-bit hash of every action), so that
    the records count the **distinct** games (:attr:`Record.distinct`: repeats of a game are
    not independent samples).
    """

    outcomes: np.ndarray
    a_player: np.ndarray
    opening: np.ndarray
    plies: np.ndarray
    margin: np.ndarray | None = None
    states: GameState | None = None
    snapshots: GameState | None = None
    keys: tuple[bytes, ...] | None = None

    @classmethod
    def of(
        cls, a_player, opening, total, plies, score=None, states=None, snapshots=None,
        fingerprints=None, start_keys=None,
    ):  # fmt: skip
        """From a loop's summed rewards float32[G, 2], plies int32[G] and final
        :meth:`Env.score` float32[G, 2] (or None); ``fingerprints`` uint32[G, 2] (each game's
        hash of its actions) and ``start_keys`` (one byte string per game's start position;
        None: the game's initial position) make :attr:`keys`."""
        a_np = np.asarray(a_player, np.int32)
        margin = None
        if score is not None:
            margin = np.asarray(score, np.float32)[np.arange(len(a_np)), a_np]
        keys = None
        if fingerprints is not None:
            fp = np.asarray(fingerprints, np.uint32)
            starts = start_keys if start_keys is not None else [b""] * len(a_np)
            keys = tuple(bytes([int(p)]) + s + f.tobytes() for p, s, f in zip(a_np, starts, fp))
        return cls(
            game_outcomes(total, a_np),
            a_np,
            np.asarray(opening, np.int32),
            np.asarray(plies),
            margin,
            jax.device_get(states),
            jax.device_get(snapshots),
            keys,
        )

    def _record(self, sel: np.ndarray) -> Record:
        """The record of the games ``sel`` bool[G], with their distinct count if known."""
        if self.keys is None:
            return Record.of(self.outcomes[sel])
        distinct = len({k for k, s in zip(self.keys, sel) if s})
        return Record.of(self.outcomes[sel], distinct=distinct)

    def distinct_units(self, keys: Sequence[bytes] | None = None) -> np.ndarray:
        """int[U]: one opening of each distinct pair of games, two openings being the same
        unit when their games have the same ``keys`` (one per game; default :attr:`keys`;
        every opening when neither is known)."""
        keys = self.keys if keys is None else keys
        if keys is None:
            return np.unique(self.opening)
        games: dict[int, list[bytes]] = {}
        for o, k in zip(self.opening, keys):
            games.setdefault(int(o), []).append(k)
        units = {b"|".join(sorted(v)): o for o, v in games.items()}
        return np.array(list(units.values()), np.int64)

    @property
    def overall(self) -> Record:
        """A's record over all games; an opening's games are one correlated unit, so the
        score's interval counts the :attr:`Record.effective` games they are worth."""
        r = self._record(np.ones(len(self.outcomes), bool))
        if len(np.unique(self.opening)) == len(self.outcomes):
            return r
        pts = (self.outcomes.astype(np.float64) + 1.0) / 2.0
        effective = effective_games(pts, self.opening, len(self.distinct_units()))
        return dataclasses.replace(r, effective=effective)

    @property
    def as_first(self) -> Record:
        """A's record as player 0 (the side that moved first from the start position)."""
        return self._record(self.a_player == 0)

    @property
    def as_second(self) -> Record:
        return self._record(self.a_player == 1)

    @property
    def score(self) -> float:
        return self.overall.score

    def unit_points(self) -> np.ndarray:
        """float[n_openings]: A's points (win 1, draw 1/2) over the games of each opening."""
        pts = (self.outcomes.astype(np.float64) + 1.0) / 2.0
        return np.bincount(self.opening, weights=pts)

    def margin_stats(
        self, keys: Sequence[bytes] | None = None
    ) -> tuple[float, float, float] | None:
        """(mean, lo, hi) of A's final margin, a 95% Student's t interval over openings (the
        unit that respects the colour pairing; openings whose games repeat those of another
        count once, by ``keys`` as :meth:`distinct_units`), NaN bounds with fewer than two
        units; None without a score."""
        if self.margin is None:
            return None
        per = np.bincount(self.opening, weights=self.margin) / np.bincount(self.opening)
        per = per[self.distinct_units(keys)]
        mean = float(np.mean(self.margin))
        if len(per) < 2:
            return mean, float("nan"), float("nan")
        half = t_quantile_975(len(per) - 1) * float(np.std(per, ddof=1)) / math.sqrt(len(per))
        return mean, mean - half, mean + half

    def swapped(self) -> "MatchResult":
        """The same games seen from B's side."""
        return dataclasses.replace(
            self,
            outcomes=-self.outcomes,
            a_player=1 - self.a_player,
            margin=None if self.margin is None else -self.margin,
        )

    def to_dict(self) -> dict:
        """Plain-Python summary (records with rates and Wilson intervals, margin, mean plies)."""
        out = {name: getattr(self, name).to_dict() for name in ("overall", "as_first", "as_second")}
        m = self.margin_stats()
        out["margin"] = None if m is None else dict(zip(("mean", "lo", "hi"), m))
        out["mean_plies"] = float(np.mean(self.plies)) if len(self.plies) else float("nan")
        return out

    def __str__(self) -> str:
        lines = [
            f"A overall:   {self.overall}",
            f"A as first:  {self.as_first}",
            f"A as second: {self.as_second}",
        ]
        m = self.margin_stats()
        if m is not None:
            ci = "" if math.isnan(m[1]) else f" [{m[1]:+.2f}, {m[2]:+.2f}]"
            lines.append(f"A's margin:  {m[0]:+.2f}{ci}")
        return "\n".join(lines)


# ============================================================================ the game loop
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
    fingerprint: bool = False,
):
    """Play the games ``states`` [G] to the end in parallel (jit this) -> (final states, as
    each game's last move left them, summed rewards float32[G, 2]), and with ``snapshot``
    (``state -> bool[]``) each game's first state where it held (else its final one), and
    last with ``fingerprint`` (static) uint32[G, 2]: a hash of each game's actions (FNV-1a
    and a multiplicative hash of the actions played while it was live), equal for games
    played move for move alike.

    a_player: int32[G] A's player id. game_ids: int32[G] seeds each game's randomness (default
    ``arange(G)``, or ``arange(G/2)`` twice when ``paired``). The first ``opening_plies``
    steps play random moves; ``max_plies`` caps the loop. ``paired`` (static): game i and
    i + G/2 are one game with colours swapped, so each policy runs on the G/2 states where it
    moves (same keys and states, so the same moves up to batch-size-dependent rounding); a
    step where some pair has the same policy to move in both falls back to all G.
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
        states, _, t, _, _ = c
        live = jnp.any(~(states.terminated | states.truncated))
        return live if max_plies is None else live & (t < max_plies)

    def hashed(fp, states, action):
        """``fp`` uint32[G, 2] with ``action`` folded in where the game is live."""
        if not fingerprint:
            return fp
        live = ~(states.terminated | states.truncated)
        a = action.astype(jnp.uint32) + jnp.uint32(1)
        fnv = (fp[:, 0] ^ a) * jnp.uint32(16777619)
        mul = fp[:, 1] * jnp.uint32(2654435761) + a * jnp.uint32(40503)
        return jnp.where(live[:, None], jnp.stack([fnv, mul], axis=1), fp)

    def body(c):
        states, total, t, (snaps, taken), fp = c
        k_t = jax.random.fold_in(key, t)
        keys = jax.vmap(lambda i: jax.random.split(jax.random.fold_in(k_t, i)))(ids)  # [G, 2, key]
        k_pol, k_rand = keys[:, 0], keys[:, 1]
        action = choose(states, k_pol)
        act_r = jax.vmap(random_action)(k_rand, states.legal_action_mask)
        action = jnp.where(t < opening_plies, act_r, action).astype(jnp.int32)
        fp = hashed(fp, states, action)
        live = ~(states.terminated | states.truncated)
        stepped = jax.vmap(env.step)(states, action)  # a finished game's step: zero rewards
        total = total + stepped.rewards
        states = _where_games(live, stepped, states)  # a finished game keeps its last rewards
        return states, total, t + 1, keep(snaps, taken, states), fp

    zeros = jnp.zeros((g, env.num_players), jnp.float32)
    snapped = keep(states, jnp.zeros(g, bool), states) if snapshot is not None else ((), ())
    fp0 = jnp.tile(jnp.array([2166136261, 0], jnp.uint32), (g, 1)) if fingerprint else ()
    init = (states, zeros, jnp.int32(0), snapped, fp0)
    states, total, _, (snaps, taken), fp = jax.lax.while_loop(cond, body, init)
    out = (states, total)
    if snapshot is not None:
        out += (_where_games(taken, snaps, states),)
    return out + (fp,) if fingerprint else out


def _where_games(mask: jax.Array, a, b):
    """Per game (leaves [G, ...]): ``a``'s where ``mask`` bool[G], else ``b``'s."""
    pick = lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y)  # noqa: E731
    return jax.tree_util.tree_map(pick, a, b)


def _start(env: Env, key: jax.Array, ids: jax.Array):
    """(start states of games ``ids``, the loop's key)."""
    key_init, key_play = jax.random.split(key)
    return jax.vmap(env.init)(jax.vmap(lambda i: jax.random.fold_in(key_init, i))(ids)), key_play


def _collect(env: Env, out, final_states: bool, snapshot: bool, fingerprint: bool) -> dict:
    """What a :class:`MatchResult` needs from a :func:`play_from` call's output."""
    final, total, *rest = out
    snaps = rest[:1] if snapshot else []
    return dict(
        fingerprints=rest[-1] if fingerprint else None,
        total=total,
        plies=final.step_count,
        score=jax.vmap(env.score)(final) if env.has_score() else None,
        states=final if final_states else None,
        snapshots=snaps[0] if snaps else None,
    )


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
    """:func:`play_from` of ``len(a_player)`` games from the start (jit this) -> (summed
    rewards float32[G, 2], plies int32[G], and the snapshots with ``snapshot``)."""
    ids = jnp.arange(a_player.shape[0], dtype=jnp.int32) if game_ids is None else game_ids
    states, key_play = _start(env, key, ids)
    states, total, *snaps = play_from(
        policy_a, policy_b, env, states, a_player, key_play, opening_plies, max_plies, ids,
        snapshot=snapshot,
    )  # fmt: skip
    return (total, states.step_count, *snaps)


@functools.lru_cache(maxsize=32)
def _cached(build, *args):
    return build(*args)


def _compiled(build, *args):
    """``build(*args)`` cached, so repeated matches compile once (unhashable: built afresh)."""
    try:
        return _cached(build, *args)
    except TypeError:  # an unhashable policy object
        return build(*args)


# ============================================================================ entry points
def arena_layout(n_games: int) -> tuple[jax.Array, jax.Array]:
    """(a_player, game_ids) int32[n_games] of :func:`arena`: A first in the first half
    (rounded up), game k of each half sharing its random numbers."""
    first = (n_games + 1) // 2
    i = jnp.arange(n_games, dtype=jnp.int32)
    return jnp.where(i < first, 0, 1).astype(jnp.int32), jnp.where(i < first, i, i - first)


def _build(policy_a, policy_b, env, paired, max_plies, final_states, snapshot, fingerprint):
    """Jitted ``run(key, opening_plies, states, a_player, ids)``: the games ``ids`` int32[G]
    from the start, A as ``a_player`` int32[G], or (``paired``) every one of the G / 2
    opening ``states`` twice, as :func:`play_match` (compiled once per number of games)."""

    def run(key, opening_plies, states, a_player, ids):
        if paired:
            states = jax.tree_util.tree_map(lambda x: jnp.concatenate([x, x]), states)
        else:
            states, key = _start(env, key, ids)
        out = play_from(
            policy_a, policy_b, env, states, a_player, key, opening_plies, max_plies, ids,
            paired=paired, snapshot=snapshot, fingerprint=fingerprint,
        )  # fmt: skip
        return _collect(env, out, final_states, snapshot is not None, fingerprint)

    return jax.jit(run)


def check_games(
    count: int, batch: int | None = None, name: str = "n_games", *, games_each: int = 1
) -> int:
    """The number of games played at once for ``count`` games (or openings of ``games_each``
    games) in batches of ``batch`` (None: :data:`BATCH`); a one-line ValueError naming
    ``name`` (or ``batch``) for a count that is not an integer in [1, the most that make
    :data:`MAX_GAMES` games]."""
    count = operator.index(count) if isinstance(count, np.integer) else count
    check_int(name, count)
    most = MAX_GAMES // games_each
    if count > most:
        what = "games" if games_each == 1 else f"openings ({games_each} games each)"
        fail(name, count, f"at most {most:,} {what} in one match (each game's record is kept "
             "in memory); play several seeds instead")  # fmt: skip
    batch = BATCH if batch is None else batch
    check_int("batch", operator.index(batch) if isinstance(batch, np.integer) else batch)
    return min(int(batch), count * games_each)


def _in_batches(run, n: int, batch: int, args, paired: bool = False) -> dict:
    """``run(*args(lo, hi))`` over ``[0, n)`` in pieces of at most ``batch``, their outputs
    (leaves [G, ...]) joined along the games on the host; ``paired``: a piece's games are its
    openings with A first, then the same with A second, and join as one such whole."""
    parts = [jax.device_get(run(*args(lo, min(lo + batch, n)))) for lo in range(0, n, batch)]
    if len(parts) == 1:
        return parts[0]

    def join(*x):
        if not paired:
            return np.concatenate(x)
        halves = [np.split(a, 2) for a in x]
        return np.concatenate([h[0] for h in halves] + [h[1] for h in halves])

    return jax.tree_util.tree_map(join, *parts)


def arena(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    n_games: int,
    key: jax.Array,
    opening_plies: int = 0,
    max_plies: int | None = None,
    *,
    final_states: bool = False,
    snapshot: Callable[[GameState], jax.Array] | None = None,
    fingerprint: bool = False,
    batch: int | None = None,
) -> MatchResult:
    """``n_games`` of A against B from the start, colours as :func:`arena_layout`, so for
    even ``n_games`` ``arena(b, a)`` plays the games of ``arena(a, b).swapped()`` (the same
    records, each half of the games in the other's place); both policies run on every game.
    ``opening_plies`` random plies first; ``max_plies`` cap (unfinished games are draws);
    ``final_states`` / ``snapshot``: kept in the :class:`MatchResult` (A's side);
    ``fingerprint``: its records count the distinct games (:attr:`MatchResult.keys`);
    ``batch``: at most this many games at once (default :data:`BATCH`), the same games
    whatever it is (each game's random numbers follow its id).
    """
    batch = check_games(n_games, batch)
    if opening_plies < 0:
        raise ValueError(f"opening_plies must be >= 0, got {opening_plies}")
    args = (policy_a, policy_b, env, False, max_plies, final_states, snapshot, fingerprint)
    run = _compiled(_build, *args)
    a_player, ids = arena_layout(n_games)
    plies = jnp.int32(opening_plies)
    out = _in_batches(
        run, n_games, batch, lambda lo, hi: (key, plies, None, a_player[lo:hi], ids[lo:hi])
    )
    return MatchResult.of(a_player, ids, **out)


def play_match(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    opening_states: GameState,
    key: jax.Array,
    max_plies: int | None = None,
    *,
    final_states: bool = False,
    snapshot: Callable[[GameState], jax.Array] | None = None,
    fingerprint: bool = False,
    batch: int | None = None,
) -> MatchResult:
    """Every opening of ``opening_states`` [n] twice, A as player 0 (game i) and as player 1
    (game n + i), both with the same random numbers; each policy runs only where it moves.
    ``key`` feeds the loop directly; ``max_plies``, ``final_states``, ``snapshot``,
    ``fingerprint``: as for :func:`arena` (the keys include each game's opening position);
    ``batch``: at most this many games at once (both games of an opening together: an odd
    batch plays one game fewer, a batch of 1 two), the same games whatever it is.
    """
    n = num_games(opening_states)
    pairs = max(1, check_games(n, batch, "openings", games_each=2) // 2)
    done = np.asarray(opening_states.terminated) | np.asarray(opening_states.truncated)
    if done.any():
        raise ValueError(f"openings {np.flatnonzero(done).tolist()} are finished games")
    args = (policy_a, policy_b, env, True, max_plies, final_states, snapshot, fingerprint)
    run = _compiled(_build, *args)
    states = jax.tree_util.tree_map(np.asarray, opening_states)

    def piece(lo, hi):
        ids = jnp.tile(jnp.arange(lo, hi, dtype=jnp.int32), 2)
        a_player = jnp.repeat(jnp.arange(2, dtype=jnp.int32), hi - lo)
        chunk = jax.tree_util.tree_map(lambda x: jnp.asarray(x[lo:hi]), states)
        return key, jnp.int32(0), chunk, a_player, ids

    out = _in_batches(run, n, pairs, piece, paired=True)
    a_player = np.repeat(np.array([0, 1], np.int32), n)
    starts = position_keys(opening_states) * 2 if fingerprint else None
    opening = np.tile(np.arange(n, dtype=np.int32), 2)
    return MatchResult.of(a_player, opening, **out, start_keys=starts)


def evaluate_vs(
    env: Env, policy: Policy, opponent: Policy, key: jax.Array, n_games: int
) -> dict[str, jax.Array]:
    """``policy`` against ``opponent``, ``n_games`` as each side, jittable (for training) ->
    float32[] rates ``{win,draw,loss}_{first,second}`` (policy as player 0, 1)."""
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


def round_robin(
    policies: dict[str, Policy], env: Env, n_games: int, key: jax.Array, opening_plies: int = 0
) -> list[Match]:
    """An :func:`arena` of ``n_games`` per pair of ``policies`` -> one
    :class:`~jaxgames.evaluation.elo.Match` per unordered pair, in order."""
    names = list(policies)
    if len(names) < 2:
        raise ValueError(f"a round robin needs at least 2 policies, got {names}")
    out = []
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            key_ij = jax.random.fold_in(key, i * len(names) + j)
            r = arena(policies[a], policies[b], env, n_games, key_ij, opening_plies=opening_plies)
            out.append(Match(a, b, r.overall.wins, r.overall.draws, r.overall.losses))
    return out

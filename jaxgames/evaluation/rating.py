"""Ratings on a ladder of fixed opponents: a fixed opening set, match play, Elo with bootstrap
intervals.

    ladder = load_ladder("reversi8")            # jaxgames/evaluation/ladders/reversi8.json
    report = rate_policy(policy, env, ladder, lambda spec: make_opponent(spec, env), key=key)
    print(report)                               # W/D/L per rung and colour, Elo [95% interval]

    ladder = build_ladder(env, ["random", "greedy", "alphabeta:2", ...], make_rung,
                          n_openings=200, plies=4)        # fits the rungs; save_ladder(ladder)

**Openings.** :func:`openings` draws candidate positions by playing ``plies`` uniformly random
plies from the start (candidate k uses ``fold_in(PRNGKey(seed), k)``), drops finished games
and repeated positions (same observation and player to move) and keeps the first ``n``: a
deterministic function of (game, n, plies, seed), and the openings for ``n`` are a prefix of
those for any larger ``n``. :func:`play_match` plays every opening twice, A as player 0 (game
i) and as player 1 (game n + i), with the same random numbers in both games (the game loop of
:mod:`~jaxgames.evaluation.arena`, all games in one jitted ``while_loop``).

**Model.** Bradley-Terry on the Elo scale, ``s = 400 / ln 10`` (about 173.7 Elo per nat)::

    P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)) = sigma((R_i - R_j) / s)

A draw is half a win and half a loss, so a pairing enters only through i's points
``S_ij = W + D / 2`` out of ``N_ij`` games::

    log L(R) = sum over pairings  S_ij log sigma((R_i - R_j) / s)
                                  + (N_ij - S_ij) log sigma((R_j - R_i) / s)

**Ladder fit** (:func:`rate_ladder`): maximise ``log L`` over the rung ratings with the anchor
held at 0 (``random = 0``), after adding ``prior`` virtual games per pairing scored as draws
(``S += prior / 2``, ``N += prior``; default 1). This penalised maximum likelihood keeps every
rating finite when a pairing is a whitewash; its pull is small where there is information
(a 400-game pairing at 300 Elo moves by about 1 Elo). Fitted by
:func:`~jaxgames.evaluation.elo.fit_elo` (Newton's method with the exact Hessian, steps capped
at 1 nat), all bootstrap resamples in one call.

A whitewash carries no information about the size of its gap: with only whitewashes linking
two rungs, their gap is set by the prior (``400 log10((N + 1/2) / (1/2))``, about 1160 Elo for
400 games) and their bootstrap interval is empty (every resample is the same whitewash). Build
ladders whose neighbouring rungs score between about 5% and 95% against each other
(:func:`build_ladder` logs pairings outside 3%..97%).

**Agent fit** (:func:`rate_against_ladder`): the rung ratings ``R_j`` held fixed, the agent's
``R`` alone maximises ``log L`` (no prior): the root of ``sum_j S_j - N_j sigma((R - R_j) / s)``
(decreasing in R, found by bisection). It is finite iff ``0 < sum S < sum N``.

**Bootstrap intervals.** The resampling unit is an opening: its two games, one with each
colour, are correlated (a lopsided opening tends to favour the same colour), so they are drawn
together. In each of ``n_boot`` resamples (default 1000, fixed seed) the units of every pairing
are drawn with replacement (a multinomial over the pairing's histogram of unit scores 0, 1/2,
.., 2) and the model is refitted; the 95% interval is the percentile interval (2.5% and 97.5%
order statistics) of the refits; the point estimate is the fit to the data. For an agent,
``propagate=True`` (the default) pairs its resample b with the ladder's own resample b (rebuilt
deterministically from the games stored in the ladder), so the interval also carries the
rungs' uncertainty relative to ``random = 0``; ``propagate=False`` varies only the agent's games
(the right interval when comparing two agents rated on the same ladder).

**Bounds.** An agent that won every game has MLE ``+inf``: it is reported as a lower bound
``>= x``, where x is the rating at which winning every game has probability 1 - ci = 5%,
``prod_j sigma((x - R_j) / s) ** N_j = 0.05`` (ratings below x are rejected at 5%, one-sided):
``elo = lo = x``, ``hi = inf``, ``bound = "lower"``. Symmetrically an agent that lost every game
gets ``<= x`` (``bound = "upper"``). Bootstrap resamples without a loss (or a win) refit to
``+-inf``, so a near-perfect agent may get ``hi = inf``; an estimate outside the ratings of
the rungs it played is flagged ``extrapolated`` (it rests on the logistic model alone).

**Ladder files.** :class:`Ladder` (rung specs, their Elo and intervals, the games of every
pairing as unit-score histograms and per-colour W/D/L, opening parameters and digest, fit
parameters, date, machine, command) is stored as JSON at
``jaxgames/evaluation/ladders/<game_key>.json`` (:func:`game_key`: ``tic_tac_toe``,
``reversi6``, ``reversi8``, ``animal_shogi``), shipped as package data.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import inspect
import json
import math
import os
import re
import sys
import time
import warnings
from typing import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState, Policy, play_random_plies
from jaxgames.evaluation.arena import Record, game_outcomes, play_from, wilson_interval
from jaxgames.evaluation.elo import ELO_PER_NAT, fit_elo, sigmoid
from jaxgames.provenance import git_version, machine_description

#: version of the ladder JSON layout
LADDER_FORMAT = 1
_Z95 = 1.959963984540054
_CANDIDATES_PER_ROUND = 256


# ============================================================================ openings
@functools.lru_cache(maxsize=16)
def _playouts(env: Env, batch: int):
    """Jitted ``(key, first, plies) -> states[batch]``: candidate k = first + i plays ``plies``
    uniformly random plies from the start with the key ``fold_in(key, k)``."""

    def one(key, plies):
        k_init, k_play = jax.random.split(key)
        return play_random_plies(env, env.init(k_init), k_play, plies)

    def run(key, first, plies):
        ks = jax.vmap(lambda i: jax.random.fold_in(key, i))(first + jnp.arange(batch))
        return jax.vmap(one, in_axes=(0, None))(ks, plies)

    return jax.jit(run)


def position_keys(states: GameState) -> list[bytes]:
    """One byte string per game of a batch identifying its position: the observation (which
    is from the mover's view) and the player to move. Equal keys = the same opening."""
    parts = [np.asarray(states.observation), np.asarray(states.current_player)]
    rows = [p.reshape(p.shape[0], -1) for p in parts]
    return [b"".join(r[i].tobytes() for r in rows) for i in range(rows[0].shape[0])]


def _take(states, idx):
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[np.asarray(idx)], states)


def num_games(states) -> int:
    """Leading (batch) size of a batched state."""
    return int(np.shape(states.current_player)[0])


def openings(env: Env, n: int, plies: int, seed: int = 0, *, max_stall: int = 8) -> GameState:
    """``n`` distinct unfinished positions, each reached by ``plies`` uniformly random plies
    from the start: a batched state (leading axis ``n``, numpy leaves).

    Deterministic in (env, n, plies, seed); the result for ``n`` is a prefix of the result for
    any larger ``n``. When the game has fewer than ``n`` distinct unfinished positions at that
    depth (none new in ``max_stall`` rounds of 256 candidates), the distinct ones are repeated
    in order to fill ``n`` and a warning says so (tic-tac-toe has 72 positions after 2 plies).
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"need n >= 1 openings, got {n!r}")
    if isinstance(plies, bool) or int(plies) != plies or plies < 0:
        raise ValueError(f"need plies >= 0, got {plies!r}")
    n, plies = int(n), int(plies)
    run = _playouts(env, _CANDIDATES_PER_ROUND)
    base = jax.random.PRNGKey(seed)
    seen: set[bytes] = set()
    rounds, chosen = [], []  # chosen: (round, index)
    stall = 0
    while len(chosen) < n and stall < max_stall:
        r = len(rounds)
        states = jax.device_get(run(base, jnp.int32(r * _CANDIDATES_PER_ROUND), jnp.int32(plies)))
        rounds.append(states)
        done = np.asarray(states.terminated) | np.asarray(states.truncated)
        new = 0
        for i, k in enumerate(position_keys(states)):
            if done[i] or k in seen:
                continue
            seen.add(k)
            chosen.append((r, i))
            new += 1
            if len(chosen) == n:
                break
        stall = 0 if new else stall + 1
    if not chosen:
        raise ValueError(f"every {env.name} game is over within {plies} random plies")
    if len(chosen) < n:
        warnings.warn(
            f"{env!r} has only {len(chosen)} distinct unfinished positions after {plies} random "
            f"plies (found); repeating them to make {n} openings",
            stacklevel=2,
        )
        chosen = [chosen[i % len(chosen)] for i in range(n)]
    pool = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *rounds)
    return _take(pool, [r * _CANDIDATES_PER_ROUND + i for r, i in chosen])


def openings_digest(states: GameState) -> str:
    """sha256 (hex, first 16 chars) of a batched state's arrays: fingerprints an opening set."""
    h = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(states):
        a = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


# ============================================================================ match play
def _reversi_margin(state) -> jax.Array:
    """Disc difference (player 0 minus player 1) of one reversi state."""
    count = lambda b: jnp.sum(jax.lax.population_count(b)).astype(jnp.float32)  # noqa: E731
    d = count(state.mover) - count(state.opponent)
    return jnp.where(state.current_player == 0, d, -d)


#: game name -> ``fn(state) -> float32[]`` final margin from player 0's side
MARGINS: dict[str, Callable] = {"reversi": _reversi_margin}


def margin_fn(env: Env) -> Callable | None:
    """The game's final-margin function (``state -> float32[]``, player 0's side), or None.
    Reversi: discs of player 0 minus discs of player 1 (raw counts: empty squares go to
    nobody)."""
    return MARGINS.get(env.name)


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """Outcome of :func:`play_match`, from policy A's side. Game i and game n + i are opening
    i with A as player 0 and as player 1.

    outcomes: int8[2n] +1 A won, 0 draw, -1 A lost; a_player: int32[2n] A's player id;
    opening: int32[2n] opening index (the bootstrap unit); plies: int32[2n] final ply counts
    (opening plies included); margin: float32[2n] final margin from A's side (reversi: disc
    difference) or None.
    """

    outcomes: np.ndarray
    a_player: np.ndarray
    opening: np.ndarray
    plies: np.ndarray
    margin: np.ndarray | None = None

    def _record(self, sel) -> Record:
        return Record.of(self.outcomes[sel])

    @property
    def overall(self) -> Record:
        return self._record(slice(None))

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

    def margin_stats(self) -> tuple[float, float, float] | None:
        """(mean, lo, hi) of A's final margin: 95% normal interval with the openings as units
        (the mean of each opening's games, so the colour pairing is respected); None when the
        game has no margin."""
        if self.margin is None:
            return None
        per = np.bincount(self.opening, weights=self.margin) / np.bincount(self.opening)
        mean = float(np.mean(self.margin))
        if len(per) < 2:
            return mean, float("nan"), float("nan")
        half = _Z95 * float(np.std(per, ddof=1)) / math.sqrt(len(per))
        return mean, mean - half, mean + half

    def swapped(self) -> "MatchResult":
        """The same games seen from B's side."""
        return MatchResult(
            -self.outcomes,
            1 - self.a_player,
            self.opening,
            self.plies,
            None if self.margin is None else -self.margin,
        )

    def to_dict(self) -> dict:
        out = {}
        for name in ("overall", "as_first", "as_second"):
            r = getattr(self, name)
            out[name] = dict(wins=r.wins, draws=r.draws, losses=r.losses, score=r.score)
            out[name]["score_ci"] = r.ci("score")
        m = self.margin_stats()
        out["margin"] = None if m is None else dict(zip(("mean", "lo", "hi"), m))
        out["mean_plies"] = float(np.mean(self.plies))
        return out

    def __str__(self) -> str:
        lines = [
            f"A overall:   {self.overall}",
            f"A as first:  {self.as_first}",
            f"A as second: {self.as_second}",
        ]
        m = self.margin_stats()
        if m is not None:
            lines.append(f"A's margin:  {m[0]:+.2f} [{m[1]:+.2f}, {m[2]:+.2f}]")
        return "\n".join(lines)


def _build_match(policy_a: Policy, policy_b: Policy, env: Env, n: int, max_plies: int | None):
    a_player = jnp.concatenate([jnp.zeros(n, jnp.int32), jnp.ones(n, jnp.int32)])
    ids = jnp.concatenate([jnp.arange(n, dtype=jnp.int32)] * 2)
    margin = margin_fn(env)

    def run(states, key):
        both = jax.tree_util.tree_map(lambda x: jnp.concatenate([x, x]), states)
        final, total = play_from(
            policy_a, policy_b, env, both, a_player, key, 0, max_plies, ids, paired=True
        )
        m0 = jax.vmap(margin)(final) if margin is not None else None
        return total, final.step_count, m0

    return jax.jit(run)


@functools.lru_cache(maxsize=16)
def _build_match_cached(policy_a, policy_b, env, n, max_plies):
    return _build_match(policy_a, policy_b, env, n, max_plies)


def play_match(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    opening_states: GameState,
    key: jax.Array,
    max_plies: int | None = None,
) -> MatchResult:
    """Play every opening of ``opening_states`` (a batched state, leading axis n) twice, A as
    player 0 and as player 1, all 2n games at once in one jitted loop (compiled once per
    (policies, env, n, max_plies)). Both games of an opening get the same random numbers
    (``key`` feeds the game loop directly: at loop step t the mover's policy gets a key from
    (key, t, opening index)). Each policy is evaluated only on the games where it moves.
    ``max_plies``: optional cap on plies after the opening (unfinished games are draws).
    """
    n = num_games(opening_states)
    done = np.asarray(opening_states.terminated) | np.asarray(opening_states.truncated)
    if done.any():
        raise ValueError(f"openings {np.flatnonzero(done).tolist()} are finished games")
    try:
        run = _build_match_cached(policy_a, policy_b, env, n, max_plies)
    except TypeError:  # an unhashable policy object
        run = _build_match(policy_a, policy_b, env, n, max_plies)
    states = jax.tree_util.tree_map(jnp.asarray, opening_states)
    total, plies, m0 = run(states, key)
    total = np.asarray(total)
    a_np = np.repeat(np.array([0, 1], np.int32), n)
    outcomes = game_outcomes(total, a_np)
    margin = None
    if m0 is not None:
        m0 = np.asarray(m0, np.float32)
        margin = np.where(a_np == 0, m0, -m0)
    opening = np.tile(np.arange(n, dtype=np.int32), 2)
    return MatchResult(outcomes, a_np, opening, np.asarray(plies), margin)


# ============================================================================ pairings
def _record_json(r: Record | None):
    return None if r is None else [r.wins, r.draws, r.losses]


def _record_from(x) -> Record | None:
    return None if x is None else Record(*(int(v) for v in x))


@dataclasses.dataclass(frozen=True)
class Pairing:
    """The games of ``a`` against ``b``, from ``a``'s side, in bootstrap units.

    units: ``units[k]`` = number of units in which ``a`` scored ``k / 2`` points; a unit is one
        opening's two games (5 bins, from :meth:`from_match`) or one game (3 bins).
    as_first / as_second: a's :class:`Record` as player 0 / player 1 (None if unknown).
    margin: (mean, lo, hi) of a's final margin (reversi discs), or None.
    seconds: wall time the games took, if known.
    """

    a: str
    b: str
    units: tuple[int, ...]
    as_first: Record | None = None
    as_second: Record | None = None
    margin: tuple[float, float, float] | None = None
    seconds: float | None = None

    def __post_init__(self):
        u = tuple(int(c) for c in self.units)
        if len(u) < 3 or len(u) % 2 == 0 or min(u) < 0 or sum(u) == 0:
            raise ValueError(f"bad unit histogram {self.units!r} for {self.a} vs {self.b}")
        if self.a == self.b:
            raise ValueError(f"a pairing needs two different players, got {self.a!r} twice")
        object.__setattr__(self, "units", u)

    @property
    def unit_games(self) -> int:
        return (len(self.units) - 1) // 2

    @property
    def games(self) -> int:
        return self.unit_games * sum(self.units)

    @property
    def points(self) -> float:
        return sum(k * c for k, c in enumerate(self.units)) / 2.0

    @property
    def score(self) -> float:
        return self.points / self.games

    @property
    def overall(self) -> Record | None:
        if self.as_first is None or self.as_second is None:
            return None
        f, s = self.as_first, self.as_second
        return Record(f.wins + s.wins, f.draws + s.draws, f.losses + s.losses)

    def score_ci(self) -> tuple[float, float]:
        """95% Wilson interval of the score (games treated as independent)."""
        return wilson_interval(self.points, self.games)

    @classmethod
    def from_match(
        cls, a: str, b: str, match: MatchResult, seconds: float | None = None
    ) -> "Pairing":
        """Units = openings (both colours' games of an opening together)."""
        per = np.bincount(match.opening)
        if per.min() != per.max():
            raise ValueError("every opening must have the same number of games")
        k = np.rint(2 * match.unit_points()).astype(int)
        units = np.bincount(k, minlength=2 * int(per[0]) + 1)
        m = match.margin_stats()
        return cls(
            a,
            b,
            tuple(int(c) for c in units),
            match.as_first,
            match.as_second,
            None if m is None else tuple(round(float(v), 4) for v in m),
            seconds,
        )

    @classmethod
    def from_counts(cls, a: str, b: str, wins: int, draws: int, losses: int) -> "Pairing":
        """Units = single games (no colour or opening information)."""
        return cls(a, b, (int(losses), int(draws), int(wins)))

    def swapped(self) -> "Pairing":
        m = self.margin
        return Pairing(
            self.b,
            self.a,
            self.units[::-1],
            None if self.as_first is None else _flip(self.as_first),
            None if self.as_second is None else _flip(self.as_second),
            None if m is None else (-m[0], -m[2], -m[1]),
            self.seconds,
        )

    def resample_points(self, rng: np.random.Generator, n_boot: int) -> np.ndarray:
        """float[n_boot]: a's points in ``n_boot`` bootstrap resamples of the units."""
        u = np.asarray(self.units, np.float64)
        counts = rng.multinomial(int(u.sum()), u / u.sum(), size=n_boot)
        return counts @ (np.arange(len(u)) / 2.0)

    def to_json(self) -> dict:
        return dict(
            a=self.a,
            b=self.b,
            units=list(self.units),
            as_first=_record_json(self.as_first),
            as_second=_record_json(self.as_second),
            margin=None if self.margin is None else list(self.margin),
            seconds=self.seconds,
        )

    @classmethod
    def from_json(cls, d: dict) -> "Pairing":
        m = d.get("margin")
        return cls(
            d["a"],
            d["b"],
            tuple(d["units"]),
            _record_from(d.get("as_first")),
            _record_from(d.get("as_second")),
            None if m is None else tuple(float(v) for v in m),
            d.get("seconds"),
        )


def _flip(r: Record) -> Record:
    return Record(r.losses, r.draws, r.wins)


# ============================================================================ fitting
def _percentile_interval(draws: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Order-statistic percentile interval along axis 0 (safe with +-inf draws)."""
    s = np.sort(draws, axis=0)
    b = s.shape[0]
    lo_i = max(int(math.ceil((1 - ci) / 2 * b)) - 1, 0)
    hi_i = min(int(math.ceil((1 + ci) / 2 * b)) - 1, b - 1)
    return s[lo_i], s[hi_i]


@dataclasses.dataclass(frozen=True)
class Rating:
    """An Elo estimate with its interval; unpacks as ``elo, lo, hi = rating``.

    bound: None, ``"lower"`` (won every game: ``elo = lo`` is a one-sided 95% lower bound,
    ``hi = inf``) or ``"upper"`` (lost every game). extrapolated: the estimate lies outside the
    ratings of the rungs played (it rests on the logistic model alone).
    """

    elo: float
    lo: float
    hi: float
    bound: str | None = None
    extrapolated: bool = False

    def __iter__(self):
        return iter((self.elo, self.lo, self.hi))

    def __str__(self) -> str:
        if self.bound == "lower":
            return f">= {self.elo:.0f} (won every game)"
        if self.bound == "upper":
            return f"<= {self.elo:.0f} (lost every game)"

        def f(x):
            return f"{x:.0f}" if math.isfinite(x) else ("inf" if x > 0 else "-inf")

        return f"{f(self.elo)} [{f(self.lo)}, {f(self.hi)}]" + (
            " (extrapolated)" if self.extrapolated else ""
        )

    def to_json(self) -> dict:
        def f(x):
            return float(x) if math.isfinite(x) else None

        return dict(
            elo=f(self.elo),
            lo=f(self.lo),
            hi=f(self.hi),
            bound=self.bound,
            extrapolated=self.extrapolated,
        )

    @classmethod
    def from_json(cls, d: dict) -> "Rating":
        def f(x, inf):
            return inf if x is None else float(x)

        return cls(
            f(d["elo"], math.inf if d.get("bound") == "lower" else -math.inf),
            f(d["lo"], -math.inf),
            f(d["hi"], math.inf),
            d.get("bound"),
            bool(d.get("extrapolated", False)),
        )


@dataclasses.dataclass(frozen=True)
class LadderFit:
    """Point fit and bootstrap refits of a set of pairings. elo: float[n], draws: float[B, n]
    (columns in ``names`` order)."""

    names: tuple[str, ...]
    elo: np.ndarray
    draws: np.ndarray
    ci: float

    def ratings(self) -> dict[str, Rating]:
        lo, hi = _percentile_interval(self.draws, self.ci)
        return {
            n: Rating(float(self.elo[k]), float(lo[k]), float(hi[k]))
            for k, n in enumerate(self.names)
        }


def as_pairings(
    results: "Sequence[Pairing] | Mapping[tuple[str, str], Pairing | MatchResult]",
) -> list[Pairing]:
    """Pairings from a list of :class:`Pairing` or a ``{(a, b): MatchResult or Pairing}``
    mapping (results of a against b)."""
    if isinstance(results, Mapping):
        return [
            r if isinstance(r, Pairing) else Pairing.from_match(a, b, r)
            for (a, b), r in results.items()
        ]
    return list(results)


def fit_ladder(
    pairings: "Sequence[Pairing] | Mapping[tuple[str, str], Pairing | MatchResult]",
    anchor: str = "random",
    prior: float = 1.0,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
    names: Sequence[str] | None = None,
) -> LadderFit:
    """Bradley-Terry fit of ``pairings`` (anchor at 0) plus ``n_boot`` bootstrap refits (units
    resampled within each pairing, ``numpy.random.default_rng(seed)``). ``names``: the player
    order (default: order of first appearance). ``pairings`` may also be a mapping, see
    :func:`as_pairings`."""
    pairings = as_pairings(pairings)
    if not pairings:
        raise ValueError("no pairings to fit")
    if prior <= 0:
        raise ValueError(f"prior must be > 0 (virtual draws per pairing), got {prior}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    if names is None:
        names = list(dict.fromkeys(x for p in pairings for x in (p.a, p.b)))
    names = list(names)
    idx = {n: k for k, n in enumerate(names)}
    missing = {x for p in pairings for x in (p.a, p.b)} - set(idx)
    if missing:
        raise ValueError(f"pairings name players {sorted(missing)} not among {names}")
    if anchor not in idx:
        raise ValueError(f"anchor {anchor!r} is not among the players {names}")
    pi = np.array([idx[p.a] for p in pairings])
    pj = np.array([idx[p.b] for p in pairings])
    games = np.array([p.games for p in pairings], np.float64)
    point = np.array([[p.points for p in pairings]])
    elo = fit_elo(names, pi, pj, point, games, idx[anchor], prior)[0]
    rng = np.random.default_rng(seed)
    boot = np.stack([p.resample_points(rng, n_boot) for p in pairings], axis=1)
    draws = fit_elo(names, pi, pj, boot, games, idx[anchor], prior)
    return LadderFit(tuple(names), elo, draws, ci)


def rate_ladder(
    pairings: "Sequence[Pairing] | Mapping[tuple[str, str], Pairing | MatchResult]",
    anchor: str = "random",
    prior: float = 1.0,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Rating]:
    """``{rung: Rating(elo, lo, hi)}`` from the rungs' pairings: penalised Bradley-Terry MLE
    anchored at ``anchor = 0``, percentile bootstrap intervals (module docstring)."""
    return fit_ladder(pairings, anchor, prior, n_boot, seed, ci).ratings()


def _solve_agent(points: np.ndarray, games: np.ndarray, rung_elo: np.ndarray) -> np.ndarray:
    """MLE of the agent's Elo: points float[B], games float[R], rung_elo float[B, R] ->
    float[B] (+inf with no point lost, -inf with no point won). Bisection."""
    total = games.sum()
    lo = rung_elo.min(1) - 6000.0
    hi = rung_elo.max(1) + 6000.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        expected = (games * sigmoid((mid[:, None] - rung_elo) / ELO_PER_NAT)).sum(1)
        up = points > expected
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    r = 0.5 * (lo + hi)
    r = np.where(points >= total, np.inf, r)
    return np.where(points <= 0, -np.inf, r)


def _bound(games: np.ndarray, rung_elo: np.ndarray, alpha: float, won: bool) -> float:
    """Rating x at which a clean sweep (every game won if ``won``, else lost) has probability
    ``alpha``: the one-sided (1 - alpha) bound for an agent with that sweep."""
    sign = 1.0 if won else -1.0

    def log_p(x):  # log P(sweep | x), increasing in sign * x
        z = sign * (x - rung_elo) / ELO_PER_NAT
        return float(np.sum(games * -np.logaddexp(0.0, -z)))

    lo, hi = rung_elo.min() - 6000.0, rung_elo.max() + 6000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (log_p(mid) > math.log(alpha)) == won:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def rate_against_ladder(
    results: Mapping[str, "Pairing | MatchResult"],
    ladder: "Ladder | LadderFit | Mapping[str, float]",
    propagate: bool = True,
    n_boot: int | None = None,
    seed: int = 0,
    ci: float = 0.95,
) -> Rating:
    """One agent's Elo from its results against rungs (``{rung spec: MatchResult or Pairing
    with the agent as a}``), with the rungs' ratings held fixed.

    ``ladder``: a :class:`Ladder` or :class:`LadderFit` (rung ratings and bootstrap draws), or
    a plain ``{rung: elo}`` mapping (then nothing to propagate). ``propagate``: also resample
    the rung ratings (draw b of the ladder's bootstrap with resample b of the agent's games);
    ``n_boot`` defaults to the ladder's number of draws (1000 for a plain mapping). See the
    module docstring for the bounds reported when the agent won or lost every game.
    """
    if not results:
        raise ValueError("no results to rate")
    if isinstance(ladder, Ladder):
        ladder = ladder.fit()
    if isinstance(ladder, LadderFit):
        elos = dict(zip(ladder.names, ladder.elo))
        draws = ladder.draws
        col = {n: k for k, n in enumerate(ladder.names)}
    else:
        elos, draws, col = {k: float(v) for k, v in ladder.items()}, None, {}
        propagate = False
    unknown = sorted(set(results) - set(elos))
    if unknown:
        raise ValueError(f"results against {unknown}, which are not rungs of the ladder")
    rungs = list(results)
    pairs = [
        r if isinstance(r, Pairing) else Pairing.from_match("<agent>", rung, r)
        for rung, r in results.items()
    ]
    games = np.array([p.games for p in pairs], np.float64)
    points = np.array([p.points for p in pairs])
    e = np.array([elos[r] for r in rungs], np.float64)
    if n_boot is None:
        n_boot = draws.shape[0] if draws is not None else 1000
    rng = np.random.default_rng(seed)
    boot = np.stack([p.resample_points(rng, n_boot) for p in pairs], axis=1).sum(1)
    if propagate:
        cols = [col[r] for r in rungs]
        e_boot = draws[np.arange(n_boot) % draws.shape[0]][:, cols]
    else:
        e_boot = np.broadcast_to(e, (n_boot, len(rungs)))
    total = points.sum()
    if total >= games.sum() or total <= 0:
        won = total > 0
        x = _bound(games, e, 1.0 - ci, won)
        if won:
            return Rating(x, x, math.inf, "lower", bool(x > e.max()))
        return Rating(x, -math.inf, x, "upper", bool(x < e.min()))
    elo = float(_solve_agent(np.array([total]), games, e[None])[0])
    lo, hi = _percentile_interval(_solve_agent(boot, games, e_boot), ci)
    return Rating(elo, float(lo), float(hi), None, bool(elo > e.max() or elo < e.min()))


# ============================================================================ ladders
def game_key(env: Env) -> str:
    """File name stem of a game's ladder: ``tic_tac_toe``, ``reversi6``, ``reversi8``,
    ``animal_shogi``; other non-default options are appended as ``_<name><value>``."""
    if env.name == "reversi":
        return f"reversi{env.config['size']}"
    params = inspect.signature(type(env).__init__).parameters
    extra = [
        f"_{k}{v}"
        for k, v in sorted(env.config.items())
        if k not in params or params[k].default != v
    ]
    return env.name + "".join(extra)


def ladder_path(key: str) -> str:
    """``jaxgames/evaluation/ladders/<key>.json`` inside the package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "ladders", f"{key}.json")


@dataclasses.dataclass
class Rung:
    """A ladder rung: its opponent spec and its rating."""

    spec: str
    rating: Rating


@dataclasses.dataclass
class Ladder:
    """A game's ladder: rungs with ratings, the games behind them, and how they were made.

    rungs: weakest first (the order given to :func:`build_ladder`). pairings: every pairing's
    games (unit-score histograms, per-colour W/D/L). The rung ratings are refitted
    deterministically from ``pairings`` by :meth:`fit` (also the bootstrap draws used to
    propagate the ladder's uncertainty into an agent's rating).
    """

    game: str
    env_name: str
    env_options: dict
    rungs: list[Rung]
    pairings: list[Pairing]
    n_openings: int
    plies: int
    opening_seed: int
    openings_digest: str
    games_per_pairing: int
    anchor: str = "random"
    prior: float = 1.0
    n_boot: int = 1000
    boot_seed: int = 0
    ci: float = 0.95
    seed: int = 0
    created: str = ""
    machine: str = ""
    command: str = ""
    version: str = ""
    notes: str = ""

    @property
    def specs(self) -> list[str]:
        return [r.spec for r in self.rungs]

    @property
    def elos(self) -> dict[str, float]:
        return {r.spec: r.rating.elo for r in self.rungs}

    def rating(self, spec: str) -> Rating:
        for r in self.rungs:
            if r.spec == spec:
                return r.rating
        raise KeyError(f"{spec!r} is not a rung of the {self.game} ladder: {self.specs}")

    def make_env(self) -> Env:
        from jaxgames.games import make

        return make(self.env_name, **self.env_options)

    def check_env(self, env: Env) -> None:
        if env.name != self.env_name or dict(env.config) != dict(self.env_options):
            raise ValueError(f"the {self.game} ladder is for {self.make_env()!r}, not {env!r}")

    def fit(self) -> LadderFit:
        """The point fit and bootstrap draws from the stored games (cached)."""
        cache = self.__dict__.get("_fit")
        if cache is None:
            cache = fit_ladder(
                self.pairings,
                self.anchor,
                self.prior,
                self.n_boot,
                self.boot_seed,
                self.ci,
                names=self.specs,
            )
            self.__dict__["_fit"] = cache
        return cache

    def opening_states(self, env: Env | None = None, n: int | None = None) -> GameState:
        """The ladder's openings (``n`` of them: a prefix, or an extension, of the stored
        set). Warns when the regenerated set differs from the one the ladder was built with."""
        env = env or self.make_env()
        states = openings(env, self.n_openings, self.plies, self.opening_seed)
        if openings_digest(states) != self.openings_digest:
            warnings.warn(
                f"the {self.game} ladder's openings regenerated differently (digest "
                f"{openings_digest(states)} != {self.openings_digest}; a different JAX random "
                "number generator?): ratings stay comparable in distribution, not game for game",
                stacklevel=2,
            )
        if n is not None and n != self.n_openings:
            states = openings(env, n, self.plies, self.opening_seed)
        return states

    def to_json(self) -> dict:
        d = {"format": LADDER_FORMAT}
        for f in dataclasses.fields(self):
            d[f.name] = getattr(self, f.name)
        d["rungs"] = [dict(spec=r.spec, **r.rating.to_json()) for r in self.rungs]
        d["pairings"] = [p.to_json() for p in self.pairings]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Ladder":
        d = dict(d)
        fmt = d.pop("format", None)
        if fmt != LADDER_FORMAT:
            raise ValueError(f"unsupported ladder format {fmt!r} (this code reads {LADDER_FORMAT})")
        d["rungs"] = [Rung(r["spec"], Rating.from_json(r)) for r in d["rungs"]]
        d["pairings"] = [Pairing.from_json(p) for p in d["pairings"]]
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def __str__(self) -> str:
        lines = [
            f"{self.game} ladder: {len(self.rungs)} rungs, {len(self.pairings)} pairings of "
            f"{self.games_per_pairing} games ({self.n_openings} openings of {self.plies} random "
            f"plies x 2 colours), anchor {self.anchor} = 0, {self.ci:.0%} bootstrap intervals",
            f"{'rung':<28} {'Elo':>24}",
        ]
        for r in self.rungs:
            lines.append(f"{r.spec:<28} {str(r.rating):>24}")
        lines.append(f"{'pairing':<40} {'score':>22}  W/D/L first   W/D/L second")
        for p in self.pairings:
            lo, hi = p.score_ci()
            s = f"{p.score:.1%} [{lo:.1%}, {hi:.1%}]"
            lines.append(
                f"{p.a + ' vs ' + p.b:<40} {s:>22}  {_wdl(p.as_first):<13} {_wdl(p.as_second)}"
            )
        return "\n".join(lines)


def _wdl(r: Record | None) -> str:
    return "-" if r is None else f"{r.wins}/{r.draws}/{r.losses}"


def save_ladder(ladder: Ladder, path: str | None = None) -> str:
    """Write ``ladder`` as JSON (default: :func:`ladder_path` of its game). Returns the path."""
    path = path or ladder_path(ladder.game)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(_dumps(ladder.to_json()) + "\n")
    return path


def _dumps(d: dict) -> str:
    """Indented JSON with lists of numbers kept on one line."""

    def join(m):
        return "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]"

    return re.sub(r"\[([^\[\]{}\"]*)\]", join, json.dumps(d, indent=1))


def load_ladder(name_or_path: str) -> Ladder:
    """A ladder from a JSON file path, or the packaged ladder of a game key (``reversi8``)."""
    path = name_or_path
    if not os.path.exists(path):
        path = ladder_path(name_or_path)
        if not os.path.exists(path):
            folder = os.path.dirname(path)
            names = os.listdir(folder) if os.path.isdir(folder) else []
            have = sorted(f[:-5] for f in names if f.endswith(".json"))
            raise FileNotFoundError(
                f"no ladder {name_or_path!r}: not a file, and no {path}; packaged ladders: "
                f"{', '.join(have) or 'none'}"
            )
    with open(path) as f:
        return Ladder.from_json(json.load(f))


def ladder_pairs(n_rungs: int, span: int | None = 2) -> list[tuple[int, int]]:
    """Rung index pairs played by :func:`build_ladder`: each rung against the next ``span``
    rungs (``span=None``: the full round robin)."""
    span = n_rungs - 1 if span is None else int(span)
    if span < 1:
        raise ValueError(f"span must be >= 1, got {span}")
    return [(i, j) for i in range(n_rungs) for j in range(i + 1, min(i + span, n_rungs - 1) + 1)]


def build_ladder(
    env: Env,
    rung_specs: Sequence[str],
    make_rung: Callable[[str], Policy],
    n_openings: int = 200,
    plies: int = 4,
    seed: int = 0,
    span: int | None = 2,
    anchor: str = "random",
    prior: float = 1.0,
    n_boot: int = 1000,
    command: str | None = None,
    notes: str = "",
    log: Callable[[str], None] | None = print,
    played: Sequence[Pairing] = (),
) -> Ladder:
    """Play the ladder's pairings and fit the rungs' ratings.

    ``rung_specs``: weakest first, including ``anchor``. Each pairing is :func:`play_match` on
    the same ``n_openings`` openings of ``plies`` random plies (``2 * n_openings`` games).
    ``span``: each rung plays the next ``span`` rungs up (default 2: ``2R - 3`` pairings for R
    rungs, each rung in at most 4 of them and the top rung in 2, instead of ``R(R-1)/2`` and
    ``R - 1`` for a round robin, which ``span=None`` gives). Neighbouring rungs are where the
    scores are informative (whitewashes between distant rungs say little), and the second
    neighbour gives every rung two independent links and checks transitivity, so the slowest
    engines play few pairings. ``log``: progress lines (None for silence).

    ``played``: pairings of a ladder built before with the same openings, seed and span,
    whose rungs are the first rungs of ``rung_specs`` (``build_ladder.py --extend``). Pairing
    k draws its games with ``fold_in(PRNGKey(seed), k)`` and :func:`ladder_pairs` lists the
    pairs of the first R rungs first, in the same order, so rungs added on top leave the
    earlier pairings' indices and games as they were: stored pairing k is taken as it is
    (``ValueError``, before any game, if pairing k here is another pair) and only the new ones
    are played.
    """
    specs = list(rung_specs)
    if len(set(specs)) != len(specs):
        raise ValueError(f"duplicate rung specs in {specs}")
    if anchor not in specs:
        raise ValueError(f"the anchor {anchor!r} must be one of the rungs {specs}")
    pairs = ladder_pairs(len(specs), span)
    states = openings(env, n_openings, plies, seed)
    policies: dict[str, Policy] = {}

    def policy(spec):
        if spec not in policies:
            policies[spec] = make_rung(spec)
        return policies[spec]

    for k, p in enumerate(played):  # checked before any game is played
        here = (specs[pairs[k][0]], specs[pairs[k][1]]) if k < len(pairs) else None
        if (p.a, p.b) != here:
            raise ValueError(
                f"stored pairing {k} ({p.a} vs {p.b}) is "
                + (f"{here[0]} vs {here[1]} here" if here else "not among this ladder's pairs")
                + ": new rungs go on top of the stored ones, with the same span"
            )
    base = jax.random.PRNGKey(seed)
    pairings = []
    for k, (i, j) in enumerate(pairs):
        a, b = specs[i], specs[j]
        if k < len(played):
            pairings.append(played[k])
            if log is not None:
                log(f"[{k + 1}/{len(pairs)}] {a} vs {b}: stored, score {played[k].score:.1%}")
            continue
        t0 = time.perf_counter()
        m = play_match(policy(a), policy(b), env, states, jax.random.fold_in(base, k))
        dt = time.perf_counter() - t0
        p = Pairing.from_match(a, b, m, seconds=round(dt, 3))
        pairings.append(p)
        if log is not None:
            lo, hi = p.score_ci()
            note = ""
            if p.score > 0.97 or p.score < 0.03:
                note = "  (nearly a whitewash: these rungs are far apart)"
            log(
                f"[{k + 1}/{len(pairs)}] {a} vs {b}: score {p.score:.1%} [{lo:.1%}, {hi:.1%}], "
                f"first {_wdl(p.as_first)}, second {_wdl(p.as_second)}, {dt:.1f} s{note}"
            )
    fit = fit_ladder(pairings, anchor, prior, n_boot, 0, 0.95, names=specs)
    ratings = fit.ratings()
    ladder = Ladder(
        game=game_key(env),
        env_name=env.name,
        env_options=dict(env.config),
        rungs=[Rung(s, ratings[s]) for s in specs],
        pairings=pairings,
        n_openings=int(n_openings),
        plies=int(plies),
        opening_seed=int(seed),
        openings_digest=openings_digest(states),
        games_per_pairing=2 * int(n_openings),
        anchor=anchor,
        prior=float(prior),
        n_boot=int(n_boot),
        boot_seed=0,
        ci=0.95,
        seed=int(seed),
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        machine=machine_description(),
        command=command if command is not None else " ".join(sys.argv),
        version=git_version(),
        notes=notes,
    )
    ladder.__dict__["_fit"] = fit
    return ladder


# ============================================================================ rating a policy
@dataclasses.dataclass
class RatingReport:
    """:func:`rate_policy`'s result: the agent's rating and its games against each rung."""

    name: str
    game: str
    rating: Rating
    rungs: list[str]
    rung_ratings: list[Rating]
    matches: list[MatchResult]
    games_per_rung: int
    n_openings: int
    plies: int
    propagate: bool
    n_boot: int
    ci: float = 0.95

    def pairings(self) -> list[Pairing]:
        return [Pairing.from_match(self.name, r, m) for r, m in zip(self.rungs, self.matches)]

    def __str__(self) -> str:
        head = (
            f"{self.name} on the {self.game} ladder: {self.games_per_rung} games per rung "
            f"({self.n_openings} openings of {self.plies} random plies x 2 colours)"
        )
        has_margin = any(m.margin is not None for m in self.matches)
        cols = f"{'rung':<24} {'rung Elo':>18}  {'W/D/L first':>12}  {'W/D/L second':>12}  "
        cols += f"{'score':>22}" + (f"  {'margin':>22}" if has_margin else "")
        lines = [head, cols]
        for spec, rr, m in zip(self.rungs, self.rung_ratings, self.matches):
            lo, hi = m.overall.ci("score")
            row = (
                f"{spec:<24} {str(rr):>18}  {_wdl(m.as_first):>12}  {_wdl(m.as_second):>12}  "
                f"{f'{m.score:.1%} [{lo:.1%}, {hi:.1%}]':>22}"
            )
            ms = m.margin_stats()
            if ms is not None:
                row += f"  {f'{ms[0]:+.1f} [{ms[1]:+.1f}, {ms[2]:+.1f}]':>22}"
            lines.append(row)
        how = "rung uncertainty propagated" if self.propagate else "rung ratings held fixed"
        lines.append(
            f"Elo {self.rating}  ({self.ci:.0%} bootstrap over openings, {self.n_boot} "
            f"resamples, {how}; random = 0)"
        )
        return "\n".join(lines)

    def to_json(self) -> dict:
        rows = []
        for spec, rr, m in zip(self.rungs, self.rung_ratings, self.matches):
            d = m.to_dict()
            rows.append(dict(rung=spec, rung_rating=rr.to_json(), **d))
        return dict(
            name=self.name,
            game=self.game,
            rating=self.rating.to_json(),
            games_per_rung=self.games_per_rung,
            n_openings=self.n_openings,
            plies=self.plies,
            propagate=self.propagate,
            n_boot=self.n_boot,
            ci=self.ci,
            rungs=rows,
        )


def rate_policy(
    policy: Policy,
    env: Env,
    ladder: Ladder,
    make_rung: Callable[[str], Policy],
    games_per_rung: int | None = None,
    key: jax.Array | None = None,
    *,
    name: str = "agent",
    rungs: Sequence[str] | None = None,
    propagate: bool = True,
    n_boot: int | None = None,
    log: Callable[[str], None] | None = None,
) -> RatingReport:
    """Rate ``policy`` on ``ladder``: a :func:`play_match` against every rung (or ``rungs``)
    from the ladder's openings, then :func:`rate_against_ladder`.

    ``games_per_rung`` (even; default the ladder's games per pairing) uses the first
    ``games_per_rung / 2`` openings of the ladder's opening sequence. ``make_rung(spec)``
    builds a rung's policy (e.g. ``lambda s: make_opponent(s, env)``). ``key``: random numbers
    of the games (rung k gets ``fold_in(key, k)``; default ``PRNGKey(0)``).
    """
    ladder.check_env(env)
    games = ladder.games_per_pairing if games_per_rung is None else int(games_per_rung)
    if games < 2 or games % 2:
        raise ValueError(f"games_per_rung must be even and >= 2, got {games_per_rung}")
    specs = list(ladder.specs if rungs is None else rungs)
    for s in specs:
        ladder.rating(s)  # KeyError for an unknown rung
    n = games // 2
    states = ladder.opening_states(env, n)
    key = jax.random.PRNGKey(0) if key is None else key
    matches = []
    for k, spec in enumerate(specs):
        t0 = time.perf_counter()
        m = play_match(policy, make_rung(spec), env, states, jax.random.fold_in(key, k))
        matches.append(m)
        if log is not None:
            log(f"{name} vs {spec}: {m.overall} ({time.perf_counter() - t0:.1f} s)")
    fit = ladder.fit()
    rating = rate_against_ladder(
        dict(zip(specs, matches)), fit, propagate=propagate, n_boot=n_boot, seed=1
    )
    return RatingReport(
        name=name,
        game=ladder.game,
        rating=rating,
        rungs=specs,
        rung_ratings=[ladder.rating(s) for s in specs],
        matches=matches,
        games_per_rung=games,
        n_openings=n,
        plies=ladder.plies,
        propagate=propagate,
        n_boot=n_boot or fit.draws.shape[0],
        ci=fit.ci,
    )

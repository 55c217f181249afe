"""Ladders: a game's fixed opponents (rungs) rated once from their games against each other on a
fixed opening set, and any player rated against them (``load_ladder("reversi8")``).

Rung ratings: penalised Bradley-Terry with the anchor (``random``) at 0; a player's: its MLE
with the rung ratings held fixed, a one-sided bound for a sweep. Intervals: percentile
bootstrap (Efron 1979) over openings, the unit whose two games are correlated.
docs/ladders.md ("Method") has the model, the fits, the bootstrap and the bounds.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import json
import math
import os
import re
import statistics
import sys
import time
import warnings
from typing import Callable, Mapping, Sequence

import jax
import numpy as np

from jaxgames.core import DEFAULT_RULES_VERSION, Env, GameState, Policy, check_rules_version
from jaxgames.evaluation.elo import (
    Rating,
    Record,
    design_effect_games,
    fit_agent_elo,
    fit_elo,
    percentile_interval,
    sweep_bound,
    wilson_interval,
)
from jaxgames.evaluation.match import MatchResult, play_match
from jaxgames.evaluation.openings import openings, openings_digest
from jaxgames.games import env_class
from jaxgames.provenance import git_version, machine_description
from jaxgames.validation import check_int

#: version of the ladder JSON layout
LADDER_FORMAT = 1


# ============================================================================ pairings
@dataclasses.dataclass(frozen=True)
class Pairing:
    """The games of ``a`` against ``b`` from ``a``'s side, in bootstrap units.

    units: ``units[k]`` = units in which ``a`` scored ``k / 2`` points; a unit is one opening's
    two games (5 bins) or one game (3 bins). as_first / as_second: a's :class:`Record` as player
    0 / 1; margin: (mean, lo, hi) of a's final score margin; seconds: wall time (if known).
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
        r = self.overall
        if r is not None and r.games != self.games:
            raise ValueError(
                f"{self.a} vs {self.b}: the W/D/L records count {r.games} games, the unit "
                f"histogram {self.games}"
            )

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
        """95% Wilson interval of the score over the games it is worth: a unit's games are
        correlated (:func:`~jaxgames.evaluation.elo.design_effect_games`, the games' variance
        from the W/D/L records; without them, one game a unit)."""
        m = self.unit_games
        if m == 1:
            return wilson_interval(self.points, self.games)
        units = sum(self.units)
        r = self.overall
        if r is None:
            n = float(units)
        else:
            v_game = max(0.0, (r.wins + r.draws / 4) / r.games - r.score**2)
            means = np.repeat(np.arange(len(self.units)) / (2.0 * m), self.units)
            n = design_effect_games(v_game, means, m, units)
        return wilson_interval(self.score * n, n)

    @classmethod
    def from_match(
        cls, a: str, b: str, match: MatchResult, seconds: float | None = None
    ) -> "Pairing":
        """Units = openings (both colours' games together)."""
        per = np.bincount(match.opening)
        if per.min() != per.max():
            raise ValueError("every opening must have the same number of games")
        k = np.rint(2 * match.unit_points()).astype(int)
        units = tuple(int(c) for c in np.bincount(k, minlength=2 * int(per[0]) + 1))
        m = match.margin_stats()
        margin = None if m is None else tuple(round(float(v), 4) for v in m)
        return cls(a, b, units, match.as_first, match.as_second, margin, seconds)

    @classmethod
    def from_counts(cls, a: str, b: str, wins: int, draws: int, losses: int) -> "Pairing":
        """Units = single games."""
        return cls(a, b, (int(losses), int(draws), int(wins)))

    def swapped(self) -> "Pairing":
        """The same games from b's side: b's record as player 0 is a's as player 1, swapped."""
        m = self.margin
        first, second = (
            None if r is None else r.swapped() for r in (self.as_second, self.as_first)
        )
        margin = None if m is None else (-m[0], -m[2], -m[1])
        return Pairing(self.b, self.a, self.units[::-1], first, second, margin, self.seconds)

    def resample_points(self, rng: np.random.Generator, n_boot: int) -> np.ndarray:
        """float[n_boot]: a's points in ``n_boot`` bootstrap resamples of the units."""
        u = np.asarray(self.units, np.float64)
        counts = rng.multinomial(int(u.sum()), u / u.sum(), size=n_boot)
        return counts @ (np.arange(len(u)) / 2.0)

    def to_json(self) -> dict:
        def record(r):
            return None if r is None else [r.wins, r.draws, r.losses]

        return dict(
            a=self.a,
            b=self.b,
            units=list(self.units),
            as_first=record(self.as_first),
            as_second=record(self.as_second),
            margin=None if self.margin is None else list(self.margin),
            seconds=self.seconds,
        )

    @classmethod
    def from_json(cls, d: dict) -> "Pairing":
        def record(x):
            return None if x is None else Record(*(int(v) for v in x))

        m = d.get("margin")
        margin = None if m is None else tuple(float(v) for v in m)
        first, second = record(d.get("as_first")), record(d.get("as_second"))
        return cls(d["a"], d["b"], tuple(d["units"]), first, second, margin, d.get("seconds"))


def _wdl(r: Record | None) -> str:
    return "-" if r is None else r.wdl


# ============================================================================ fitting
@dataclasses.dataclass(frozen=True)
class LadderFit:
    """Point fit elo float[n] and bootstrap refits draws float[B, n] (``names`` order)."""

    names: tuple[str, ...]
    elo: np.ndarray
    draws: np.ndarray
    ci: float

    def ratings(self) -> dict[str, Rating]:
        lo, hi = percentile_interval(self.draws, self.ci)
        return {
            n: Rating(float(self.elo[k]), float(lo[k]), float(hi[k]))
            for k, n in enumerate(self.names)
        }


#: what the fits accept: pairings, or ``{(a, b): MatchResult or Pairing}``
PairingsLike = Sequence[Pairing] | Mapping[tuple[str, str], Pairing | MatchResult]


def as_pairings(results: PairingsLike) -> list[Pairing]:
    """Pairings from :class:`Pairing` s or a ``{(a, b): MatchResult or Pairing}`` mapping."""
    if isinstance(results, Mapping):
        return [
            r if isinstance(r, Pairing) else Pairing.from_match(a, b, r)
            for (a, b), r in results.items()
        ]
    return list(results)


def fit_ladder(
    pairings: PairingsLike,
    anchor: str = "random",
    prior: float = 1.0,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
    names: Sequence[str] | None = None,
) -> LadderFit:
    """Bradley-Terry fit of ``pairings`` (anchor at 0) and ``n_boot`` refits with the units
    resampled within each pairing, in one batched :func:`~jaxgames.evaluation.elo.fit_elo`;
    ``names``: the player order (default: first appearance)."""
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
    games, points, boot = _resampled(pairings, seed, n_boot)
    elo = fit_elo(names, pi, pj, points[None], games, idx[anchor], prior)[0]
    draws = fit_elo(names, pi, pj, boot, games, idx[anchor], prior)
    return LadderFit(tuple(names), elo, draws, ci)


def _resampled(pairings: list[Pairing], seed: int, n_boot: int):
    """(games float64[P], points float[P], bootstrap points float[n_boot, P])."""
    rng = np.random.default_rng(seed)
    games = np.array([p.games for p in pairings], np.float64)
    points = np.array([p.points for p in pairings])
    return games, points, np.stack([p.resample_points(rng, n_boot) for p in pairings], axis=1)


def rate_ladder(
    pairings: PairingsLike,
    anchor: str = "random",
    prior: float = 1.0,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Rating]:
    """``{rung: Rating(elo, lo, hi)}`` from the rungs' pairings (:func:`fit_ladder`)."""
    return fit_ladder(pairings, anchor, prior, n_boot, seed, ci).ratings()


def rate_against_ladder(
    results: Mapping[str, "Pairing | MatchResult"],
    ladder: "Ladder | LadderFit | Mapping[str, float]",
    propagate: bool = True,
    n_boot: int | None = None,
    seed: int = 0,
    ci: float = 0.95,
) -> Rating:
    """One player's Elo from ``{rung spec: MatchResult or Pairing}`` with the rung ratings of
    ``ladder`` (a :class:`Ladder`, :class:`LadderFit` or ``{rung: elo}``) held fixed.

    ``propagate``: pair resample b of the player's games with the ladder's draw b, so the
    interval carries the rungs' uncertainty (``False``: to compare two players on the same
    ladder). ``n_boot``: default the ladder's draws (1000). A sweep gets the one-sided bound
    of :func:`~jaxgames.evaluation.elo.sweep_bound`.
    """
    if not results:
        raise ValueError("no results to rate")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"invalid ci={ci!r}: the interval's level is in (0, 1), e.g. 0.95")
    if n_boot is not None:
        check_int("n_boot", n_boot, minimum=2)
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
    e = np.array([elos[r] for r in rungs], np.float64)
    if n_boot is None:
        n_boot = draws.shape[0] if draws is not None else 1000
    games, points, boot = _resampled(pairs, seed, n_boot)
    boot = boot.sum(1)
    if propagate:
        cols = [col[r] for r in rungs]
        e_boot = draws[np.arange(n_boot) % draws.shape[0]][:, cols]
    else:
        e_boot = np.broadcast_to(e, (n_boot, len(rungs)))
    total = points.sum()
    if total >= games.sum() or total <= 0:
        won = total > 0
        x = sweep_bound(games, e, 1.0 - ci, won)
        if won:
            return Rating(x, x, math.inf, "lower", bool(x > e.max()))
        return Rating(x, -math.inf, x, "upper", bool(x < e.min()))
    elo = float(fit_agent_elo(np.array([total]), games, e[None])[0])
    lo, hi = percentile_interval(fit_agent_elo(boot, games, e_boot), ci)
    if not lo < hi:  # every resample alike (one opening a rung, or all scored the same)
        lo, hi = _score_interval_elo(pairs, games, e, total, ci)
    elif sum(sum(p.units) for p in pairs) < FEW_OPENINGS:
        # the percentile bootstrap is too narrow on few samples (its small-sample bias, Efron
        # & Tibshirani 1993): at least the Wilson interval of the score, openings as samples
        w_lo, w_hi = _score_interval_elo(pairs, games, e, total, ci)
        lo, hi = min(lo, w_lo), max(hi, w_hi)
    return Rating(elo, float(lo), float(hi), None, bool(elo > e.max() or elo < e.min()))


#: below this many openings in all, an agent's interval contains the Wilson interval of its
#: score (:func:`rate_against_ladder`; docs/ladders.md)
FEW_OPENINGS = 50


def _score_interval_elo(
    pairs: list[Pairing], games: np.ndarray, elos: np.ndarray, points: float, ci: float
) -> tuple[float, float]:
    """The Elo of the ends of the Wilson interval (Wilson 1927) of the player's score, its
    openings as the samples: the interval when the bootstrap has no spread to read (a zero-
    width bootstrap interval from a handful of games would claim certainty)."""
    units = float(sum(sum(p.units) for p in pairs))
    z = statistics.NormalDist().inv_cdf(0.5 + ci / 2)
    ends = wilson_interval(points / games.sum() * units, units, z)
    x = np.array([s * games.sum() for s in ends])
    lo, hi = fit_agent_elo(x, games, np.broadcast_to(elos, (2, len(elos))))
    return float(lo), float(hi)


# ============================================================================ ladders
def game_key(env: Env) -> str:
    """File name stem of a game's ladder (``reversi8``; other non-default options appended as
    ``_<name><value>``)."""
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
    """A game's ladder: rungs (weakest first) with ratings, every pairing's games, and how they
    were made (JSON; ``jaxgames/evaluation/ladders/README.md`` lists the fields). :meth:`fit`
    refits the ratings and bootstrap draws from ``pairings`` deterministically."""

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
    #: the game's rules version the games were played under (files without it: version 1)
    rules_version: int = DEFAULT_RULES_VERSION

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
        if "_fit" not in self.__dict__:
            args = (self.anchor, self.prior, self.n_boot, self.boot_seed, self.ci)
            self.__dict__["_fit"] = fit_ladder(self.pairings, *args, names=self.specs)
        return self.__dict__["_fit"]

    def opening_states(
        self, env: Env | None = None, n: int | None = None, *, repeat: bool = True
    ) -> GameState:
        """The ladder's openings (``n``: a prefix or extension of the stored set; ``repeat``:
        see :func:`~jaxgames.evaluation.openings.openings`); warns when they regenerate
        differently from the ladder's."""
        env = env or self.make_env()
        own = n is None or n == self.n_openings  # the stored set itself: repeats refused too
        states = openings(
            env, self.n_openings, self.plies, self.opening_seed, repeat=repeat or not own
        )
        if openings_digest(states) != self.openings_digest:
            warnings.warn(
                f"the {self.game} ladder's openings regenerated differently (digest "
                f"{openings_digest(states)} != {self.openings_digest}; a different JAX random "
                "number generator?): ratings stay comparable in distribution, not game for game",
                stacklevel=2,
            )
        if not own:
            states = openings(env, n, self.plies, self.opening_seed, repeat=repeat)
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
        if not isinstance(d, dict):
            raise ValueError(f"a ladder is a JSON object, not {type(d).__name__}")
        d = dict(d)
        fmt = d.pop("format", None)
        if fmt != LADDER_FORMAT:
            raise ValueError(f"unsupported ladder format {fmt!r} (this code reads {LADDER_FORMAT})")
        try:
            d["rungs"] = [Rung(r["spec"], Rating.from_json(r)) for r in d["rungs"]]
            if not all(isinstance(r.spec, str) for r in d["rungs"]):
                raise TypeError("every rung's spec must be a string")
            if not isinstance(d.get("env_options", {}), dict):
                raise TypeError("env_options must be an object")
            d["pairings"] = [Pairing.from_json(p) for p in d["pairings"]]
            names = {f.name for f in dataclasses.fields(cls)}
            return cls(**{k: v for k, v in d.items() if k in names})
        except KeyError as e:
            raise ValueError(f"the ladder has no field {e}") from None
        except (TypeError, AttributeError) as e:  # a field of the wrong type
            raise ValueError(f"a field of the ladder has the wrong type ({e})") from None

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


def save_ladder(ladder: Ladder, path: str | None = None) -> str:
    """Write ``ladder`` as JSON (default: :func:`ladder_path` of its game). Returns the path."""
    path = path or ladder_path(ladder.game)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def join(m):  # lists of numbers on one line
        return "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]"

    with open(path, "w") as f:
        f.write(re.sub(r"\[([^\[\]{}\"]*)\]", join, json.dumps(ladder.to_json(), indent=1)) + "\n")
    return path


def load_ladder(name_or_path: str) -> Ladder:
    """A ladder from a JSON file path, or the packaged ladder of a game key (``reversi8``)."""
    path = name_or_path
    if not os.path.exists(path):
        folder = os.path.dirname(ladder_path("x"))
        have = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json"))
        packaged = f"packaged ladders: {', '.join(have) or 'none'}"
        if os.sep in path or "/" in path or path.endswith(".json"):  # a file path, not a key
            raise FileNotFoundError(f"no ladder file {name_or_path!r}; {packaged}")
        path = ladder_path(name_or_path)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"no ladder {name_or_path!r}: not a file, and no {path}; {packaged}"
            )
    with open(path) as f:
        ladder = Ladder.from_json(json.load(f))
    try:
        current = env_class(ladder.env_name).rules_version
    except ValueError:
        return ladder  # an unknown game is reported by make_env
    check_rules_version(f"ladder {path}", ladder.env_name, ladder.rules_version, current)
    return ladder


def ladder_pairs(n_rungs: int, span: int | None = 2) -> list[tuple[int, int]]:
    """Rung index pairs of :func:`build_ladder`: each rung against the next ``span`` (None: all)."""
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
    """Play the ladder's pairings (:func:`play_match` on the same ``n_openings`` openings of
    ``plies`` random plies) and fit the rungs' ratings; ``rung_specs`` weakest first.

    ``span``: each rung plays the next ``span`` rungs up (2: ``2R - 3`` pairings instead of
    ``R(R-1)/2``): neighbours are where scores inform, and the second neighbour checks
    transitivity. ``played``: the pairings of a ladder built before with the same openings,
    seed and span, on the first rungs: pairing k draws with ``fold_in(PRNGKey(seed), k)`` and
    :func:`ladder_pairs` lists the first rungs' pairs first, so they are kept as they are and
    only the new ones played (``ValueError`` first if pairing k is another pair here).
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
        rules_version=env.rules_version,
    )
    ladder.__dict__["_fit"] = fit
    return ladder

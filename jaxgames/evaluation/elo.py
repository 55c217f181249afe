"""Statistics of game results: Wilson intervals, W/D/L records, Bradley-Terry Elo fits and the
intervals of the ladders' bootstrap.

Model (Bradley & Terry 1952, on Elo's scale): ``P(i beats j) = sigma((R_i - R_j) / s)``,
``s = 400 / ln 10``; a draw is half a win, so a pairing enters through i's points
``W + D / 2`` out of ``N`` games, plus ``prior`` virtual draws that keep a whitewash finite.
docs/ladders.md ("Method") has the long form.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
from typing import Iterable, Sequence

import numpy as np

#: Elo points per nat of the logistic: P = sigma(dR / ELO_PER_NAT)
ELO_PER_NAT = 400.0 / math.log(10.0)
#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """Student's t 97.5% quantile with ``df`` degrees of freedom (nan below 1): the half-width
    factor of a 95% interval of a mean from ``df + 1`` samples."""
    if df < 1:
        return float("nan")
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def wilson_interval(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (Wilson 1927) of ``k`` (may be fractional) successes in ``n``
    trials: ``(low, high)``, ``(0.0, 1.0)`` when ``n == 0``."""
    if not (0 <= k <= n):  # also NaN
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def design_effect_games(
    v_game: float, unit_means: np.ndarray, per_unit: float, distinct: int
) -> float:
    """The number of independent games that ``len(unit_means)`` units of ``per_unit``
    correlated games each are worth (an opening's games: Kish 1965's design effect), from the
    variance ``v_game`` of one game's points and the units' mean points float[U]: the games
    over the design effect, clipped to [distinct, per_unit * distinct] for ``distinct`` units
    that are not repeats game for game."""
    means = np.asarray(unit_means, np.float64)
    v_unit = float(np.var(means, ddof=1)) if len(means) > 1 else 0.0
    if v_game == 0:  # one result only: its units are the samples
        n = float(distinct)
    elif v_unit == 0:
        n = per_unit * distinct
    else:
        n = v_game * len(means) / v_unit
    return float(min(max(n, distinct), per_unit * distinct))


def effective_games(points: np.ndarray, unit: np.ndarray, distinct: int) -> float:
    """:func:`design_effect_games` of the games' points float[G] (A's points per game), each
    game in unit ``unit`` int[G] (its opening), ``distinct`` units not repeats of another."""
    count = np.bincount(unit)
    means = np.bincount(unit, weights=points)[count > 0] / count[count > 0]
    per_unit = len(points) / np.count_nonzero(count)
    return design_effect_games(float(np.var(points)), means, per_unit, distinct)


@dataclasses.dataclass(frozen=True)
class Record:
    """Wins, draws and losses of one side in a set of games (Python ints).

    distinct: how many of the games are distinct (``None``: not known, taken as all). Games
    repeated move for move (deterministic players from the same start) are not independent
    samples: the intervals then count each distinct game once (n = ``distinct``, the rates
    those of all the games), and with one distinct game there is no interval at all.
    effective: how many independent games the score is worth when the games come in
    correlated units, an opening's two games (:func:`effective_games`; ``None``: the games
    are independent); the score's interval counts that many (at most :attr:`samples`).
    """

    wins: int
    draws: int
    losses: int
    distinct: int | None = None
    #: not compared: a float whose last bit depends on the order it was summed in
    effective: float | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self):
        if min(self.wins, self.draws, self.losses) < 0:
            raise ValueError(f"a record counts games: got W/D/L {self.wdl}")
        least = min(self.games, 1)
        if self.distinct is not None and not least <= self.distinct <= self.games:
            raise ValueError(
                f"distinct={self.distinct}: a record of {self.games} games has between "
                f"{least} and {self.games} distinct ones"
            )
        if self.effective is not None and not self.effective > 0:
            raise ValueError(f"effective={self.effective}: the games are worth more than 0")

    @classmethod
    def of(
        cls, outcomes: np.ndarray, distinct: int | None = None, *, effective: float | None = None
    ) -> "Record":
        """The record of game outcomes (+1 won, 0 draw, -1 lost)."""
        o = np.asarray(outcomes)
        wdl = int(np.sum(o > 0)), int(np.sum(o == 0)), int(np.sum(o < 0))
        return cls(*wdl, distinct, effective=effective)

    @property
    def samples(self) -> int:
        """The games the intervals count: the distinct ones when known."""
        return self.games if self.distinct is None else min(self.distinct, self.games)

    @property
    def repeats(self) -> bool:
        """Some games repeat another move for move."""
        return self.samples < self.games

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

    @property
    def wdl(self) -> str:
        """``"wins/draws/losses"``."""
        return f"{self.wins}/{self.draws}/{self.losses}"

    def swapped(self) -> "Record":
        """The same games from the other side."""
        return Record(self.losses, self.draws, self.wins, self.distinct, self.effective)

    def ci(self, what: str = "win") -> tuple[float, float] | None:
        """95% Wilson interval of the ``"win"``, ``"draw"``, ``"loss"`` rate or the ``"score"``
        over :attr:`samples` games (the score's over :attr:`effective` where fewer); ``None``
        when the games are one game repeated."""
        score = self.wins + 0.5 * self.draws
        k = dict(win=self.wins, draw=self.draws, loss=self.losses, score=score).get(what)
        if k is None:
            raise ValueError(f"unknown rate {what!r}; valid: win, draw, loss, score")
        n = self.samples
        if self.repeats and n < 2:
            return None
        if what == "score" and self.effective is not None:
            n = min(self.effective, n)
        if n == self.games:
            return wilson_interval(k, self.games)
        return wilson_interval(k * n / self.games, n)

    def to_dict(self) -> dict:
        """Counts, rates and Wilson intervals as plain Python values (and ``distinct_games``,
        ``effective_games`` when known)."""
        counts = dict(wins=self.wins, draws=self.draws, losses=self.losses, games=self.games)
        if self.distinct is not None:
            counts["distinct_games"] = self.samples
        if self.effective is not None:
            counts["effective_games"] = round(min(self.effective, self.samples), 2)
        rates = dict(win_rate=self.win_rate, win_ci=self.ci("win"), draw_rate=self.draw_rate)
        score = dict(score=self.score, score_ci=self.ci("score"))
        return dict(**counts, **rates, loss_rate=self.loss_rate, **score)

    def __str__(self) -> str:
        if not self.games:
            return "no games"

        def pct(rate: float, what: str) -> str:
            ci = self.ci(what)
            return f"{rate:.1%}" + ("" if ci is None else f" [{ci[0]:.1%}, {ci[1]:.1%}]")

        games = f"{self.games}" + (f" ({self.samples} distinct)" if self.repeats else "")
        line = (
            f"W {self.wins} D {self.draws} L {self.losses} / {games}: "
            f"win {pct(self.win_rate, 'win')}, "
            f"draw {self.draw_rate:.1%}, loss {self.loss_rate:.1%}, "
            f"score {pct(self.score, 'score')}"
        )
        if self.repeats and self.samples < 2:
            line += " (one game repeated: no interval)"
        elif self.effective is not None and self.effective < self.samples:
            line += f" ({self.effective:.1f} effective games)"
        return line


@dataclasses.dataclass(frozen=True)
class Match:
    """Results of ``a`` against ``b`` from ``a``'s side, for :func:`bradley_terry`."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


def sigmoid(x):
    """The logistic function, stable for any float array (``+-inf`` included)."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def expected_score(elo_a: float, elo_b: float) -> float:
    """Bradley-Terry/Elo expected score of A against B."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def check_connected(names: list[str], pairs: Iterable[tuple[int, int]]) -> None:
    """``ValueError`` if the pairings (index pairs into ``names``) leave groups of players
    that never met, directly or through others (their ratings are not comparable)."""
    parent = list(range(len(names)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        parent[root(i)] = root(j)
    groups: dict[int, list[str]] = {}
    for k, n in enumerate(names):
        groups.setdefault(root(k), []).append(n)
    if len(groups) > 1:
        raise ValueError(
            f"the pairings split the players into unconnected groups {list(groups.values())}: "
            "their ratings cannot be compared"
        )


def fit_elo(
    names: Sequence[str],
    pi: np.ndarray,
    pj: np.ndarray,
    points: np.ndarray,
    games: np.ndarray,
    anchor: int,
    prior: float,
    iterations: int = 200,
    tol: float = 1e-9,
) -> np.ndarray:
    """Penalised Bradley-Terry MLE of B datasets: ``points`` float[B, P] of ``pi[p]`` against
    ``pj[p]`` in ``games[p]`` games -> Elo float[B, len(names)], ``anchor`` at 0.

    Newton steps capped at 1 nat per player (a near-whitewash cannot overshoot); the Hessian
    ``-(diag(sum_j q_ij) - q)``, ``q_ij = N_ij p_ij (1 - p_ij)``, is negative definite on a
    connected graph (:func:`check_connected`)."""
    check_connected(list(names), zip(pi, pj))
    n = len(names)
    b = points.shape[0]
    s = points + prior / 2.0
    g = np.asarray(games, np.float64) + prior
    w = np.zeros((b, n, n))
    np.add.at(w, (slice(None), pi, pj), s)
    np.add.at(w, (slice(None), pj, pi), g - s)
    gm = np.zeros((n, n))
    np.add.at(gm, (pi, pj), g)
    np.add.at(gm, (pj, pi), g)
    free = np.array([k for k in range(n) if k != anchor], int)
    r = np.zeros((b, n))
    for _ in range(iterations):
        p = sigmoid(r[:, :, None] - r[:, None, :])
        grad = (w - gm * p).sum(2)[:, free]
        q = gm * p * (1.0 - p)
        neg_h = -q  # minus the Hessian of log L: diag(sum_j q_ij) - q (q_ii = 0)
        neg_h[:, np.arange(n), np.arange(n)] += q.sum(2)
        neg_h = neg_h[:, free][:, :, free]
        try:
            delta = np.linalg.solve(neg_h, grad[..., None])[..., 0]
        except np.linalg.LinAlgError:  # ratings ran off to infinity: no finite maximum
            break
        big = np.max(np.abs(delta), axis=1, keepdims=True)
        delta = delta / np.maximum(big, 1.0)  # steps of at most 1 nat per player
        r[:, free] += delta
        if float(np.max(big)) < tol:
            return r * ELO_PER_NAT
    raise RuntimeError(
        "the Bradley-Terry fit did not converge (with prior = 0 a player that won or lost "
        "every game has no finite rating)"
    )


def bradley_terry(
    matches: list[Match], anchor: str | None = None, prior: float = 1.0
) -> dict[str, float]:
    """``{name: elo}`` of ``matches`` (:func:`fit_elo`), best first, mean 0 (or ``anchor`` 0);
    ``prior``: virtual draws per match."""
    if not matches:
        raise ValueError("no matches to fit")
    names = sorted({m.a for m in matches} | {m.b for m in matches})
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not among the players: {names}")
    if not (math.isfinite(prior) and prior >= 0):  # also NaN
        raise ValueError(f"prior must be a number >= 0 (virtual draws per match), got {prior}")
    for m in matches:
        if min(m.wins, m.draws, m.losses) < 0:
            raise ValueError(f"negative counts in {m}")
        if prior == 0 and m.wins + m.draws + m.losses == 0:
            raise ValueError(f"{m.a} vs {m.b} has no games (and prior=0 adds none)")
    idx = {n: k for k, n in enumerate(names)}
    pi = np.array([idx[m.a] for m in matches])
    pj = np.array([idx[m.b] for m in matches])
    games = np.array([m.wins + m.draws + m.losses for m in matches], np.float64)
    points = np.array([[m.wins + 0.5 * m.draws for m in matches]], np.float64)
    # fitted with some player at 0, then moved to the anchor or to mean 0
    elo = fit_elo(names, pi, pj, points, games, idx[anchor or names[0]], prior)[0]
    elo = elo - (elo[idx[anchor]] if anchor is not None else elo.mean())
    order = np.argsort(-elo)
    return {names[k]: float(elo[k]) for k in order}


def fit_agent_elo(points: np.ndarray, games: np.ndarray, rung_elo: np.ndarray) -> np.ndarray:
    """One player's Elo MLE against fixed ratings float[B, R] from points float[B] out of games
    float[R] -> float[B] (bisection; ``+inf`` with no point lost, ``-inf`` with none won)."""
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


def sweep_bound(games: np.ndarray, rung_elo: np.ndarray, alpha: float, won: bool) -> float:
    """The one-sided (1 - alpha) bound of a player who won (``won``) or lost every game against
    ratings float[R]: the rating at which that sweep has probability ``alpha``."""
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


def percentile_interval(draws: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap percentile interval (Efron 1979) along axis 0: the quantiles at
    ``(1 -+ ci) / 2`` by the nearest order statistic (Hyndman and Fan 1996; numpy's
    ``method="nearest"``: of B sorted draws the one at ``round((B - 1) q)``, e.g. the 26th
    and 975th of 1000 at 95%), so ``+-inf`` draws are kept, never interpolated."""
    q = np.array([(1 - ci) / 2, (1 + ci) / 2])
    lo, hi = np.quantile(np.asarray(draws), q, axis=0, method="nearest")
    return lo, hi


@dataclasses.dataclass(frozen=True)
class Rating:
    """An Elo estimate and interval (``elo, lo, hi = rating``). bound: ``"lower"`` (won every
    game: ``elo`` is a one-sided bound) or ``"upper"``; extrapolated: outside the opponents'
    ratings (it rests on the logistic model alone)."""

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

        def f(x):  # no "-0"
            return f"{round(x) or 0:d}" if math.isfinite(x) else ("inf" if x > 0 else "-inf")

        return f"{f(self.elo)} [{f(self.lo)}, {f(self.hi)}]" + (
            " (extrapolated)" if self.extrapolated else ""
        )

    def to_json(self) -> dict:
        def f(x):
            return float(x) if math.isfinite(x) else None

        out = dict(elo=f(self.elo), lo=f(self.lo), hi=f(self.hi))
        return dict(out, bound=self.bound, extrapolated=self.extrapolated)

    @classmethod
    def from_json(cls, d: dict) -> "Rating":
        def f(x, inf):
            return inf if x is None else float(x)

        elo = f(d["elo"], math.inf if d.get("bound") == "lower" else -math.inf)
        bound, extrapolated = d.get("bound"), bool(d.get("extrapolated", False))
        return cls(elo, f(d["lo"], -math.inf), f(d["hi"], math.inf), bound, extrapolated)


def write_ratings_csv(ratings: dict[str, float], matches: list[Match], path: str) -> None:
    """Write ``rank,name,elo,games,score`` rows (and ``<path stem>_matches.csv`` with the pairs)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tot = {n: [0.0, 0] for n in ratings}
    for m in matches:
        g = m.wins + m.draws + m.losses
        tot[m.a][0] += m.wins + 0.5 * m.draws
        tot[m.a][1] += g
        tot[m.b][0] += m.losses + 0.5 * m.draws
        tot[m.b][1] += g
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rank", "name", "elo", "games", "score"])
        for r, (n, e) in enumerate(ratings.items(), 1):
            pts, g = tot[n]
            w.writerow([r, n, f"{e:.1f}", g, f"{pts / g:.4f}" if g else ""])
    stem, _ = os.path.splitext(path)
    with open(stem + "_matches.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "wins", "draws", "losses"])
        for m in matches:
            w.writerow([m.a, m.b, m.wins, m.draws, m.losses])


def plot_ratings(ratings: dict[str, float], path: str, title: str = "Elo (Bradley-Terry)") -> None:
    """Horizontal bar chart of ``ratings`` saved to ``path`` (PNG/PDF by extension)."""
    import matplotlib  # optional dependency (the 'plots' extra)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(ratings)[::-1]
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(names) + 1.2))
    ax.barh(names, [ratings[n] for n in names], color="tab:blue")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("Elo")
    ax.set_title(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)

"""Elo ratings as a Bradley-Terry model: the one fit that every rating in the package uses.

    table = round_robin({"random": r, "greedy": g, "alphabeta:2": ab}, env, n_games=1000, key=key)
    ratings = bradley_terry(table)               # {name: elo}, mean 0 (or anchor="random" at 0)
    write_ratings_csv(ratings, table, "runs/elo/ratings.csv")
    plot_ratings(ratings, "runs/elo/elo.png")

Model: ``P(i beats j) = 1 / (1 + 10 ** ((elo_j - elo_i) / 400)) = sigma((elo_i - elo_j) / s)``
with ``s = 400 / ln 10`` (:data:`ELO_PER_NAT`); a draw counts as half a win for each side, so a
pairing enters only through i's points ``S_ij`` out of ``N_ij`` games. :func:`fit_elo` maximises
the log-likelihood after ``prior`` virtual games per pairing scored as draws (``S += prior / 2``,
``N += prior``), which keeps every rating finite when a pairing is a whitewash, by Newton's
method with the exact Hessian, vectorised over datasets (the ladders' bootstrap refits,
:mod:`~jaxgames.evaluation.rating`, are one call).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
from typing import Iterable, Sequence

import jax
import numpy as np

from jaxgames.core import Env, Policy
from jaxgames.evaluation.arena import arena

#: Elo points per nat of the logistic: P = sigma(dR / ELO_PER_NAT)
ELO_PER_NAT = 400.0 / math.log(10.0)


@dataclasses.dataclass(frozen=True)
class Match:
    """Aggregated results of ``a`` against ``b`` (counts from ``a``'s side)."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


def round_robin(
    policies: dict[str, Policy], env: Env, n_games: int, key: jax.Array, opening_plies: int = 0
) -> list[Match]:
    """Every pair of ``policies`` plays ``n_games`` games (half with each colour) in the arena.

    Returns one :class:`Match` per unordered pair, in ``policies`` order.
    """
    names = list(policies)
    if len(names) < 2:
        raise ValueError(f"a round robin needs at least 2 policies, got {names}")
    out = []
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            r = arena(
                policies[a],
                policies[b],
                env,
                n_games,
                jax.random.fold_in(key, i * len(names) + j),
                opening_plies=opening_plies,
            )
            out.append(Match(a, b, r.overall.wins, r.overall.draws, r.overall.losses))
    return out


def sigmoid(x):
    """The logistic function, stable for any float array (``+-inf`` included)."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def check_connected(names: list[str], pairs: Iterable[tuple[int, int]]) -> None:
    """Raise a one-line ValueError if the pairings (index pairs into ``names``) leave players
    in groups that never met, directly or through others: their ratings are not comparable."""
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
    """Penalised Bradley-Terry MLE for B datasets at once: ``points`` float[B, P] of player
    ``pi[p]`` against ``pj[p]`` (indices into ``names``) in ``games[p]`` games -> Elo
    float[B, n], n = len(names), player ``anchor`` at 0.

    Newton steps on the free ratings (the anchor's fixed), capped at 1 nat per player so that a
    near-whitewash cannot overshoot; the Hessian is ``-(diag(sum_j q_ij) - q)`` with
    ``q_ij = N_ij p_ij (1 - p_ij)``, negative definite on a connected graph, so players that
    never met, directly or through others, are refused first (:func:`check_connected`).
    """
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
        delta = np.linalg.solve(neg_h, grad[..., None])[..., 0]
        big = np.max(np.abs(delta), axis=1, keepdims=True)
        delta = delta / np.maximum(big, 1.0)  # steps of at most 1 nat per player
        r[:, free] += delta
        if float(np.max(big)) < tol:
            break
    else:
        raise RuntimeError(
            "the Bradley-Terry fit did not converge (with prior = 0 a player that won or lost "
            "every game has no finite rating)"
        )
    return r * ELO_PER_NAT


def bradley_terry(
    matches: list[Match], anchor: str | None = None, prior: float = 1.0
) -> dict[str, float]:
    """Fit Elo ratings to ``matches`` (:func:`fit_elo`). Returns ``{name: elo}`` sorted best
    first; the mean is 0, or ``anchor``'s rating is 0 if given. ``prior``: virtual draws added
    per match."""
    if not matches:
        raise ValueError("no matches to fit")
    names = sorted({m.a for m in matches} | {m.b for m in matches})
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not among the players: {names}")
    if prior < 0:
        raise ValueError(f"prior must be >= 0 (virtual draws per match), got {prior}")
    for m in matches:
        if min(m.wins, m.draws, m.losses) < 0:
            raise ValueError(f"negative counts in {m}")
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


def expected_score(elo_a: float, elo_b: float) -> float:
    """Bradley-Terry/Elo expected score of A against B."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


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

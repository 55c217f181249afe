"""Elo ratings from a round robin, fitted as a Bradley-Terry model.

    table = round_robin({"random": r, "greedy": g, "alphabeta:2": ab}, env, n_games=1000, key=key)
    ratings = bradley_terry(table)               # {name: elo}, mean 0 (or anchor="random" at 0)
    write_ratings_csv(ratings, table, "runs/elo/ratings.csv")
    plot_ratings(ratings, "runs/elo/elo.png")

Model: ``P(i beats j) = 1 / (1 + 10 ** ((elo_j - elo_i) / 400))``; a draw counts as half a win
for each side. Fitted by the minorisation-maximisation iteration of Hunter (2004), with
``prior`` virtual draws added to every pair that played (keeps ratings finite when a policy
never wins or never loses).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os

import jax
import numpy as np

from jaxgames.core import Env
from jaxgames.evaluation.arena import arena
from jaxgames.evaluation.opponents import Policy

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


def bradley_terry(
    matches: list[Match],
    anchor: str | None = None,
    prior: float = 1.0,
    iterations: int = 10_000,
    tol: float = 1e-10,
) -> dict[str, float]:
    """Fit Elo ratings to ``matches``. Returns ``{name: elo}`` sorted best first; the mean is 0,
    or ``anchor``'s rating is 0 if given. ``prior``: virtual draws added per played pair."""
    names = sorted({m.a for m in matches} | {m.b for m in matches})
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not among the players: {names}")
    idx = {n: k for k, n in enumerate(names)}
    n = len(names)
    score = np.zeros((n, n))  # score[i, j]: points of i against j
    for m in matches:
        i, j = idx[m.a], idx[m.b]
        if min(m.wins, m.draws, m.losses) < 0:
            raise ValueError(f"negative counts in {m}")
        score[i, j] += m.wins + 0.5 * m.draws + 0.5 * prior
        score[j, i] += m.losses + 0.5 * m.draws + 0.5 * prior
    games = score + score.T
    wins = score.sum(1)
    gamma = np.ones(n)
    for _ in range(iterations):
        denom = (games / (gamma[:, None] + gamma[None, :])).sum(1)
        new = np.where(denom > 0, wins / np.maximum(denom, 1e-300), gamma)
        new = new / np.exp(np.mean(np.log(new)))
        done = np.max(np.abs(np.log(new) - np.log(gamma))) < tol
        gamma = new
        if done:
            break
    elo = ELO_PER_NAT * np.log(gamma)
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

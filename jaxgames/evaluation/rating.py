"""Rating a player on a ladder: its matches against the rungs, the report of ``jaxgames rate``."""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Sequence

import jax

from jaxgames.core import Env, Policy
from jaxgames.evaluation.elo import Rating
from jaxgames.evaluation.ladder import Ladder, Pairing, rate_against_ladder
from jaxgames.evaluation.match import MatchResult, play_match
from jaxgames.evaluation.openings import FewOpenings


@dataclasses.dataclass
class RatingReport:
    """:func:`rate_policy`'s result: the player's rating and its games against each rung."""

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
                f"{spec:<24} {str(rr):>18}  {m.as_first.wdl:>12}  {m.as_second.wdl:>12}  "
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
        rows = [
            dict(rung=spec, rung_rating=rr.to_json(), **m.to_dict())
            for spec, rr, m in zip(self.rungs, self.rung_ratings, self.matches)
        ]
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
    """Rate ``policy`` on ``ladder``: :func:`~jaxgames.evaluation.match.play_match` against
    every rung (or ``rungs``, built by ``make_rung(spec)``) on the first ``games_per_rung / 2``
    ladder openings (default: the ladder's games per pairing), the ladder's rung k with
    ``fold_in(key, k)`` (a rung's games do not depend on which other rungs are played, nor in
    what order), then :func:`~jaxgames.evaluation.ladder.rate_against_ladder`."""
    ladder.check_env(env)
    games = ladder.games_per_pairing if games_per_rung is None else int(games_per_rung)
    if games < 2 or games % 2:
        raise ValueError(f"games_per_rung must be even and >= 2, got {games_per_rung}")
    specs = list(ladder.specs if rungs is None else rungs)
    for s in specs:
        ladder.rating(s)  # KeyError for an unknown rung
    n = games // 2
    try:  # a repeated opening is no new evidence: the interval would be too narrow
        states = ladder.opening_states(env, n, repeat=False)
    except FewOpenings as e:
        raise ValueError(
            f"games_per_rung={games}: the {ladder.game} ladder's openings ({ladder.plies} "
            f"random plies) have {e.distinct} distinct positions, so at most {2 * e.distinct} "
            "games per rung"
        ) from None
    key = jax.random.PRNGKey(0) if key is None else key
    matches = []
    for spec in specs:
        t0 = time.perf_counter()
        k = ladder.specs.index(spec)
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

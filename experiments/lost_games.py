"""When an agent's games are lost: the lengths of its lost games, per colour, in the targets'
games.

    python experiments/lost_games.py --game animal_shogi --a pretrained:animal_shogi --b engine:4
    python experiments/lost_games.py --game reversi:8 --a pretrained:reversi8 --b greedy

The games are those of ``experiments/strength_targets.py`` (and of ``jaxgames eval``):
``--games`` per colour, all in one :func:`jaxgames.evaluation.arena.arena` call with
``PRNGKey(--seed)`` and the game's ladder openings (4 random plies on reversi and animal
shogi). A game lost at the ply right after the opening as second player was lost before the
agent moved: the random plies left the first player a winning move. Those games bound what any
agent can score at that protocol (animal shogi: docs/results.md, "Openings that decide
animal-shogi games").

Prints, per colour of A: W/D/L and the number of lost games at each length (plies, the
opening's included); ``--json FILE`` writes the same numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jaxgames  # noqa: E402
from experiments.common import eval_opening_plies, parse_game, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.arena import arena  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402


def play(game: str, a: str, b: str, games: int, seed: int) -> dict:
    """A against B, ``games`` per colour; per colour W/D/L and lost games by length."""
    name, options, _ = parse_game(game)
    env = jaxgames.make(name, **options)
    opening = eval_opening_plies(env)
    t0 = time.perf_counter()
    result = arena(
        make_opponent(a, env),
        make_opponent(b, env),
        env,
        2 * games,
        jax.random.PRNGKey(seed),
        opening_plies=opening,
    )
    out = dict(game=game, a=a, b=b, games_per_colour=games, seed=seed, opening_plies=opening)
    for side, colour, record in ((0, "first", result.as_first), (1, "second", result.as_second)):
        lost = (result.outcomes < 0) & (result.a_player == side)
        lengths, counts = np.unique(result.plies[lost], return_counts=True)
        out[colour] = dict(
            wins=record.wins,
            draws=record.draws,
            losses=record.losses,
            lost_at_plies={int(n): int(c) for n, c in zip(lengths, counts)},
        )
    out["seconds"] = time.perf_counter() - t0
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="animal_shogi", help="e.g. animal_shogi, reversi:8")
    p.add_argument("--a", required=True, help="the agent's spec")
    p.add_argument("--b", required=True, help="the opponent's spec")
    p.add_argument("--games", type=int, default=200, help="games per colour (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the result to this JSON file")
    args = p.parse_args(argv)
    if args.games < 1:
        p.error(f"--games must be >= 1, got {args.games}")
    out = play(args.game, args.a, args.b, args.games, args.seed)
    print(
        f"{args.game}: A = {args.a}, B = {args.b}, {args.games} games per colour, "
        f"{out['opening_plies']} opening plies, seed {args.seed} ({out['seconds']:.0f} s)"
    )
    for colour in ("first", "second"):
        c = out[colour]
        lengths = ", ".join(f"{n}: {k}" for n, k in c["lost_at_plies"].items()) or "none"
        record = f"W {c['wins']} D {c['draws']} L {c['losses']}"
        print(f"A as {colour}: {record}; lost games by length (plies: games) {lengths}")
    if args.json:
        print(f"wrote {write_json(args.json, out)}")
    return out


if __name__ == "__main__":
    sys.exit(report_errors(main))

"""How an agent's reversi games end, per colour: full board, both sides blocked, or wipe-out.

    python experiments/reversi_endings.py --a pretrained:reversi8 --b greedy
    python experiments/reversi_endings.py --size 6 --a mcts:64:pretrained:reversi6 --b engine:4

A reversi game ends when the board is full, when neither side can place a disc with empty
squares left, or when one side has no discs at all (a *wipe-out*: the other side wins by all
its discs, however few). A network trained in pure self-play never meets an opponent that
grabs discs, so it may not see a wipe-out coming; this script counts them. ``--games``
openings of ``--opening-plies`` random plies (the ladder's protocol) are each played twice,
A as black and as white, all at once in one jitted loop
(:func:`jaxgames.evaluation.arena.play_from`, the colours paired on the same random numbers).

Prints, per colour of A: W/D/L, and for A's wins and losses how the games ended (full board,
blocked, wiped out) with their mean length in plies and mean disc margin; ``--json FILE``
writes the same numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jaxgames  # noqa: E402
from experiments.common import reversi_discs, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.elo import Record  # noqa: E402
from jaxgames.evaluation.match import game_outcomes, play_from  # noqa: E402
from jaxgames.evaluation.openings import openings  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402

ENDINGS = ("full board", "blocked", "wiped out")


def play(a: str, b: str, size: int, games: int, opening_plies: int, seed: int) -> dict:
    """``games`` openings, each played with A as black and as white; per-colour endings."""
    env = jaxgames.make("reversi", size=size)
    policy_a, policy_b = make_opponent(a, env), make_opponent(b, env)
    starts = openings(env, games, opening_plies, seed=seed)
    states = jax.tree_util.tree_map(lambda x: jnp.concatenate([x, x]), starts)
    a_player = jnp.repeat(jnp.arange(2, dtype=jnp.int32), games)

    @jax.jit
    def run(key):
        final, total = play_from(policy_a, policy_b, env, states, a_player, key, paired=True)
        return (total, *reversi_discs(final, a_player), final)

    t0 = time.perf_counter()
    total, mine, theirs, final = jax.device_get(run(jax.random.PRNGKey(seed)))
    seconds = time.perf_counter() - t0
    outcome = game_outcomes(total, a_player)
    plies = np.asarray(final.step_count) - np.asarray(states.step_count)  # after the opening
    ending = np.where((mine == 0) | (theirs == 0), 2, np.where(mine + theirs == size * size, 0, 1))
    out = {"a": a, "b": b, "size": size, "games_per_colour": games, "seed": seed}
    for colour, name in enumerate(("black", "white")):
        sel = np.asarray(a_player) == colour
        record = Record.of(outcome[sel])
        row = {"wins": record.wins, "draws": record.draws, "losses": record.losses}
        for result, sign in (("won", 1), ("lost", -1)):
            for k, how in enumerate(ENDINGS):
                pick = sel & (outcome == sign) & (ending == k)
                row[f"{result}: {how}"] = {
                    "games": int(pick.sum()),
                    "mean_plies": float(plies[pick].mean()) if pick.any() else None,
                    "mean_margin": float((mine - theirs)[pick].mean()) if pick.any() else None,
                }
        out[name] = row
    out["seconds"] = seconds
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", default="pretrained:reversi8", help="the agent's spec")
    ap.add_argument("--b", default="greedy", help="the opponent's spec")
    ap.add_argument("--size", type=int, default=8, help="board size (default 8)")
    ap.add_argument("--games", type=int, default=100, help="openings, each played twice")
    ap.add_argument("--opening-plies", type=int, default=4, help="random plies (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the result to this JSON file")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games must be >= 1, got {args.games}")
    if args.opening_plies < 0:
        ap.error(f"--opening-plies must be >= 0, got {args.opening_plies}")
    out = play(args.a, args.b, args.size, args.games, args.opening_plies, args.seed)
    print(
        f"reversi {args.size}x{args.size}: A = {args.a}, B = {args.b}, {args.games} openings of "
        f"{args.opening_plies} random plies x 2 colours, seed {args.seed} ({out['seconds']:.0f} s)"
    )
    for name in ("black", "white"):
        c = out[name]
        print(f"A as {name}: W {c['wins']} D {c['draws']} L {c['losses']}")
        for result in ("won", "lost"):
            for how in ENDINGS:
                e = c[f"{result}: {how}"]
                if e["games"]:
                    print(
                        f"    {result:4s} {how:10s} {e['games']:4d} games, "
                        f"{e['mean_plies']:5.1f} plies, margin {e['mean_margin']:+6.1f}"
                    )
    if args.json:
        print(f"wrote {write_json(args.json, out)}")
    return out


if __name__ == "__main__":
    sys.exit(report_errors(main))

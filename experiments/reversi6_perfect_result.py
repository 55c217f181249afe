"""How often an agent reaches the perfect-play result of 6x6 reversi against a strong engine.

    python experiments/reversi6_perfect_result.py --agent mcts:64:pretrained:reversi6
    python experiments/reversi6_perfect_result.py --agent pretrained:reversi6 --games 200

6x6 reversi is solved: with perfect play white wins 20-16 (Feinstein, 1993; confirmed by
later exhaustive searches). Against ``--opponent`` (default ``engine:6``: depth 6, exact
from 10 empties) the agent plays ``--games`` games as white and as many as black. Every game
opens with one uniformly random black move: the four first moves are images of one another
under the board's symmetries (the diagonal reflections and the half turn), so every game
starts from a position whose perfect-play result is still 20-16 for white, while an agent
that is not symmetric meets four different boards and the engine breaks its ties at random.
A game *reaches the perfect-play result* for the agent when it ends with at least 20 of the
agent's discs as white, at least 16 as black (empty squares count for nobody).

Prints, per colour: W/D/L, the mean of the agent's discs, the fraction of games that reach
the perfect-play result with a 95% Wilson interval, the final scores (the agent's discs - the
opponent's, most common first: a win short of 20-16 as white shows here) and how many
different final boards the games ended on (deterministic players repeat games; the interval
treats games as independent, so it is only as wide as the variety of games allows);
``--json FILE`` writes them too.

``--trace E`` shows *where* a white game loses the margin: the agent plays white once after
each of the four first moves, and every position from E empties on is solved exactly
(:func:`jaxgames.evaluation.reversi_engine.solve_endgame`, perfect play by both sides); each
line prints white's exact margin at the first solved position and every move after which it
changed (the agent's moves that lose discs, the opponent's that give them). A line already
below +4 at E empties lost the perfect-play margin before the exact endgame.
Games run in parallel in one jitted loop, the two colours paired on the same random numbers
(:func:`jaxgames.evaluation.arena.play_from` with ``paired=True``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jaxgames  # noqa: E402
from experiments.common import reversi_discs, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.elo import Record, wilson_interval  # noqa: E402
from jaxgames.evaluation.match import play_from  # noqa: E402
from jaxgames.evaluation.reversi_engine import solve_endgame  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402

#: discs of each colour under perfect play on 6x6 (black, white)
PERFECT_DISCS = (16, 20)


def play(agent: str, opponent: str, games: int, seed: int) -> dict:
    """``games`` games with the agent as black and ``games`` as white; per-colour results."""
    env = jaxgames.make("reversi", size=6)
    policy_a, policy_b = make_opponent(agent, env), make_opponent(opponent, env)
    a_player = jnp.repeat(jnp.arange(2, dtype=jnp.int32), games)
    key_init, key_play = jax.random.split(jax.random.PRNGKey(seed))

    @jax.jit
    def run(key):
        states = jax.vmap(env.init)(jax.random.split(key_init, 2 * games))
        final, total = play_from(
            policy_a, policy_b, env, states, a_player, key, opening_plies=1, paired=True
        )
        agent_moves = final.current_player == a_player
        boards = jnp.where(agent_moves[:, None], final.mover, final.opponent)  # agent's discs
        boards = jnp.concatenate([boards, final.mover | final.opponent], axis=-1)
        return (total, *reversi_discs(final, a_player), boards)

    t0 = time.perf_counter()
    total, discs, their_discs, boards = jax.device_get(run(key_play))
    seconds = time.perf_counter() - t0
    mine = total[np.arange(2 * games), a_player]
    out = {"agent": agent, "opponent": opponent, "games_per_colour": games, "seed": seed}
    for colour, name in enumerate(("black", "white")):
        sel = np.asarray(a_player) == colour
        record = Record.of(mine[sel])
        reached = int(np.sum(discs[sel] >= PERFECT_DISCS[colour]))
        low, high = wilson_interval(reached, games)
        scores = Counter(f"{a}-{b}" for a, b in zip(discs[sel], their_discs[sel]))
        out[name] = {
            "distinct_games": len({b.tobytes() for b in boards[sel]}),
            "wins": record.wins,
            "draws": record.draws,
            "losses": record.losses,
            "score": record.score,
            "mean_discs": float(np.mean(discs[sel])),
            "final_scores": dict(scores.most_common()),
            "perfect_discs": PERFECT_DISCS[colour],
            "reached": reached,
            "reached_rate": reached / games,
            "reached_ci": [low, high],
        }
    out["seconds"] = seconds
    return out


def trace(agent: str, opponent: str, exact_empties: int, seed: int) -> list[dict]:
    """The agent as white after each of the four first moves, every position with at most
    ``exact_empties`` empty squares solved exactly: one dict per line with white's exact margin
    at the first solved position and the moves that changed it (ply, mover, empties, action,
    margin before -> after), all played and solved in one jitted program."""
    env = jaxgames.make("reversi", size=6)
    policies = (make_opponent(opponent, env), make_opponent(agent, env))  # black, white
    start = env.init(jax.random.PRNGKey(0))
    firsts = jnp.flatnonzero(start.legal_action_mask, size=4)
    lines = len(firsts)
    max_plies = 2 * env.num_actions  # every ply places a disc or passes, never two passes

    @jax.jit
    def run(key):
        states = jax.vmap(env.step)(jax.tree.map(lambda x: jnp.stack([x] * lines), start), firsts)

        def ply(states, k):
            keys = jax.random.split(k, lines)
            moves = [jax.vmap(p)(keys, states) for p in policies]
            action = jnp.where(states.current_player == 1, moves[1], moves[0])
            return jax.vmap(env.step)(states, action), (states, action)

        final, (seen, actions) = jax.lax.scan(ply, states, jax.random.split(key, max_plies))
        flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), seen)
        exact, _ = jax.vmap(lambda s: solve_endgame(env, s, exact_empties))(flat)
        exact = exact.reshape(max_plies, lines)
        exact = jnp.where(seen.current_player == 1, exact, -exact)
        white, black = reversi_discs(seen, 1)
        exact = jnp.where(seen.terminated, white - black, exact)  # a finished game: its margin
        empties = env.num_actions - 1 - white - black  # the last action is the pass
        final_white, final_black = reversi_discs(final, 1)
        return (
            seen.current_player,
            seen.terminated,
            empties,
            actions,
            exact,
            final_white - final_black,
        )

    mover, over, empties, actions, exact, final = jax.device_get(run(jax.random.PRNGKey(seed)))
    out = []
    for line in range(lines):
        solved = [t for t in range(max_plies) if empties[t, line] <= exact_empties]
        first = solved[0] if solved else None
        changes = [
            {
                "ply": t + 1,  # the random first move is ply 0
                "mover": ("black", "white")[int(mover[t, line])],
                "empties": int(empties[t, line]),
                "action": int(actions[t, line]),
                "before": int(exact[t, line]),
                "after": int(exact[t + 1, line]),
            }
            for t in solved[:-1]
            if not over[t, line] and exact[t + 1, line] != exact[t, line]
        ]
        out.append(
            {
                "first_move": int(firsts[line]),
                "first_solved_empties": None if first is None else int(empties[first, line]),
                "white_exact_margin": None if first is None else int(exact[first, line]),
                "changes": changes,
                "white_final_margin": int(final[line]),
            }
        )
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agent", default="mcts:64:pretrained:reversi6", help="the agent's spec")
    ap.add_argument("--opponent", default="engine:6", help="the engine's spec")
    ap.add_argument("--games", type=int, default=200, help="games per colour (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the result to this JSON file")
    ap.add_argument(
        "--trace",
        type=int,
        metavar="E",
        help="instead: where each white line changes its exact margin from E empties on (4 games)",
    )
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games must be >= 1, got {args.games}")
    if args.trace is not None:
        if not 1 <= args.trace <= 20:
            ap.error(f"--trace must be between 1 and 20 empties, got {args.trace}")
        lines = trace(args.agent, args.opponent, args.trace, args.seed)
        head = f"reversi 6x6: {args.agent} as white vs {args.opponent}"
        print(f"{head}, exact from {args.trace} empties")
        for ln in lines:
            if ln["white_exact_margin"] is None:  # over before E empties (a wipe-out)
                print(f"first move {ln['first_move']:2d}: final {ln['white_final_margin']:+d}")
                continue
            print(
                f"first move {ln['first_move']:2d}: white's exact margin "
                f"{ln['white_exact_margin']:+d} at {ln['first_solved_empties']} empties, "
                f"final {ln['white_final_margin']:+d}"
            )
            for c in ln["changes"]:
                print(
                    f"    ply {c['ply']:2d} {c['mover']:5s} ({c['empties']:2d} empties) plays "
                    f"{c['action']:2d}: {c['before']:+d} -> {c['after']:+d}"
                )
        out = {"agent": args.agent, "opponent": args.opponent, "exact_empties": args.trace}
        out["lines"] = lines
        if args.json:
            print(f"wrote {write_json(args.json, out)}")
        return out
    out = play(args.agent, args.opponent, args.games, args.seed)
    print(
        f"reversi 6x6: {args.agent} vs {args.opponent}, {args.games} games per colour, seed "
        f"{args.seed}, one random opening move ({out['seconds']:.0f} s)"
    )
    print(
        "agent as   W / D / L        score   mean discs   final boards   "
        "perfect-play result reached"
    )
    for name in ("black", "white"):
        c = out[name]
        low, high = c["reached_ci"]
        print(
            f"{name:9s}  {c['wins']:3d} / {c['draws']:2d} / {c['losses']:3d}   {c['score']:.3f}"
            f"   {c['mean_discs']:10.1f}   {c['distinct_games']:12d}   "
            f"{c['reached']:3d}/{args.games} "
            f"({c['perfect_discs']}+ discs) {c['reached_rate']:.1%} [{low:.1%}, {high:.1%}]"
        )
        scores = ", ".join(f"{s} x{n}" for s, n in list(c["final_scores"].items())[:6])
        more = len(c["final_scores"]) - 6
        print(f"           final scores: {scores}" + (f" (+{more} more)" if more > 0 else ""))
    if args.json:
        print(f"wrote {write_json(args.json, out)}")
    return out


if __name__ == "__main__":
    sys.exit(report_errors(main))

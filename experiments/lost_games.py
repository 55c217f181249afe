"""When an agent's games are lost: the lengths of its lost games, per colour, in the targets'
games.

    python experiments/lost_games.py --game animal_shogi --a pretrained:animal_shogi --b engine:4
    python experiments/lost_games.py --game reversi:8 --a pretrained:reversi8 --b greedy
    python experiments/lost_games.py --game reversi:6 --a mcts:64:pretrained:reversi6 \
        --b engine:4 --exact 14

The games are those of ``experiments/strength_targets.py`` (and of ``jaxgames eval``):
``--games`` per colour, those of one :func:`jaxgames.evaluation.arena.arena` call with
``PRNGKey(--seed)`` (its layout, key and game loop) and the game's ladder openings (4 random
plies on reversi and animal shogi). A game lost at the ply right after the opening as second
player was lost before the agent moved: the random plies left the first player a winning move.
Those games bound what any agent can score at that protocol (animal shogi: docs/results.md,
"Openings that decide animal-shogi games"; every opening lost whatever is played, not only at
the first move: ``experiments/forced_openings.py``).

``--exact E`` (reversi) splits the same games at the first position with at most E empty
squares, which is solved exactly (:func:`jaxgames.evaluation.reversi_engine.solve_endgame`):
the result perfect play by both sides from there would give, per colour, beside the result
the game had. A game lost but won or drawn at E empties was thrown away in its last E plies;
one already lost there was lost before. The games are still the targets' (the snapshot is
taken inside the same game loop, :func:`jaxgames.evaluation.arena.play_from`); a game over
before E empties counts with its own result. For a network agent (or a search over one) it
also scores A's value estimates at those positions against the exact results: how often the
value head (and the searched value) has the sign of the result, and its mean absolute error.
Solving costs ~0.05 s per position at 12 empties on 6x6 and ~1 s at 14 on the 2-core CPU (~3 s
at 16), more on 8x8.

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
from experiments.common import eval_opening_plies, parse_game, reversi_discs, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.elo import Record  # noqa: E402
from jaxgames.evaluation.match import MatchResult, arena_layout, play_games  # noqa: E402
from jaxgames.evaluation.reversi_engine import solve_endgame  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402


def play(game: str, a: str, b: str, games: int, seed: int, exact: int | None = None) -> dict:
    """A against B, ``games`` per colour; per colour W/D/L and lost games by length, and with
    ``exact`` (reversi) the split of the games at ``exact`` empties (module docstring)."""
    name, options, _ = parse_game(game)
    env = jaxgames.make(name, **options)
    if exact is not None and name != "reversi":
        raise ValueError(f"--exact needs a reversi game, not {game!r}")
    if exact is not None and not 1 <= exact <= 20:
        raise ValueError(f"--exact must be between 1 and 20 empties, got {exact}")
    opening = eval_opening_plies(env)
    a_player, game_ids = arena_layout(2 * games)
    cells = env.num_actions - 1  # the last action is the pass

    def late(state):  # a live position with at most `exact` empty squares
        discs = sum(reversi_discs(state, state.current_player))
        return ~state.terminated & (cells - discs <= exact)

    pa, pb = make_opponent(a, env), make_opponent(b, env)
    t0 = time.perf_counter()
    # arena()'s games: its layout, key and loop (play_games), with a snapshot when asked
    run = jax.jit(
        lambda k: play_games(
            pa, pb, env, a_player, k, opening, None, game_ids, None if exact is None else late
        )
    )
    total, plies, *snaps = jax.device_get(run(jax.random.PRNGKey(seed)))
    result = MatchResult.of(a_player, game_ids, total, plies)
    side, outcome = result.a_player, result.outcomes
    out = dict(game=game, a=a, b=b, games_per_colour=games, seed=seed, opening_plies=opening)
    if exact is not None:
        out["exact_empties"] = exact
        at_e = exact_outcomes(env, snaps[0], side, exact)
        live = ~np.asarray(snaps[0].terminated)
        estimates = value_estimates(pa, snaps[0], side)
    for player, colour, record in ((0, "first", result.as_first), (1, "second", result.as_second)):
        sel = side == player
        o = outcome[sel]
        lengths, counts = np.unique(result.plies[sel & (outcome < 0)], return_counts=True)
        out[colour] = dict(
            wins=record.wins,
            draws=record.draws,
            losses=record.losses,
            lost_at_plies={int(n): int(c) for n, c in zip(lengths, counts)},
        )
        if exact is not None:
            e = at_e[sel]
            perfect = Record.of(e)
            out[colour]["at_exact"] = dict(
                wins=perfect.wins,
                draws=perfect.draws,
                losses=perfect.losses,
                score=perfect.score,
                score_ci=list(perfect.ci("score")),
                # [result at E empties][final result], each W / D / L
                table=[[int(np.sum((e == x) & (o == y))) for y in (1, 0, -1)] for x in (1, 0, -1)],
                values={k: value_accuracy(v[sel], e, live[sel]) for k, v in estimates.items()},
            )
    out["seconds"] = time.perf_counter() - t0
    return out


def value_estimates(policy, snaps, a_player: np.ndarray) -> dict[str, np.ndarray]:
    """A's value estimates (A's view, in [-1, 1]) at the snapshots: a network's value head
    (``network``); for a search agent its searched value (``search``) and its guide's
    (``network``). Empty for a player without values (an engine)."""
    heads = {}
    if hasattr(policy, "guide"):  # a SearchPolicy
        heads = {"search": policy.value, "network": policy.guide.value}
    elif hasattr(policy, "value"):
        heads = {"network": policy.value}
    to_move = np.asarray(snaps.current_player) == a_player
    return {
        k: np.where(to_move, 1.0, -1.0) * np.asarray(jax.jit(jax.vmap(f))(snaps))
        for k, f in heads.items()
    }


def value_accuracy(value: np.ndarray, exact: np.ndarray, live: np.ndarray) -> dict:
    """How well values predict exact results (1 / 0 / -1) at the live snapshots: the share of
    decided positions (exact result not a draw) whose value has the result's sign, and the
    mean absolute error over all of them."""
    decided = live & (exact != 0)
    agree = np.sign(value[decided]) == exact[decided]
    return dict(
        positions=int(np.sum(live)),
        sign_agreement=float(np.mean(agree)) if agree.size else float("nan"),
        mean_abs_error=float(np.mean(np.abs(value[live] - exact[live]))) if live.any() else 0.0,
    )


def exact_outcomes(env, snaps, a_player: np.ndarray, empties: int, chunk: int = 50) -> np.ndarray:
    """int[G] the result for A (1 / 0 / -1) of perfect play from each game's snapshot (a
    finished game: its own result), solved in chunks of ``chunk`` positions."""
    solve = jax.jit(jax.vmap(lambda s: solve_endgame(env, s, empties)[0]))
    g = len(a_player)
    margin = np.zeros(g, np.int64)
    live = np.flatnonzero(~np.asarray(snaps.terminated))
    for lo in range(0, len(live), chunk):
        part = live[lo : lo + chunk]
        pad = np.concatenate([part, np.full(chunk - len(part), part[0])])  # one compile
        m = np.asarray(solve(jax.tree.map(lambda x: x[pad], snaps)))[: len(part)]
        to_move = np.asarray(snaps.current_player)[part] == a_player[part]
        margin[part] = np.where(to_move, m, -m)
    done = np.asarray(snaps.terminated)
    mine, theirs = (np.asarray(x) for x in reversi_discs(snaps, a_player))
    margin[done] = (mine - theirs)[done]
    return np.sign(margin)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="animal_shogi", help="e.g. animal_shogi, reversi:8")
    p.add_argument("--a", required=True, help="the agent's spec")
    p.add_argument("--b", required=True, help="the opponent's spec")
    p.add_argument("--games", type=int, default=200, help="games per colour (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--exact",
        type=int,
        metavar="E",
        help="reversi: also solve each game at E empties (module docstring)",
    )
    p.add_argument("--json", help="also write the result to this JSON file")
    args = p.parse_args(argv)
    if args.games < 1:
        p.error(f"--games must be >= 1, got {args.games}")
    out = play(args.game, args.a, args.b, args.games, args.seed, args.exact)
    print(
        f"{args.game}: A = {args.a}, B = {args.b}, {args.games} games per colour, "
        f"{out['opening_plies']} opening plies, seed {args.seed} ({out['seconds']:.0f} s)"
    )
    for colour in ("first", "second"):
        c = out[colour]
        lengths = ", ".join(f"{n}: {k}" for n, k in c["lost_at_plies"].items()) or "none"
        record = f"W {c['wins']} D {c['draws']} L {c['losses']}"
        print(f"A as {colour}: {record}; lost games by length (plies: games) {lengths}")
        if "at_exact" in c:
            e = c["at_exact"]
            low, high = e["score_ci"]
            print(
                f"    perfect play from {args.exact} empties: W {e['wins']} D {e['draws']} "
                f"L {e['losses']}, score {e['score']:.1%} [{low:.1%}, {high:.1%}]"
            )
            for row, (w, d, lo) in zip(("won", "drawn", "lost"), e["table"]):
                print(f"    {row:5s} at {args.exact} empties -> ended W {w} D {d} L {lo}")
            for head, acc in e["values"].items():
                print(
                    f"    A's {head} value there: sign of the exact result in "
                    f"{acc['sign_agreement']:.1%} of the decided positions, mean |error| "
                    f"{acc['mean_abs_error']:.2f} ({acc['positions']} positions)"
                )
    if args.json:
        print(f"wrote {write_json(args.json, out)}")
    return out


if __name__ == "__main__":
    sys.exit(report_errors(main))

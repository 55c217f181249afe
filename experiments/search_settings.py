"""Play-time search settings: one agent with N simulations of Gumbel MuZero search per move
under several settings, each against the same opponent, side by side (per-colour scores with
95% Wilson intervals).

    python experiments/search_settings.py --game reversi:8 --agent pretrained:reversi8 \\
        --sims 64 --considered 4 8 16 --value-scales 0.1 1.0 \\
        --opponent mcts:64:pretrained:reversi8 --games 200 --out runs/search_settings

The settings are the Gumbel MuZero ones a player may change without more simulations:
``--considered`` (the root moves kept by the Gumbel top-k for sequential halving; fewer moves
get more visits each) and ``--value-scales`` (c_scale of the searched values, how far they move
a move's prior; see :func:`jaxgames.agents.search.search_batch`). 16 and 0.1 (mctx's defaults)
are those of ``mcts:N:<agent>`` and of every number in the docs; ``mcts:N/K/C:<agent>`` plays
with K and C (the table's player column). Settings chosen against the opponent of a target
would be fitted to it: choose them against another player (the default settings, as above),
then measure the choice once against the target's opponent.

Writes ``<out>/settings.csv`` (one row per setting: W/D/L, score and interval per colour),
``<out>/table.md`` and ``<out>/config.json``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402

import jaxgames  # noqa: E402
from experiments.common import (  # noqa: E402
    colour_cell,
    colour_columns,
    eval_opening_plies,
    parse_game,
    prepare_out,
    write_csv,
)
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.match import arena  # noqa: E402
from jaxgames.specs import make_opponent, parse_spec  # noqa: E402


def play_settings(
    env,
    agent: str,
    opponent: str,
    sims: int,
    settings: list[tuple[int, float]],
    games: int,
    seed: int,
    echo=print,
) -> list[dict]:
    """One row per (considered, value_scale) of ``settings``: ``agent`` searching ``sims``
    simulations per move with it against ``opponent``, ``games`` games per colour from the
    ladder openings, the same games (key ``seed``) for every setting."""
    rival = make_opponent(opponent, env)
    rows = []
    for considered, value_scale in settings:
        t0 = time.perf_counter()
        # the player is the one its spec names (mcts:N/K/C:<agent>), built by the spec layer
        spec = str(parse_spec(f"mcts:{sims}/{considered}/{value_scale!r}:{agent}"))
        result = arena(
            make_opponent(spec, env),
            rival,
            env,
            2 * games,
            jax.random.PRNGKey(seed),
            opening_plies=eval_opening_plies(env),
        )
        row = dict(
            considered=considered, value_scale=value_scale, spec=spec, games_per_colour=games
        )
        row.update(colour_columns(result.as_first, result.as_second))
        low, high = result.overall.ci("score")
        row.update(score=result.overall.score, score_low=low, score_high=high)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        echo(
            f"considered {considered:>2}, c_scale {value_scale:g}: score {row['score']:.1%} "
            f"[{low:.1%}, {high:.1%}] (first {row['first_score']:.1%}, second "
            f"{row['second_score']:.1%}; {row['seconds']:.0f} s)"
        )
        rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [
        "| considered | c_scale | player | as first: W/D/L, score | as second: W/D/L, score "
        "| score |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['considered']} | {r['value_scale']:g} | `{r['spec']}` "
            f"| {colour_cell(r, 'first')} | {colour_cell(r, 'second')} "
            f"| {r['score']:.1%} [{r['score_low']:.1%}, {r['score_high']:.1%}] |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="reversi:8", help="e.g. reversi:8, animal_shogi")
    ap.add_argument("--agent", default="pretrained:reversi8", help="the guiding network's spec")
    ap.add_argument("--sims", type=int, default=64, help="simulations per move")
    ap.add_argument("--considered", type=int, nargs="+", default=[16])
    ap.add_argument("--value-scales", type=float, nargs="+", default=[0.1])
    ap.add_argument("--opponent", required=True, help="a player spec, e.g. engine:3")
    ap.add_argument("--games", type=int, default=200, help="games per colour")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="10 games per colour (a smoke run)")
    ap.add_argument("--out", default="runs/search_settings")
    a = ap.parse_args(argv)
    if a.quick:
        a.games = 10
    if a.games < 1:
        ap.error(f"--games must be >= 1, got {a.games}")
    name, options, _ = parse_game(a.game)
    env = jaxgames.make(name, **options)
    settings = list(itertools.product(a.considered, a.value_scales))
    prepare_out(a.out, vars(a))
    rows = play_settings(env, a.agent, a.opponent, a.sims, settings, a.games, a.seed)
    write_csv(os.path.join(a.out, "settings.csv"), rows)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(
            f"`{a.agent}` with {a.sims} simulations per move against `{a.opponent}`, "
            f"{a.games} games per colour, seed {a.seed}\n\n" + markdown(rows)
        )
    print(f"wrote {a.out}/settings.csv and table.md")
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))

"""The AlphaZero strength targets at their own protocol: every target pairing of an agent, at
least 200 games per colour from varied openings, the score of each colour with its 95% Wilson
interval, met or not.

    python experiments/strength_targets.py                              # the shipped agents
    python experiments/strength_targets.py --agents reversi8 --sims 64
    python experiments/strength_targets.py --agents reversi8 --settings 8/1   # mcts:64/8/1:...
    python experiments/strength_targets.py --agents reversi8 --settings 8/1/w # + win check
    python experiments/strength_targets.py --agents reversi8 --opponents engine:4 engine:2
    python experiments/strength_targets.py --agent animal_shogi=runs/X/animal_shogi_alphazero/seed0
    python experiments/strength_targets.py --agent tic_tac_toe=runs/ttt-az --agents tic_tac_toe
    python experiments/strength_targets.py --agent reversi6=sym:pretrained:reversi6  # averaged
    python experiments/strength_targets.py --quick       # 10 games per colour: a smoke run

The targets (:data:`TARGETS`) are those of the AlphaZero issue: the agent with ``--sims``
simulations of Gumbel MuZero search per move (``mcts:N:<agent>``, at most 64 for a target to
count) against ``engine:4`` (and ``uct:1000`` on 8x8), the network alone (greedy) against
``engine:2``, the 6x6 perfect-play result as white against ``engine:6``
(:mod:`experiments.reversi6_perfect_result`), and no loss to the perfect tic-tac-toe player.
A score target is met when the score of *each* colour reaches it (win 1, draw 1/2); the
table also says whether the lower end of each colour's interval clears it. Games open with the
game's ladder openings (4 random plies on reversi and animal shogi, none on tic-tac-toe: its
perfect player breaks ties at random), so a deterministic agent meets many games.

The ladder ratings (``jaxgames rate``) play 50 games per colour and rung: enough to place an
agent, too few to settle a target; this script plays the target pairings only, with
``--games`` per colour (default 200).

Writes ``<out>/`` (default ``runs/strength_targets``): ``table.md``, ``targets.csv`` and
``targets.json`` (per colour W/D/L, score and interval, met), plus ``config.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402

import jaxgames  # noqa: E402
from experiments import reversi6_perfect_result  # noqa: E402
from experiments.common import (  # noqa: E402
    colour_cell,
    colour_columns,
    eval_opening_plies,
    prepare_out,
    write_csv,
    write_json,
)
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.elo import Record  # noqa: E402
from jaxgames.evaluation.match import arena  # noqa: E402
from jaxgames.specs import make_opponent, parse_spec  # noqa: E402

#: the most simulations per move a search target allows
MAX_TARGET_SIMS = 64


@dataclasses.dataclass(frozen=True)
class Target:
    """One target pairing: the agent (with search or alone) against ``opponent``.

    kind: ``"score"`` (each colour's score >= ``threshold``), ``"no_losses"`` (no game lost),
    or ``"perfect_result"`` (6x6 only: the fraction of games as white that end with 20+ of the
    agent's discs, the perfect-play result, >= ``threshold``).
    """

    searched: bool
    opponent: str
    kind: str
    threshold: float = 0.0

    def player(self, agent: str, sims: int, settings: str | None = None) -> str:
        search = f"{sims}/{settings}" if settings else f"{sims}"
        return f"mcts:{search}:{agent}" if self.searched else agent

    def text(self) -> str:
        who = "with search" if self.searched else "network alone"
        if self.kind == "score":
            what = f">= {self.threshold:.0%} score each colour"
        elif self.kind == "no_losses":
            what = "never loses"
        else:
            what = f"20+ discs as white in >= {self.threshold:.0%} of games"
        return f"{who} vs {self.opponent}: {what}"


#: the games of the targets: key -> (game, options)
GAMES = {
    "reversi8": ("reversi", {"size": 8}),
    "reversi6": ("reversi", {"size": 6}),
    "animal_shogi": ("animal_shogi", {}),
    "tic_tac_toe": ("tic_tac_toe", {}),
}

TARGETS = {
    "reversi8": [
        Target(True, "engine:4", "score", 0.90),
        Target(True, "uct:1000", "score", 0.90),
        Target(False, "engine:2", "score", 0.70),
    ],
    "reversi6": [
        Target(True, "engine:4", "score", 0.95),
        Target(True, "engine:6", "perfect_result", 0.50),
        Target(False, "engine:2", "score", 0.80),
    ],
    "animal_shogi": [
        Target(True, "engine:4", "score", 0.90),
        Target(False, "engine:2", "score", 0.75),
    ],
    "tic_tac_toe": [
        Target(True, "perfect", "no_losses"),
        Target(False, "perfect", "no_losses"),
    ],
}

#: the agent of each game when no ``--agent`` names one (tic-tac-toe ships no AlphaZero agent:
#: ``jaxgames train alphazero --game tic_tac_toe`` makes one in ~20 s)
SHIPPED = {
    "reversi8": "pretrained:reversi8",
    "reversi6": "pretrained:reversi6",
    "animal_shogi": "pretrained:animal_shogi",
}


def _record(colour: dict) -> Record:
    return Record(colour["wins"], colour["draws"], colour["losses"])


def check(
    key: str,
    target: Target,
    agent: str,
    sims: int,
    games: int,
    seed: int,
    settings: str | None = None,
) -> dict:
    """Play ``target``'s pairing on game ``key`` with ``games`` games per colour. Returns its
    row: W/D/L and score (95% interval) as first and as second player, the measure compared
    with the threshold, ``met`` (the target's test) and ``clear`` (the test passed by the lower
    end of the interval), both False when a search target used more than
    :data:`MAX_TARGET_SIMS` simulations."""
    game, options = GAMES[key]
    env = jaxgames.make(game, **options)
    player = target.player(agent, sims, settings)
    t0 = time.perf_counter()
    if target.kind == "perfect_result":
        out = reversi6_perfect_result.play(player, target.opponent, games, seed)
        sides = (_record(out["black"]), _record(out["white"]))
        reached, (low, high) = out["white"]["reached"], out["white"]["reached_ci"]
        measure = f"20+ discs as white {reached}/{games} [{low:.1%}, {high:.1%}]"
        met, clear = reached / games >= target.threshold, low >= target.threshold
    else:
        result = arena(
            make_opponent(player, env),
            make_opponent(target.opponent, env),
            env,
            2 * games,
            jax.random.PRNGKey(seed),
            opening_plies=eval_opening_plies(env),
        )
        sides = (result.as_first, result.as_second)
        if target.kind == "no_losses":
            measure = f"{result.overall.losses} lost of {2 * games}"
            met = clear = result.overall.losses == 0
        else:
            measure = "score " + " / ".join(f"{r.score:.1%}" for r in sides)
            met = all(r.score >= target.threshold for r in sides)
            clear = all(r.ci("score")[0] >= target.threshold for r in sides)
    allowed = not target.searched or sims <= MAX_TARGET_SIMS
    row = {
        "game": key,
        "target": target.text(),
        "player": player,
        "opponent": target.opponent,
        "games_per_colour": games,
        "measure": measure,
        "met": bool(met) and allowed,
        "clear": bool(clear) and allowed,
    }
    row.update(colour_columns(*sides))
    row["seconds"] = time.perf_counter() - t0
    return row


def markdown(rows: list[dict]) -> str:
    """The rows as a markdown table (W/D/L and score with its interval per colour)."""

    lines = [
        "| game | target | player | as first: W/D/L, score | as second: W/D/L, score "
        "| measure | met | clear of the CI |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['game']} | {row['target']} | `{row['player']}` | {colour_cell(row, 'first')} "
            f"| {colour_cell(row, 'second')} | {row['measure']} | {'yes' if row['met'] else 'no'} "
            f"| {'yes' if row['clear'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def parse_agents(parser: argparse.ArgumentParser, items: list[str]) -> dict[str, str]:
    """``KEY=SPEC`` items over the shipped agents."""
    agents = dict(SHIPPED)
    for item in items:
        key, sep, spec = item.partition("=")
        if not sep or key not in GAMES or not spec:
            parser.error(
                f"invalid --agent {item!r}: expected KEY=SPEC with KEY one of {list(GAMES)}"
            )
        agents[key] = spec
    return agents


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--agents",
        nargs="+",
        choices=list(GAMES),
        help="the games to check (default: those with an agent: the shipped ones and --agent)",
    )
    ap.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="KEY=SPEC",
        help="the agent of a game (a run directory or a spec), replacing the shipped one",
    )
    ap.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="only the pairings against these opponents (e.g. engine:4; default: all)",
    )
    ap.add_argument("--sims", type=int, default=MAX_TARGET_SIMS, help="simulations per move")
    ap.add_argument(
        "--settings",
        default=None,
        metavar="K[/C][/w]",
        help="the search's root moves considered and value scale (mcts:N/K/C:<agent>; "
        "default: the spec's, 16 and 0.1), '/w' for the one-ply win check (or 'w' alone)",
    )
    ap.add_argument("--games", type=int, default=200, help="games per colour (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="10 games per colour (a smoke run)")
    ap.add_argument("--out", default="runs/strength_targets")
    args = ap.parse_args(argv)
    if args.quick:
        args.games = 10
    if args.games < 1:
        ap.error(f"--games must be >= 1, got {args.games}")
    if args.sims < 1:
        ap.error(f"--sims must be >= 1, got {args.sims}")
    if args.settings is not None:
        try:  # the spec's own checks, on a stand-in agent
            parse_spec(f"mcts:1/{args.settings}:pretrained:x")
        except ValueError as e:
            ap.error(f"invalid --settings {args.settings!r}: {e}")
    agents = parse_agents(ap, args.agent)
    keys = args.agents or [k for k in GAMES if k in agents]
    missing = [k for k in keys if k not in agents]
    if missing:
        ap.error(f"no agent for {missing}: name one with --agent {missing[0]}=<run directory>")
    known = {t.opponent for k in keys for t in TARGETS[k]}
    unknown = sorted(set(args.opponents or ()) - known)
    if unknown:
        ap.error(f"no target of {keys} plays {unknown}: the opponents are {sorted(known)}")
    if args.sims > MAX_TARGET_SIMS:
        print(f"note: search targets allow at most {MAX_TARGET_SIMS} simulations; none is met")
    out = prepare_out(args.out, {**vars(args), "agents": {k: agents[k] for k in keys}})
    rows = []
    for key in keys:
        for target in TARGETS[key]:
            if args.opponents and target.opponent not in args.opponents:
                continue
            row = check(key, target, agents[key], args.sims, args.games, args.seed, args.settings)
            rows.append(row)
            print(
                f"{key}: {target.text()}: {row['measure']}; first {row['first_wdl']}, "
                f"second {row['second_wdl']}: {'met' if row['met'] else 'not met'} "
                f"({row['seconds']:.0f} s)",
                flush=True,
            )
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(markdown(rows))
    write_csv(os.path.join(out, "targets.csv"), rows)
    write_json(os.path.join(out, "targets.json"), rows)
    print(markdown(rows))
    print(f"wrote {out}/ (table.md, targets.csv, targets.json, config.json)")
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))

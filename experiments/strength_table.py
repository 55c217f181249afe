"""Strength table: the final trained agents against random and the cheap rungs of their game's
rating ladder, both colours, W/D/L with 95% Wilson intervals, checked against the project's
targets (held-out opponents only: a training partner is labelled and never counts); each
agent's Elo on the ladder against every held-out rung (95% CI, the rungs it beats); plus an Elo
table (round robin, Bradley-Terry) of all final agents and opponents of each game. Each agent
is rated twice: its network alone (greedy) and, with ``--search-sims N`` (default 16; 0 turns
it off), the same network guiding N simulations of Gumbel MuZero search per move
(``<agent>+mctsN``; against the opponents, and also the extra ones, in the Elo round robin and
on the ladder with ``--search-all``). A game without a shipped ladder gets no ladder rating
(a printed note).

    # agents of runs/learning_curves
    PYTHONPATH=$PWD python experiments/strength_table.py
    PYTHONPATH=$PWD python experiments/strength_table.py --runs runs/ttt-ppo runs/r6-dqn
    # trains quick agents if none exist
    PYTHONPATH=$PWD python experiments/strength_table.py --quick

Agents come from ``--runs`` (run directories written by ``jaxgames train`` or the ``seed<k>/``
folders of ``learning_curves.py``; a ``<game>_<algo>`` folder of learning_curves.py stands for
its first seed, or all of them with ``--all-seeds``), else from ``<--from>/index.json``
(learning_curves.py's output). If there are none, learning_curves.py is run first for
``--games``/``--algos`` (with ``--quick`` when given).

Writes ``<out>/``: ``table.md`` (the strength table, the ladder ratings and the Elo tables,
markdown), ``table.csv``, ``ladder.csv`` (W/D/L per rung and colour), ``strength.png/.pdf`` (W/D/L
bars), ``elo_<game>.csv`` (+ ``_matches.csv``), ``elo_<game>.png/.pdf`` and ``config.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402

from experiments.common import (  # noqa: E402
    curve_opponents,
    eval_opening_plies,
    fmt_rate,
    prepare_out,
    pyplot,
    save_figure,
    standard_games,
    targets_for,
    write_csv,
)
from jaxgames.cli import report_errors  # noqa: E402


def check_targets(
    game: str, opponent: str, result, partner: bool = False
) -> tuple[str, bool | None]:
    """(target text, met?) for an :class:`~jaxgames.evaluation.ArenaResult`; (``"-"``, None) if
    the pairing has no target, or if ``opponent`` was a training ``partner`` of the agent
    (targets are held-out opponents; random, the floor, is checked even as a partner)."""
    tg = targets_for(game, opponent)
    if not tg:
        return "-", None
    if partner and opponent != "random":
        return "- (training partner)", None
    texts, ok = [], True
    for what, thr in tg:
        if what == "no_losses":
            texts.append("no losses")
            ok &= result.overall.losses == 0
            continue
        rate, side = what.split("_")
        rec = {"first": result.as_first, "second": result.as_second, "all": result.overall}[side]
        label = {"first": " as 1st", "second": " as 2nd", "all": ""}[side]
        texts.append(f"{'score ' if rate == 'score' else ''}>= {thr:.0%}{label}")
        ok &= (rec.score if rate == "score" else rec.win_rate) >= thr
    return ", ".join(texts), bool(ok)


def wdl(rec) -> str:
    return f"{rec.wins}/{rec.draws}/{rec.losses}"


def find_agents(a) -> list[tuple[str, str]]:
    """[(name, run_dir)] of the agents to rate."""
    dirs: list[str] = []
    if a.runs:
        for d in a.runs:
            if os.path.exists(os.path.join(d, "config.json")) and os.path.isdir(
                os.path.join(d, "checkpoints")
            ):
                dirs.append(d)
            else:  # a learning_curves <game>_<algo> folder: its seed<k>/ run directories
                seeds = (
                    sorted(x for x in os.listdir(d) if x.startswith("seed"))
                    if os.path.isdir(d)
                    else []
                )
                if not seeds:
                    raise ValueError(
                        f"{d!r} is neither a run directory nor a learning_curves folder "
                        "with seed*/ runs"
                    )
                dirs += [os.path.join(d, s) for s in (seeds if a.all_seeds else seeds[:1])]
    else:
        index = os.path.join(a.from_dir, "index.json")
        if not os.path.exists(index):
            from experiments import learning_curves

            print(f"no {index}: training agents with learning_curves.py first")
            argv = [
                "--games",
                *a.games,
                "--algos",
                *a.algos,
                "--out",
                a.from_dir,
                "--seeds",
                str(a.seeds),
            ]
            learning_curves.main(argv + (["--quick"] if a.quick else []) + list(a.lc_args))
        with open(index) as f:
            runs = json.load(f)["runs"]
        for r in runs:
            if a.games_filter and r["game"] not in a.games:
                continue
            rd = r["run_dirs"]
            dirs += rd if a.all_seeds else rd[:1]
    names = []
    for d in dirs:
        with open(os.path.join(d, "config.json")) as f:
            rec = json.load(f)
        parent = os.path.basename(os.path.dirname(os.path.abspath(d)))
        base = os.path.basename(os.path.abspath(d))
        label = f"{parent}/{base}" if base.startswith("seed") else base
        names.append((f"{rec['algorithm']}:{label}", d))
    return names


def rate_on_ladder(env, players, run_dirs, a, key) -> dict | None:
    """Every player's Elo on the game's ladder (``jaxgames rate``'s machinery): ``{player:
    (RatingReport, rungs skipped as its training partners)}``; None, with a printed note, if
    the game has no ladder."""
    from jaxgames.cli.rate import held_out_rungs
    from jaxgames.evaluation.ladder import game_key, ladder_path, load_ladder
    from jaxgames.evaluation.report import rate_policy
    from jaxgames.specs import make_opponent

    name = game_key(env)
    if not os.path.exists(ladder_path(name)):
        print(f"no ladder for {name}: no ladder ratings (build it: experiments/build_ladder.py)")
        return None
    ladder = load_ladder(name)
    rungs = ladder.specs if a.ladder_rungs is None else a.ladder_rungs
    unknown = [r for r in rungs if r not in ladder.specs]
    if unknown:
        raise SystemExit(f"--ladder-rungs: not rungs of the {name} ladder: {unknown}")
    out = {}
    for player, (base, pol) in players.items():
        played, skipped = held_out_rungs(run_dirs[base], rungs)
        if not played:
            print(f"{player}: every rung was a training partner; not rated")
            continue
        report = rate_policy(
            pol,
            env,
            ladder,
            lambda s: make_opponent(s, env),
            a.ladder_games,
            key,
            name=player,
            rungs=played,
            log=print,
        )
        out[player] = (report, skipped)
    return out


def beaten_rungs(report) -> str:
    """The rungs ``report``'s player scored more than 50% against, with the score's 95% CI."""
    beats = []
    for rung, m in zip(report.rungs, report.matches):
        if m.score > 0.5:
            lo, hi = m.overall.ci("score")
            beats.append(f"`{rung}` {m.score:.0%} [{lo:.0%}, {hi:.0%}]")
    return ", ".join(beats) or "none"


def plot_strength(rows, stem: str) -> list[str]:
    """Stacked W/D/L bars, one bar per (agent, opponent, colour)."""
    plt = pyplot()
    labels = [f"{r['agent']} vs {r['opponent']} ({r['colour']})" for r in rows]
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8, 0.22 * n + 1.5))
    y = range(n)[::-1]
    w = [r["win_rate"] for r in rows]
    d = [r["draw_rate"] for r in rows]
    lo = [r["loss_rate"] for r in rows]
    ax.barh(list(y), w, color="tab:green", label="win")
    ax.barh(list(y), d, left=w, color="tab:gray", label="draw")
    ax.barh(list(y), lo, left=[i + j for i, j in zip(w, d)], color="tab:red", label="loss")
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=6)
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of games (greedy agent)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Final agents vs the opponents, by colour")
    fig.tight_layout()
    return save_figure(fig, stem)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--runs",
        nargs="*",
        default=None,
        help="run directories (or learning_curves <game>_<algo> folders)",
    )
    p.add_argument(
        "--from", dest="from_dir", default="runs/learning_curves", help="learning_curves.py output"
    )
    p.add_argument(
        "--all-seeds", action="store_true", help="every seed is an agent (default: the first seed)"
    )
    p.add_argument(
        "--games",
        nargs="+",
        default=standard_games(),
        help="games to train agents for when none exist (and to keep, with --only-games)",
    )
    p.add_argument(
        "--only-games",
        dest="games_filter",
        action="store_true",
        help="keep only --games from the index",
    )
    p.add_argument("--algos", nargs="+", default=["ppo", "dqn"])
    p.add_argument("--seeds", type=int, default=3, help="seeds when training agents first")
    p.add_argument(
        "--lc-args",
        nargs="*",
        default=[],
        help="extra learning_curves.py arguments when training first",
    )
    p.add_argument("--games-per-colour", type=int, default=1000)
    p.add_argument(
        "--elo-games", type=int, default=400, help="games per pairing in the round robin"
    )
    p.add_argument("--opponents", nargs="+", default=None, help="override the opponent list")
    p.add_argument(
        "--extra-opponents",
        nargs="*",
        default=[],
        help="more opponents: no target, not in the Elo round robin (--extra-games-per-colour)",
    )
    p.add_argument("--extra-games-per-colour", type=int, default=250)
    p.add_argument(
        "--search-sims",
        type=int,
        default=16,
        help="also rate each agent guiding this many Gumbel MuZero simulations per move (0: off)",
    )
    p.add_argument(
        "--search-all",
        action="store_true",
        help="search players also meet the held-out opponents and join the Elo round robin "
        "(29 min instead of 17 for the full table on the 2-core CPU)",
    )
    p.add_argument(
        "--opening-plies",
        type=int,
        default=None,
        help="random plies starting every arena game (default: the ladder's, 4; tic-tac-toe 0)",
    )
    p.add_argument(
        "--ladder-games",
        type=int,
        default=None,
        help="games per ladder rung for the ladder Elo (even; default: the ladder's games per "
        "pairing; 0: no ladder ratings)",
    )
    p.add_argument(
        "--ladder-rungs",
        default=None,
        help="comma-separated subset of the ladder's rungs (default: all held-out rungs)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/strength_table")
    p.add_argument(
        "--quick",
        action="store_true",
        help="200 games per colour (50 vs the extra opponents), 100 per Elo pairing, "
        "20 per ladder rung",
    )
    a = p.parse_args(argv)
    if a.search_sims < 0:
        p.error(f"--search-sims must be >= 0, got {a.search_sims}")
    if a.ladder_games is not None and (a.ladder_games < 0 or a.ladder_games % 2):
        p.error(f"--ladder-games must be even and >= 0, got {a.ladder_games}")
    if a.opening_plies is not None and a.opening_plies < 0:
        p.error(f"--opening-plies must be >= 0, got {a.opening_plies}")
    if a.ladder_rungs is not None:
        a.ladder_rungs = [r.strip() for r in a.ladder_rungs.split(",")]
    if a.quick:
        a.games_per_colour, a.elo_games = min(a.games_per_colour, 200), min(a.elo_games, 100)
        a.extra_games_per_colour = min(a.extra_games_per_colour, 50)
        a.ladder_games = min(a.ladder_games, 20) if a.ladder_games is not None else 20

    import jaxgames  # noqa: F401
    from jaxgames.agents.search import SearchPolicy
    from jaxgames.evaluation import (
        arena,
        bradley_terry,
        plot_ratings,
        round_robin,
        write_ratings_csv,
    )
    from jaxgames.runs import load_agent
    from jaxgames.specs import make_opponent

    agents = find_agents(a)
    if not agents:
        raise SystemExit("no agents found")
    prepare_out(
        a.out,
        dict(
            script="strength_table.py",
            agents=dict(agents),
            games_per_colour=a.games_per_colour,
            elo_games=a.elo_games,
            search_sims=a.search_sims,
            search_all=a.search_all,
            ladder_games=a.ladder_games,
            seed=a.seed,
            quick=a.quick,
        ),
    )
    key = jax.random.PRNGKey(a.seed)
    t0 = time.time()
    loaded = {name: load_agent(d) for name, d in agents}
    by_game: dict[str, list[str]] = {}
    for name, ag in loaded.items():
        gl = ag.config.game + (
            "".join(f":{v}" for v in ag.config.game_options.values())
            if ag.config.game_options
            else ""
        )
        by_game.setdefault(gl, []).append(name)

    rows, md_rows, summary = [], [], {"agents": {}, "elo": {}, "ladder": {}, "opening_plies": {}}
    ladder_rows, ladder_md = [], []
    for gl, names in by_game.items():
        env = loaded[names[0]].env
        game = env.name
        # random and the ladder's cheap rungs, training partners included (labelled as such;
        # they never count for a target); the ladder rating below uses the held-out rungs only
        opps = a.opponents or curve_opponents(env)
        extra = [o for o in a.extra_opponents if o not in opps]  # no target, fewer games
        plies = eval_opening_plies(env) if a.opening_plies is None else a.opening_plies
        summary["opening_plies"][gl] = plies
        opp_pols = {o: make_opponent(o, env) for o in opps}  # the Elo round robin uses these
        all_pols = {**opp_pols, **{o: make_opponent(o, env) for o in extra}}
        # every agent plays as its network alone (greedy) and, with --search-sims N, as the same
        # network guiding N simulations of Gumbel MuZero search per move ("<name>+mctsN")
        players = {}
        for name in names:
            network = loaded[name].policy(greedy=True)
            players[name] = (name, network)
            if a.search_sims:
                players[f"{name}+mcts{a.search_sims}"] = (
                    name,
                    SearchPolicy(env, network, num_simulations=a.search_sims),
                )
        for name, (base, pol) in players.items():
            partners = dict(getattr(loaded[base].config, "partners", {}) or {})
            # search players meet the opponents (and the extra ones with --search-all)
            pols = all_pols if name == base or a.search_all else opp_pols
            for i, (o, opp_pol) in enumerate(pols.items()):
                n_games = 2 * (a.games_per_colour if o in opp_pols else a.extra_games_per_colour)
                r = arena(pol, opp_pol, env, n_games, jax.random.fold_in(key, i), plies)
                share = partners.get(o, 0.0)
                target, met = check_targets(game, o, r, partner=bool(share))
                seen = f"partner ({share * 100:g}% of games)" if share else "held out"
                summary["agents"].setdefault(name, {})[o] = dict(
                    r.to_dict(), target=target, met=met
                )
                for colour, rec in (("first", r.as_first), ("second", r.as_second)):
                    lo, hi = rec.ci("win")
                    rows.append(
                        dict(
                            game=gl,
                            agent=name,
                            opponent=o,
                            colour=colour,
                            wins=rec.wins,
                            draws=rec.draws,
                            losses=rec.losses,
                            games=rec.games,
                            win_rate=rec.win_rate,
                            win_lo=lo,
                            win_hi=hi,
                            draw_rate=rec.draw_rate,
                            loss_rate=rec.loss_rate,
                            target=target,
                            met="" if met is None else met,
                            training_partner_share=share,
                        )
                    )
                md_rows.append(
                    f"| {gl} | {name} | {o} | {seen} | {wdl(r.as_first)} | "
                    f"{fmt_rate(r.as_first.wins, r.as_first.games)} | "
                    f"{wdl(r.as_second)} | {fmt_rate(r.as_second.wins, r.as_second.games)} | "
                    f"{fmt_rate(r.overall.losses, r.overall.games)} | {target} | "
                    f"{'-' if met is None else ('yes' if met else '**NO**')} |"
                )
                print(md_rows[-1], flush=True)
        # Elo: all agents of this game and its opponents
        elo_players = {
            **{n: pol for n, (b, pol) in players.items() if n == b or a.search_all},
            **opp_pols,
        }
        matches = round_robin(elo_players, env, a.elo_games, jax.random.fold_in(key, 1000), plies)
        ratings = bradley_terry(matches, anchor="random" if "random" in elo_players else None)
        tag = gl.replace(":", "")
        write_ratings_csv(ratings, matches, os.path.join(a.out, f"elo_{tag}.csv"))
        for ext in ("png", "pdf"):
            plot_ratings(
                ratings, os.path.join(a.out, f"elo_{tag}.{ext}"), title=f"{gl}: Elo (random = 0)"
            )
        summary["elo"][gl] = ratings
        # the ladder: network players, and the search players with --search-all
        rated = (
            rate_on_ladder(
                env,
                {n: p for n, p in players.items() if n == p[0] or a.search_all},
                dict(agents),
                a,
                jax.random.fold_in(key, 2000),
            )
            if a.ladder_games != 0
            else None
        )
        for name, (report, skipped) in (rated or {}).items():
            summary["ladder"][name] = {**report.to_json(), "skipped_partners": skipped}
            ladder_md.append(
                f"| {gl} | {name} | {report.rating} | {', '.join(report.rungs)} | "
                f"{beaten_rungs(report)} | {', '.join(skipped) or '-'} |"
            )
            for rung, rr, m in zip(report.rungs, report.rung_ratings, report.matches):
                lo, hi = m.overall.ci("score")
                ladder_rows.append(
                    dict(
                        game=gl,
                        agent=name,
                        agent_elo=report.rating.elo,
                        agent_elo_lo=report.rating.lo,
                        agent_elo_hi=report.rating.hi,
                        rung=rung,
                        rung_elo=rr.elo,
                        first_wdl=wdl(m.as_first),
                        second_wdl=wdl(m.as_second),
                        score=m.score,
                        score_lo=lo,
                        score_hi=hi,
                    )
                )

    write_csv(os.path.join(a.out, "table.csv"), rows)
    if ladder_rows:
        write_csv(os.path.join(a.out, "ladder.csv"), ladder_rows)
    plot_strength(rows, os.path.join(a.out, "strength"))
    lines = [
        f"# Strength of the final agents ({a.games_per_colour} games per colour, greedy agents)",
        "",
        "W/D/L from the agent's side; win rates with 95% Wilson intervals. Every game starts "
        "from random plies (per game: "
        + ", ".join(f"{g}: {n}" for g, n in summary["opening_plies"].items())
        + "; a greedy network against a deterministic engine would otherwise replay one game "
        "per colour). The opponents are",
        "random and the rungs of the game's rating ladder cheap enough to play during training;",
        "the targets are on held-out opponents (experiments/common.py `TARGETS`); a target that",
        "is not met is marked **NO** (the opponents are never lowered).",
        "",
        "'partner': the agent met this opponent in training (its config's `partners`, a share",
        "of the training games; the arena games here are new games): shown, never counted for a",
        "target, except random, the floor every agent is held to. 'held out': never met in",
        "training.",
        *(
            [
                f"Extra opponents ({', '.join(a.extra_opponents)}): no target, "
                f"{a.extra_games_per_colour} games per colour."
            ]
            if a.extra_opponents
            else []
        ),
        "",
        *(
            [
                f"`<agent>+mcts{a.search_sims}`: the same network playing with play-time search, "
                f"{a.search_sims} simulations of Gumbel MuZero (mctx) per move over the real game, "
                "the network as prior and leaf value (`jaxgames.agents.search.SearchPolicy`, "
                "deterministic). The network-only rows are the agents as trained; the search rows "
                "are those agents as AlphaZero-style players"
                + (
                    " (also vs the extra opponents, in the Elo tables and on the ladder)."
                    if a.search_all
                    else " (vs the opponents above; `--search-all` adds the extra opponents, "
                    "the Elo tables and the ladder)."
                ),
                "",
            ]
            if a.search_sims
            else []
        ),
        "| game | agent | opponent | training partner | as 1st W/D/L | win as 1st | as 2nd W/D/L | "
        "win as 2nd | loss rate | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *md_rows,
        "",
    ]
    for gl, ratings in summary["elo"].items():
        lines += [
            f"## Elo, {gl} (Bradley-Terry over a round robin of {a.elo_games} games per pairing, "
            "random = 0)",
            "",
            "| rank | player | Elo |",
            "|---|---|---|",
        ]
        lines += [f"| {k} | {n} | {e:+.0f} |" for k, (n, e) in enumerate(ratings.items(), 1)]
        lines.append("")
    if ladder_md:
        lines += [
            "## Ladder ratings (held-out rungs only)",
            "",
            "Elo on the game's rating ladder (`jaxgames rate`; random = 0, rungs' ratings from "
            "`jaxgames/evaluation/ladders/`), 95% bootstrap interval over the ladder's openings "
            "with the rungs' uncertainty propagated; rungs the agent trained against are not "
            "played. 'beats': the rungs it scored more than 50% against (score, 95% Wilson "
            "interval); W/D/L per rung and colour in `ladder.csv`.",
            "",
            "| game | agent | ladder Elo [95% CI] | rungs played | beats (score > 50%) | "
            "not played (training partners) |",
            "|---|---|---|---|---|---|",
            *ladder_md,
            "",
        ]
    lines.append("Agents: " + ", ".join(f"`{n}` = {d}" for n, d in agents))
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    summary["seconds"] = time.time() - t0
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, default=str)
    print(
        f"wrote {a.out}/table.md, table.csv, strength.png/.pdf, elo_*.csv/.png/.pdf "
        f"({summary['seconds']:.0f}s)"
    )
    return summary


if __name__ == "__main__":
    sys.exit(report_errors(main))

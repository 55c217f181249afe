"""One match of A against B by the protocol of ``jaxgames match``, and its reports.

    out = run_match(policy_a, policy_b, env, games=100, reports=("lengths", "exact:12"))
    print(format_match(out))       # W/D/L per colour with intervals, margin, each report

Protocol: ``games`` distinct unfinished openings of ``opening_plies`` random plies
(:func:`~jaxgames.evaluation.openings.openings` with ``seed``; default plies: the game's ladder
protocol, :func:`default_opening_plies`), each played twice with the colours swapped, all at
once (:func:`~jaxgames.evaluation.match.play_match`, key ``PRNGKey(seed)``: the two games of
an opening share their random numbers).

Intervals: a colour's score has the 95% Wilson interval (Wilson 1927) of its games, one per
opening; the overall score that of its *effective* number of games, the games over the design
effect of the opening pairs (Kish 1965: the two games of an opening are correlated), between
one and two per opening. Openings repeated game for game (the same position and the same
final positions: deterministic players on repeated openings) count once. The score margin
(:meth:`~jaxgames.core.Env.score`) has a normal interval over the same units.

Reports (``reports=``), each per colour of A:

* ``lengths``: the lengths of A's lost games; those lost before A moved.
* ``endings``: how A's games ended (:data:`ENDINGS`: reversi's full board, blocked sides,
  wipe-out; animal shogi's no legal move, try, repetition, move limit; tic-tac-toe's line,
  full board) by result, with mean length and, on reversi, disc margin.
* ``exact:E`` (reversi, E <= 20): each game's first position with at most E empty squares
  solved exactly (:func:`~jaxgames.evaluation.reversi_engine.solve_endgame`, taken inside the
  same game loop): the result perfect play gives from there against the game's result (thrown
  away after E empties, or lost before), and how often A's value head (and searched value)
  has the exact result's sign.
* ``scores``: the distribution of final score margins and the number of distinct final
  positions.
"""

from __future__ import annotations

import functools
import math
import os
import time
import warnings
from collections import Counter
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState, Policy
from jaxgames.evaluation.elo import Record, effective_games
from jaxgames.evaluation.ladder import game_key, ladder_path, load_ladder
from jaxgames.evaluation.match import MatchResult, check_games, play_match
from jaxgames.evaluation.openings import openings, position_keys
from jaxgames.evaluation.reversi_engine import solve_endgame
from jaxgames.games.animal_shogi.rules import LION
from jaxgames.validation import check_int, check_seed

#: the report names (``exact:E``: E empty squares, 1 to :data:`MAX_EXACT_EMPTIES`)
REPORTS = ("lengths", "endings", "exact:E", "scores")
MAX_EXACT_EMPTIES = 20  # the engine's bound for its exact endgame
#: positions per solver call (padded: one compile per board and E)
SOLVE_BATCH = 64
COLOURS = ("as_first", "as_second")
RESULTS = ((1, "won"), (0, "drawn"), (-1, "lost"))
#: how a game ended, per game; "cut off": stopped by ``max_plies`` before the rules ended it
ENDINGS = {
    "reversi": ("full board", "blocked", "wiped out", "cut off"),
    # no legal move: every move would leave the lion attacked; try: a lion reached the far
    # rank; repetition: a position's third time (a draw); move limit: ``max_steps`` (a draw)
    "animal_shogi": ("no legal move", "try", "repetition", "move limit", "cut off"),
    "tic_tac_toe": ("three in a row", "full board", "cut off"),
}


# ============================================================================ the protocol
def default_opening_plies(env: Env) -> int:
    """The game's ladder protocol: none on tic-tac-toe (its openings would repeat; its players
    break ties at random), else the plies of its shipped ladder, else 4."""
    if env.name == "tic_tac_toe":
        return 0
    path = ladder_path(game_key(env))
    return load_ladder(path).plies if os.path.exists(path) else 4


def parse_reports(texts: Sequence[str], env: Env) -> tuple[str, ...]:
    """The report names ``texts`` checked for ``env`` (each once); one-line ``ValueError``."""
    out: list[str] = []
    for text in texts:
        name, _, arg = str(text).strip().partition(":")
        if name not in ("lengths", "endings", "exact", "scores") or bool(arg) != (name == "exact"):
            raise ValueError(f"unknown report {text!r}; reports: {', '.join(REPORTS)}")
        if name == "exact":
            if not (arg.isascii() and arg.isdigit()) or not 1 <= int(arg) <= MAX_EXACT_EMPTIES:
                raise ValueError(
                    f"report {text!r}: E must be a number of empty squares from 1 to "
                    f"{MAX_EXACT_EMPTIES}, e.g. exact:12"
                )
            if any(r.startswith("exact:") for r in out):
                raise ValueError("one exact:E report per match")
            text = f"exact:{int(arg)}"
        if name == "endings" and env.name not in ENDINGS:
            raise ValueError(f"report 'endings': no endings known for {env.name}")
        if name == "exact" and env.name != "reversi":
            raise ValueError(f"report {text!r} is for reversi, not {env.name}")
        if name == "scores" and not env.has_score():
            raise ValueError(f"report 'scores': {env.name} has no score margin")
        if text not in out:
            out.append(text)
    return tuple(out)


def run_match(
    policy_a: Policy,
    policy_b: Policy,
    env: Env,
    *,
    games: int = 100,
    opening_plies: int | None = None,
    seed: int = 0,
    reports: Sequence[str] = (),
    max_plies: int | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """A against B by the protocol of the module docstring: ``games`` openings, two games each.

    Returns plain Python values: the protocol (openings, distinct openings, plies, games),
    ``overall`` / ``as_first`` / ``as_second`` (W/D/L, score, ``score_ci``,
    ``effective_games``), ``margin`` (mean, lo, hi; None for a game without a score),
    ``mean_plies`` (opening included), ``seconds`` and ``reports`` (name -> per colour).
    ``max_plies``: cap on the plies after the opening (unfinished games are draws);
    ``batch``: at most this many games at once (:func:`~jaxgames.evaluation.match.play_match`).
    """
    check_games(games, batch, "games", games_each=2)
    check_seed("seed", seed)
    plies = default_opening_plies(env) if opening_plies is None else opening_plies
    check_int("opening_plies", plies, minimum=0)
    if env.max_game_length is not None and plies >= env.max_game_length:
        raise ValueError(
            f"invalid opening_plies={plies}: a game of {env!r} lasts at most "
            f"{env.max_game_length} plies"
        )
    if max_plies is not None:
        check_int("max_plies", max_plies)
    reports = parse_reports(reports, env)
    exact = [int(r[6:]) for r in reports if r.startswith("exact:")]
    with warnings.catch_warnings():  # fewer distinct positions: counted and reported below
        warnings.simplefilter("ignore")
        starts = openings(env, games, plies, seed)
    t0 = time.perf_counter()
    snapshot = _late(exact[0], env.num_actions - 1) if exact else None
    result = play_match(
        policy_a, policy_b, env, starts, jax.random.PRNGKey(seed), max_plies,
        final_states=True, snapshot=snapshot, batch=batch,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    start_keys = position_keys(starts)
    games_key = [start_keys[o] + k for o, k in zip(result.opening, position_keys(result.states))]
    out: dict[str, Any] = dict(
        game=env.name,
        options=dict(env.config),
        openings=games,
        distinct_openings=len(set(start_keys)),
        opening_plies=plies,
        seed=seed,
        max_plies=max_plies,
        games=len(result.outcomes),
        **_records(result, games_key),
        margin=_margin(result, games_key),
        mean_plies=float(np.mean(result.plies)),
        seconds=seconds,
        reports={},
    )
    for name in reports:
        t0 = time.perf_counter()
        if name == "lengths":
            rep = lengths_report(result, starts)
        elif name == "endings":
            rep = endings_report(result, env)
        elif name == "scores":
            rep = scores_report(result, games_key)
        else:
            rep = exact_report(result, env, exact[0], policy_a)
            rep["seconds"] = time.perf_counter() - t0
        out["reports"][name] = rep
    return out


def _sides(result: MatchResult):
    """(colour name, bool[G] its games) of A's two colours."""
    return [(c, result.a_player == p) for p, c in enumerate(COLOURS)]


def _records(result: MatchResult, games_key: list[bytes]) -> dict[str, dict]:
    """``overall``, ``as_first``, ``as_second``: W/D/L, score and its interval (see above)."""
    points = (result.outcomes.astype(np.float64) + 1.0) / 2.0
    out = {}
    for name, sel in [("overall", np.ones(len(points), bool)), *_sides(result)]:
        if name == "overall":  # the distinct pairs of games
            distinct = len(result.distinct_units(games_key))
        else:
            distinct = len({k for k, s in zip(games_key, sel) if s})
        n = effective_games(points[sel], result.opening[sel], distinct)
        rec = Record.of(result.outcomes[sel], effective=n)
        out[name] = dict(
            wins=rec.wins,
            draws=rec.draws,
            losses=rec.losses,
            games=rec.games,
            score=rec.score,
            score_ci=list(rec.ci("score")),
            effective_games=n,
        )
    return out


def _margin(result: MatchResult, games_key: list[bytes]) -> dict | None:
    """A's mean final margin, 95% Student's t interval over the distinct openings' pairs."""
    stats = result.margin_stats(games_key)
    if stats is None:
        return None
    mean, lo, hi = stats
    return dict(mean=mean, lo=None if math.isnan(lo) else lo, hi=None if math.isnan(hi) else hi)


# ============================================================================ reports
def lengths_report(result: MatchResult, starts: GameState) -> dict[str, dict]:
    """Per colour: A's losses, their lengths (plies, opening included: games) and how many
    were lost before A moved (B to move after the opening and the game over after one ply)."""
    b_first = np.asarray(starts.current_player)[result.opening] != result.a_player
    after = result.plies - np.asarray(starts.step_count)[result.opening]
    out = {}
    for colour, sel in _sides(result):
        lost = sel & (result.outcomes < 0)
        out[colour] = dict(
            losses=int(lost.sum()),
            lost_at_plies=dict(sorted(Counter(int(p) for p in result.plies[lost]).items())),
            lost_before_moving=int(np.sum(lost & b_first & (after == 1))),
        )
    return out


def _discs(states: GameState) -> tuple[np.ndarray, np.ndarray]:
    """int[G] discs of the side to move and of the other in batched reversi ``states``."""
    count = lambda b: np.unpackbits(np.ascontiguousarray(b).view(np.uint8), axis=-1).sum(-1)  # noqa: E731
    return count(np.asarray(states.mover)), count(np.asarray(states.opponent))


def _endings(result: MatchResult, env: Env) -> np.ndarray:
    """int[G]: each game's index in ``ENDINGS[env.name]``, read from its final state (the
    last, "cut off", for a game ``max_plies`` stopped before the rules ended it)."""
    states = result.states
    terminated, truncated = np.asarray(states.terminated), np.asarray(states.truncated)
    if env.name == "reversi":
        mover, other = _discs(states)
        full = mover + other == env.num_actions - 1  # the pass action is not a square
        ending = np.where(np.minimum(mover, other) == 0, 2, np.where(full, 0, 1))
    elif env.name == "animal_shogi":  # absolute board: sente's far rank 0-2, gote's 9-11
        board, winner = np.asarray(states.board), np.asarray(states.winner)
        sente_try, gote_try = (board[:, :3] == LION).any(1), (board[:, 9:] == LION + 5).any(1)
        tried = np.where(winner == 0, sente_try, gote_try)
        ending = np.where(truncated, 3, np.where(winner < 0, 2, np.where(tried, 1, 0)))
    else:  # tic-tac-toe: a decided game made a line, a drawn one filled the board
        ending = np.where(result.outcomes != 0, 0, 1)
    return np.where(terminated | truncated, ending, len(ENDINGS[env.name]) - 1)


def endings_report(result: MatchResult, env: Env) -> dict[str, dict]:
    """Per colour and result (won / drawn / lost): the games of each ending of
    ``ENDINGS[env.name]`` (reversi: on a full board, with both sides blocked, with a side wiped
    out; animal shogi: no legal move, a try, a repetition, the move limit; tic-tac-toe: three
    in a row, a full board; or cut off by ``max_plies`` unfinished), their mean plies and, on
    a game with a score, A's mean margin."""
    names, ending = ENDINGS[env.name], _endings(result, env)
    out = {}
    for colour, sel in _sides(result):
        out[colour] = {}
        for sign, res in RESULTS:
            for k, how in enumerate(names):
                pick = sel & (result.outcomes == sign) & (ending == k)
                margin = result.margin is not None and pick.any()
                out[colour][f"{res}: {how}"] = dict(
                    games=int(pick.sum()),
                    mean_plies=float(result.plies[pick].mean()) if pick.any() else None,
                    mean_margin=float(result.margin[pick].mean()) if margin else None,
                )
    return out


def scores_report(result: MatchResult, games_key: list[bytes]) -> dict[str, dict]:
    """Per colour: A's final score margins (margin -> games, most common first) and the number
    of distinct final positions (deterministic players repeat games)."""
    out = {}
    for colour, sel in _sides(result):
        margins = Counter(_number(m) for m in result.margin[sel])
        out[colour] = dict(
            margins=dict(margins.most_common()),
            distinct_final_positions=len({k for k, s in zip(games_key, sel) if s}),
        )
    return out


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


@functools.lru_cache(maxsize=None)
def _late(empties: int, cells: int):
    """``state -> bool[]``: a live reversi position with at most ``empties`` empty squares."""

    def late(state):
        discs = jnp.sum(jax.lax.population_count(state.mover | state.opponent))
        return ~state.terminated & (cells - discs <= empties)

    return late


@functools.lru_cache(maxsize=8)
def _solver(env: Env, empties: int):
    return jax.jit(jax.vmap(lambda s: solve_endgame(env, s, empties)[0]))


def exact_outcomes(env: Env, snaps: GameState, a_player: np.ndarray, empties: int) -> np.ndarray:
    """int8[G]: A's result (1 / 0 / -1) under perfect play by both sides from each game's
    snapshot, the live ones with at most ``empties`` empty squares (batched reversi states,
    numpy leaves); a finished snapshot: its own result."""
    mover, other = _discs(snaps)
    done = np.asarray(snaps.terminated)
    a_moves = np.asarray(snaps.current_player) == a_player
    margin = np.where(a_moves, mover - other, other - mover).astype(np.int64)
    live = np.flatnonzero(~done & (env.num_actions - 1 - mover - other <= empties))
    solve = _solver(env, empties)
    for lo in range(0, len(live), SOLVE_BATCH):
        part = live[lo : lo + SOLVE_BATCH]
        pad = np.concatenate([part, np.full(SOLVE_BATCH - len(part), part[0])])
        m = np.asarray(solve(jax.tree_util.tree_map(lambda x: x[pad], snaps)))[: len(part)]
        margin[part] = np.where(a_moves[part], m, -m)
    return np.sign(margin).astype(np.int8)


def value_heads(policy: Policy) -> dict[str, Any]:
    """A player's value functions ``state -> float32[]`` (mover's view): a network's value head
    (``network``), a search's searched value (``search``) and its guide's; none for an engine."""
    if hasattr(policy, "guide"):  # a search over a network
        return {"search": policy.value, "network": policy.guide.value}
    return {"network": policy.value} if hasattr(policy, "value") else {}


def exact_report(result: MatchResult, env: Env, empties: int, policy_a: Policy) -> dict[str, dict]:
    """Per colour: the record under perfect play from each game's first position with at most
    ``empties`` empty squares (``result.snapshots``), the table [result there][final result]
    (rows and columns won / drawn / lost), the games thrown away after (final result worse)
    and lost before, the games over before, and A's value heads there against the exact
    result: the share of decided positions whose value has its sign, the mean absolute error.
    A game cut off by ``max_plies`` before ``empties`` has no exact result: it is counted
    (``cut_before``) and left out of the rest."""
    snaps = result.snapshots
    exact = exact_outcomes(env, snaps, result.a_player, empties)
    mover, other = _discs(snaps)
    over = np.asarray(snaps.terminated)
    live = ~over & (env.num_actions - 1 - mover - other <= empties)
    exact = np.where(over, result.outcomes, exact)  # the game's result (an illegal move too)
    cut = ~over & ~live
    a_moves = np.asarray(snaps.current_player) == result.a_player
    values = {
        k: np.where(a_moves, 1.0, -1.0) * np.asarray(jax.jit(jax.vmap(f))(snaps))
        for k, f in value_heads(policy_a).items()
    }
    out = {}
    for colour, side in _sides(result):
        sel = side & ~cut
        e, o = exact[sel], result.outcomes[sel]
        perfect = Record.of(e)
        decided = live[sel] & (e != 0)
        out[colour] = dict(
            perfect=dict(
                wins=perfect.wins,
                draws=perfect.draws,
                losses=perfect.losses,
                score=perfect.score if len(e) else None,  # None: every game cut off
                score_ci=list(perfect.ci("score")) if len(e) else None,
            ),
            table=[[int(np.sum((e == x) & (o == y))) for y, _ in RESULTS] for x, _ in RESULTS],
            thrown_away=int(np.sum(o < e)),
            lost_before=int(np.sum(e < 0)),
            over_before=int(np.sum(~live[sel])),
            cut_before=int(np.sum(cut[side])),
            values={
                k: dict(
                    positions=int(live[sel].sum()),
                    decided=int(decided.sum()),
                    sign_agreement=float(np.mean(np.sign(v[sel][decided]) == e[decided]))
                    if decided.any()
                    else None,
                    mean_abs_error=float(np.mean(np.abs(v[sel] - e)[live[sel]]))
                    if live[sel].any()
                    else None,
                )
                for k, v in values.items()
            },
        )
    return out


# ============================================================================ text
def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _record_line(r: dict) -> str:
    lo, hi = r["score_ci"]
    line = f"W {r['wins']} D {r['draws']} L {r['losses']} / {r['games']}, score {r['score']:.1%} "
    line += f"[{lo:.1%}, {hi:.1%}]"
    if r["effective_games"] < r["games"]:
        line += f" ({r['effective_games']:.0f} effective games)"
    return line


def format_match(out: dict[str, Any]) -> str:
    """:func:`run_match`'s result as text: the protocol, A's records, margin, the reports."""
    n, k = out["openings"], out["distinct_openings"]
    lines = [
        f"{n} openings of {out['opening_plies']} random plies ({k} distinct), each played with "
        f"both colours: {out['games']} games in {out['seconds']:.1f} s"
        + (f", at most {out['max_plies']} plies after the opening" if out["max_plies"] else "")
    ]
    if k < n:
        lines.append(
            f"note: only {k} distinct opening position{'s' * (k > 1)}: the repeats differ only "
            "by the players' random numbers (repeats game for game count once in the intervals)"
        )
    for name, label in (
        ("overall", "overall"),
        ("as_first", "as first"),
        ("as_second", "as second"),
    ):
        lines.append(f"A {label + ':':11s}{_record_line(out[name])}")
    m = out["margin"]
    if m is not None:
        ci = "" if m["lo"] is None else f" [{m['lo']:+.2f}, {m['hi']:+.2f}]"
        lines.append(f"A's margin:  {m['mean']:+.2f}{ci} (final score margin)")
    lines.append(f"mean length: {out['mean_plies']:.1f} plies (opening included)")
    for name, rep in out["reports"].items():
        lines += _report_lines(name, rep)
    return "\n".join(lines)


def _report_lines(name: str, rep: dict) -> list[str]:
    colour = {"as_first": "as first: ", "as_second": "as second:"}
    if name == "lengths":
        lines = ["lengths of A's lost games (plies, opening included: games):"]
        for c, label in colour.items():
            r = rep[c]
            at = ", ".join(f"{p}: {g}" for p, g in r["lost_at_plies"].items()) or "none"
            lines.append(
                f"  {label} {r['losses']} lost ({at}); {r['lost_before_moving']} before A moved"
            )
        return lines
    if name == "endings":
        lines = ["how A's games ended (games, mean plies, mean margin where the game scores):"]
        for c, label in colour.items():
            lines.append(f"  {label.rstrip()}")
            for what, e in rep[c].items():
                if e["games"]:
                    margin = e["mean_margin"]
                    lines.append(
                        f"    {what:21s} {e['games']:5d} games, {e['mean_plies']:5.1f} plies"
                        + ("" if margin is None else f", margin {margin:+6.1f}")
                    )
        return lines
    if name == "scores":
        lines = ["A's final score margins (margin x games):"]
        for c, label in colour.items():
            r = rep[c]
            top = list(r["margins"].items())
            text = ", ".join(f"{m:+} x{g}" for m, g in top[:8])
            more = f" (+{len(top) - 8} more)" if len(top) > 8 else ""
            lines.append(
                f"  {label} {text}{more}; {r['distinct_final_positions']} distinct final positions"
            )
        return lines
    e = name.split(":")[1]
    lines = [
        f"perfect play from the first position with at most {e} empty squares "
        f"(solved in {rep['seconds']:.1f} s):"
    ]
    for c, label in colour.items():
        r = rep[c]
        p = r["perfect"]
        score = (
            "-"
            if p["score"] is None
            else "{:.1%} [{:.1%}, {:.1%}]".format(p["score"], *p["score_ci"])
        )
        lines += [
            f"  {label} perfect play from there W {p['wins']} D {p['draws']} L {p['losses']}, "
            f"score {score}",
            f"    thrown away after {e} empties: {r['thrown_away']}, already lost there: "
            f"{r['lost_before']}, over before: {r['over_before']}"
            + (f", cut off before (left out): {r['cut_before']}" if r["cut_before"] else ""),
        ]
        for (_, res), (w, d, lost) in zip(RESULTS, r["table"]):
            lines.append(f"    {res:5s} at {e} empties -> ended W {w} D {d} L {lost}")
        for head, v in r["values"].items():
            lines.append(
                f"    A's {head} value there: the exact result's sign in "
                f"{_pct(v['sign_agreement'])} of {v['decided']} decided positions, mean |error| "
                + ("-" if v["mean_abs_error"] is None else f"{v['mean_abs_error']:.2f}")
            )
    return lines

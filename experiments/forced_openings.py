"""Openings decided by force, animal shogi: which of the targets' openings one side wins whatever
the other plays, and so the most any agent can score against ``engine:N`` at the targets'
protocol.

    python experiments/forced_openings.py --depth 7 --engine 4 --levels 2

The openings are those of ``experiments/strength_targets.py`` and ``jaxgames eval``: ``--games``
of them, laid out and keyed as one :func:`jaxgames.evaluation.arena.arena` call with
``PRNGKey(--seed)`` (4 random plies, the ladder's; game k of each colour starts from opening k,
so an agent meets every opening once as first and once as second player). At each opening the
first player is to move. Two questions per opening:

* **Perfect play**: the engine's alpha-beta run full width to ``--depth`` plies with no
  quiescence (``animal_shogi_engine.search(env, depth, quiescence=0)``). Captures of the lion,
  tries and repetitions are scored exactly there and a legal try at the horizon counts as the
  win it is, so a root value of a win (``WIN - k``) is a forced win within ``depth + 1`` plies
  for the side to move, every reply of the other side searched; a loss value, a forced loss.
  An opening the first player wins by force is lost by *any* second player against a perfect
  one, and the other way round.
* **engine:N** (the targets' opponent, ``--engine``; depth N and its quiescence). As the side
  that can force a win it *converts* an opening when it wins whatever the other side plays. It
  does once its own search gives its move a win value: that value is exact (every defending
  reply was searched: full width, or in check, where quiescence searches all evasions; a
  defender that may stand pat gets no win value), so it plays a fastest proven win, and at each
  later move the rest of that proof, shorter, lies inside the same search again. Where its
  first search finds no win, ``--levels L`` follows the games: each of its equal-best moves
  (it draws one at random), then every reply, up to L of its moves, until its search proves
  the win at each leaf (or a game ends won). A draw, a loss or an unproven leaf after L of its
  moves: not converted (the true count can only be higher). Only openings won by force (by
  the full-width search, or by engine:N's own first search, which can see further) are
  followed.

Per colour of an agent playing engine:N this gives the openings it loses whatever it plays,
and so its ceiling at the protocol, ``(games - lost) / games`` (draws would lower it further).
Exact over these openings (no sampling interval). ``--agent SPEC`` also plays that agent's
targets' games against engine:N (the same games as ``strength_targets.py``) and splits its W/D/L
per colour into those openings and the others. ``--json FILE`` writes the numbers and the
opening indices.
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
from experiments.common import eval_opening_plies, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.animal_shogi_engine import WIN, search  # noqa: E402
from jaxgames.evaluation.elo import Record  # noqa: E402
from jaxgames.evaluation.match import arena, arena_layout, play_games  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402

#: a root value beyond this is a win or loss (evaluations stay below ~1e4)
DECIDED = WIN // 2


def take(states, idx: np.ndarray):
    """The games ``idx`` of a batched state."""
    return jax.tree.map(lambda x: x[idx], states)


def opening_positions(env, games: int, seed: int):
    """The ``games`` openings of the targets' games: each game's first position after the
    random opening plies (first player to move), as a batched state."""
    opening = eval_opening_plies(env)
    a_player, ids = arena_layout(2 * games)
    rand = make_opponent("random", env)  # only the opening's random plies are kept
    run = jax.jit(
        lambda k: play_games(
            rand, rand, env, a_player, k, opening, None, ids, lambda s: s.step_count >= opening
        )
    )
    snaps = run(jax.random.PRNGKey(seed))[2]
    return take(snaps, np.arange(games)), opening


def batched(fn, chunk: int = 256):
    """``fn`` jitted and vmapped, applied in fixed chunks of ``chunk`` states (one compile)."""
    f = jax.jit(jax.vmap(fn))

    def apply(states):
        n = int(states.step_count.shape[0])
        outs = []
        for lo in range(0, n, chunk):
            idx = np.arange(lo, lo + chunk).clip(max=n - 1)
            outs.append(np.asarray(f(take(states, idx)))[: min(chunk, n - lo)])
        return np.concatenate(outs) if outs else np.zeros((0,))

    return apply


def children(env, states, moves: np.ndarray):
    """Every (state, action) with ``moves[i, a]`` True, stepped: (parent index, child states)."""
    parent, action = np.nonzero(moves)
    stepped = jax.jit(jax.vmap(env.step))(take(states, parent), jnp.asarray(action, jnp.int32))
    return parent, stepped


def converted(env, engine_values, states, levels: int) -> np.ndarray:
    """bool[B]: engine, to move in each of ``states``, wins whatever the other side plays
    (module docstring: proven by its own search now, or at every leaf within ``levels`` of its
    moves)."""
    n = int(states.step_count.shape[0])
    ok = np.ones(n, bool)
    if n == 0:
        return ok
    engine = np.asarray(states.current_player)  # per opening: the engine's player id

    def advance(owner, frontier, moves=None):
        """Play ``moves`` (default: every legal move); a finished game the engine did not win
        fails its opening. Returns the live children and their openings."""
        if owner.size == 0:
            return owner, frontier
        legal = np.asarray(frontier.legal_action_mask)
        parent, after = children(env, frontier, legal if moves is None else moves & legal)
        done = np.asarray(after.terminated | after.truncated)
        won = np.asarray(after.rewards)[np.arange(len(parent)), engine[owner[parent]]] > 0
        ok[owner[parent[done & ~won]]] = False
        live = np.flatnonzero(~done)
        return owner[parent[live]], take(after, live)

    owner, frontier = np.arange(n), states
    for level in range(levels + 1):
        if owner.size == 0:
            break
        values = engine_values(frontier)
        unproven = np.flatnonzero((values.max(axis=1) < DECIDED) & ok[owner])
        owner, frontier = owner[unproven], take(frontier, unproven)
        if level == levels:  # still unproven after `levels` engine moves
            ok[owner] = False
            break
        values = values[unproven]
        tied = values == values.max(axis=1, keepdims=True)  # it draws any of these
        owner, frontier = advance(owner, frontier, tied)
        owner, frontier = advance(owner, frontier)  # every reply
    return ok


def defended_in_vain(env, engine_values, states, levels: int) -> np.ndarray:
    """bool[B]: the side to move in each of ``states`` loses whatever it plays against the
    engine (every legal move leads to a position :func:`converted` gives the engine)."""
    n = int(states.step_count.shape[0])
    if n == 0:
        return np.zeros(0, bool)
    parent, after = children(env, states, np.asarray(states.legal_action_mask))
    done = np.asarray(after.terminated | after.truncated)
    lost = np.ones(n, bool)
    lost[parent[done]] = False  # a move that ends the game ends it with a win or a draw
    live = np.flatnonzero(~done)
    ok = converted(env, engine_values, take(after, live), levels)
    lost[parent[live][~ok]] = False
    return lost


def split_games(
    env, agent: str, engine: int, games: int, seed: int, lost: dict, among=None
) -> dict:
    """The targets' games of ``agent`` against engine:N (an :func:`arena` call, as
    ``strength_targets.py`` makes), per colour: W/D/L and score on the openings
    ``lost[colour]`` and on the others, of the openings ``among`` (default: all)."""
    pa, pb = make_opponent(agent, env), make_opponent(f"engine:{engine}", env)
    result = arena(pa, pb, env, 2 * games, jax.random.PRNGKey(seed), eval_opening_plies(env))
    outcomes = result.outcomes  # A first in games 0 .. games-1, second in the rest
    among = np.arange(games) if among is None else np.asarray(among)
    out = {}
    for colour, half in (("first", outcomes[among]), ("second", outcomes[games + among])):
        decided = np.isin(among, lost[colour])
        out[colour] = {}
        for part, sel in (("lost_openings", decided), ("other_openings", ~decided)):
            r = Record.of(half[sel])
            out[colour][part] = dict(wins=r.wins, draws=r.draws, losses=r.losses, score=r.score)
    return out


def print_split(label: str, agent_games: dict | None) -> None:
    """One line per colour: :func:`split_games`' W/D/L and scores (nothing for None)."""
    for colour, parts in (agent_games or {}).items():
        cells = [
            f"{part.replace('_', ' ')} W {r['wins']} D {r['draws']} L {r['losses']} "
            f"({r['score']:.1%})"
            for part, r in parts.items()
        ]
        print(f"{label} as {colour}: " + "; ".join(cells))


def analyse(
    games: int, seed: int, depth: int, engine: int, levels: int, agent: str | None = None
) -> dict:
    env = jaxgames.make("animal_shogi")
    t0 = time.perf_counter()
    states, opening = opening_positions(env, games, seed)
    perfect = batched(search(env, depth, quiescence=0))(states).max(axis=1)
    engine_values = batched(search(env, engine))
    proven_now = np.flatnonzero(engine_values(states).max(axis=1) >= DECIDED)
    # a win engine:N proves is forced too (its search may reach beyond `depth` plies)
    first_forced = np.union1d(np.flatnonzero(perfect >= DECIDED), proven_now)
    second_forced = np.flatnonzero(perfect <= -DECIDED)  # the second player wins by force
    first_conv = first_forced[converted(env, engine_values, take(states, first_forced), levels)]
    second_conv = second_forced[
        defended_in_vain(env, engine_values, take(states, second_forced), levels)
    ]
    return dict(
        games=games,
        seed=seed,
        opening_plies=opening,
        depth=depth,
        engine=f"engine:{engine}",
        levels=levels,
        first_player_forced_win=first_forced.tolist(),
        second_player_forced_win=second_forced.tolist(),
        engine_proves_at_first_move=proven_now.tolist(),
        engine_as_first_converts=first_conv.tolist(),
        engine_as_second_converts=second_conv.tolist(),
        ceiling_vs_perfect=dict(
            first=1 - len(second_forced) / games, second=1 - len(first_forced) / games
        ),
        ceiling_vs_engine=dict(
            first=1 - len(second_conv) / games, second=1 - len(first_conv) / games
        ),
        agent_games=None
        if agent is None
        else split_games(
            env, agent, engine, games, seed, dict(first=second_conv, second=first_conv)
        ),
        agent=agent,
        seconds=time.perf_counter() - t0,
    )


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200, help="openings (games per colour; 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--depth", type=int, default=7, help="full-width plies of perfect play")
    p.add_argument("--engine", type=int, default=4, help="the opponent engine's depth (4)")
    p.add_argument("--levels", type=int, default=2, help="engine moves followed (2)")
    p.add_argument(
        "--agent",
        help="also play this agent's targets' games against the engine and split its W/D/L "
        "into the openings it loses whatever it plays and the others",
    )
    p.add_argument("--json", help="also write the result to this JSON file")
    args = p.parse_args(argv)
    for name, low in (("games", 1), ("depth", 1), ("engine", 1), ("levels", 0)):
        if getattr(args, name) < low:
            p.error(f"--{name} must be >= {low}, got {getattr(args, name)}")
    if args.agent:  # a bad spec fails here, before the analysis
        make_opponent(args.agent, jaxgames.make("animal_shogi"))
    out = analyse(args.games, args.seed, args.depth, args.engine, args.levels, args.agent)
    n, eng = args.games, out["engine"]
    print(
        f"animal_shogi: {n} openings of {out['opening_plies']} random plies, seed {args.seed}, "
        f"perfect play to {args.depth} plies, {eng} followed {args.levels} moves "
        f"({out['seconds']:.0f} s)"
    )
    for colour, other in (("first", "second"), ("second", "first")):
        forced = out[f"{other}_player_forced_win"]
        conv = out[f"engine_as_{other}_converts"]
        print(
            f"as {colour} player: lost by force in {len(forced)} openings (ceiling against "
            f"perfect play {out['ceiling_vs_perfect'][colour]:.1%}); {eng} as {other} wins "
            f"{len(conv)} of them whatever is played (ceiling against it "
            f"{out['ceiling_vs_engine'][colour]:.1%})"
        )
    print(f"{eng} proves a win at its first move in {len(out['engine_proves_at_first_move'])}")
    print_split(str(args.agent), out["agent_games"])
    if args.json:
        write_json(args.json, out)
    return out


if __name__ == "__main__":
    report_errors(main)

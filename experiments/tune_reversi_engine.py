"""Quick weight checks for the reversi engine: one changed evaluation weight against a base set.

    PYTHONPATH=. python experiments/tune_reversi_engine.py --size 8 --games 256 --depth 3 \\
        closeness=150 potential=250

Each variant (``name=value[,name=value...]``, names from ``reversi_engine.WEIGHT_NAMES``)
plays ``--games`` games against the base weights (``--base`` changes to the board's
``default_weights``), half with each colour, after ``--opening`` random plies; the games of the two
halves share their random numbers. The weights are arguments of one jitted match, so all
variants share one compile. Prints A's score with its 95% Wilson interval.

Self-play at one fixed depth is a narrow yardstick (a change can help at depth 2 and hurt at
depth 3): check a candidate at several depths and sizes before keeping it. The module
docstring of ``jaxgames.evaluation.reversi_engine`` lists the results behind its weights.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.cli import report_errors
from jaxgames.core import random_action
from jaxgames.evaluation import reversi_engine as eng
from jaxgames.evaluation.elo import Record, wilson_interval


def make_match(size: int, games: int, depth: int, endgame: int, opening: int):
    """jit (weights_a float32[6], weights_b float32[6], key) -> A's reward per game."""
    env = jaxgames.make("reversi", size=size)
    half = (games + 1) // 2
    a_player = (jnp.arange(games) >= half).astype(jnp.int32)
    ids = jnp.arange(games) % half  # game k of each half shares its random numbers

    def engine(weights):
        return jax.vmap(
            lambda k, s: eng.search(env, s, k, depth, endgame, False, weights=weights).action
        )

    @jax.jit
    def run(wa, wb, key):
        state = jax.vmap(env.init)(jax.random.split(key, games))

        def body(c):
            state, t, total = c
            kt = jax.random.fold_in(key, t)
            keys = jax.vmap(lambda i: jax.random.fold_in(kt, i))(ids)
            a, b = engine(wa)(keys, state), engine(wb)(keys, state)
            r = jax.vmap(random_action)(keys, state.legal_action_mask)
            act = jnp.where(t < opening, r, jnp.where(state.current_player == a_player, a, b))
            state = jax.vmap(env.step)(state, act)
            return state, t + 1, total + state.rewards

        init = (state, 0, jnp.zeros((games, 2)))
        _, _, total = jax.lax.while_loop(lambda c: ~jnp.all(c[0].terminated), body, init)
        return total[jnp.arange(games), a_player]

    return run


def parse(spec: str, base: np.ndarray) -> np.ndarray:
    """``"closeness=150,mobility=100"`` applied to a copy of ``base``."""
    w = base.copy()
    for item in filter(None, spec.split(",")):
        name, value = item.split("=")
        w[eng.WEIGHT_NAMES.index(name.strip())] = float(value)
    return w


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variants", nargs="+", help="e.g. closeness=150 or mobility=100,discs=0")
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--games", type=int, default=256)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--endgame", type=int, default=4)
    ap.add_argument("--opening", type=int, default=4)
    ap.add_argument("--base", default="", help="changes to default_weights(size) for the base")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    run = make_match(args.size, args.games, args.depth, args.endgame, args.opening)
    base = parse(args.base, np.array(eng.default_weights(args.size), np.float32))
    print("base:", dict(zip(eng.WEIGHT_NAMES, np.round(base, 3).tolist())))
    for spec in args.variants:
        t = time.time()
        w = parse(spec, base)
        mine = np.asarray(run(jnp.asarray(w), jnp.asarray(base), jax.random.PRNGKey(args.seed)))
        record = Record.of(mine)
        wins, draws, losses = record.wins, record.draws, record.losses
        score = wins + draws / 2
        lo, hi = wilson_interval(score, args.games)
        print(
            f"{args.size}x{args.size} depth {args.depth} {spec}: score {score / args.games:.3f} "
            f"[{lo:.3f}, {hi:.3f}] W {wins} D {draws} L {losses} ({time.time() - t:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(report_errors(main))

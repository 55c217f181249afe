"""Validate the yardstick opponents: more search must win (arena matches with Wilson intervals),
and time them per move.

    PYTHONPATH=. python experiments/validate_engines.py                  # all matches, 200 games
    PYTHONPATH=. python experiments/validate_engines.py --quick          # 60 games per match
    PYTHONPATH=. python experiments/validate_engines.py --games 100 --only shogi
    PYTHONPATH=. python experiments/validate_engines.py --timing-only

Matches (A vs B; half the games with each colour, common random numbers, ``--opening``
uniformly random plies first so that deterministic engines meet varied games):

* animal shogi: ``engine:D+1`` vs ``engine:D`` for D = 1..3, ``engine:1`` vs ``greedy``,
  ``engine:2`` vs ``alphabeta:2`` (the generic material-only alpha-beta of opponents.py);
* tic-tac-toe and reversi 6x6: ``uct:400`` vs ``uct:100`` and ``uct:100`` vs ``random``.

``engine:D`` is :func:`jaxgames.evaluation.animal_shogi_engine.animal_shogi_engine_policy`,
``uct:N`` is :func:`jaxgames.evaluation.uct.uct_policy`; other specs go through
:func:`jaxgames.evaluation.opponents.make_opponent`. A pass is A's score (wins + draws / 2)
with its 95% Wilson interval above 1/2. ``--timing`` adds milliseconds per move at batch 1 and
at a large batch (positions after 6 random plies). Writes ``<out>/results.json``.

Measured on the shared 2-core CPU (load average 6-10 from other jobs, so times are inflated),
200 games per match (``python experiments/validate_engines.py --timing``), A's score with its
95% Wilson interval::

    animal shogi, 4 opening plies   engine:2 vs engine:1      65.5% [58.7, 71.7]  (W113 D36 L51)
                                    engine:3 vs engine:2      67.2% [60.5, 73.4]  (W122 D25 L53)
                                    engine:4 vs engine:3      71.5% [64.9, 77.3]  (W134 D18 L48)
                                    engine:1 vs greedy        92.0% [87.4, 95.0]
                                    engine:2 vs alphabeta:2   83.5% [77.7, 88.0]
    tic-tac-toe, 1 opening ply      uct:400 vs uct:100        57.8% [50.8, 64.4]  (73.5% draws)
                                    uct:100 vs random         95.0% [91.0, 97.3]
    reversi 6x6, 2 opening plies    uct:400 vs uct:100        74.2% [67.8, 79.8]
                                    uct:100 vs random         99.2% [96.8, 99.8]

    ms per move (per call / per position)   batch 1        batch 256 (engine) or 64 (UCT)
    animal shogi engine:2                   2.3            203 / 0.8
    animal shogi engine:3                   3.5            823 / 3.2
    animal shogi engine:4                   9.9            2868 / 11.2
    animal shogi engine:5                   36             13027 / 51
    reversi 8x8 uct:100                     29             248 / 3.9
    reversi 8x8 uct:1000                    244            3964 / 62
    animal shogi uct:100                    25             4283 / 67
    animal shogi uct:1000                   711            25280 / 395

A batch costs as much as its slowest game (every search loop runs until the whole batch is
done): the engine's node count varies ~4x across positions, and animal shogi's random rollouts
run up to the 256-ply cap, so batching buys little for these two on a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # run as `python experiments/validate_engines.py`
    sys.path.insert(0, ROOT)

import jaxgames  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.animal_shogi_engine import animal_shogi_engine_policy  # noqa: E402
from jaxgames.evaluation.match import arena  # noqa: E402
from jaxgames.evaluation.uct import uct_policy  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402

SHOGI = [
    ("engine:2", "engine:1"),
    ("engine:3", "engine:2"),
    ("engine:4", "engine:3"),
    ("engine:1", "greedy"),
    ("engine:2", "alphabeta:2"),
]
UCT = [("uct:400", "uct:100"), ("uct:100", "random")]
GAMES = {
    "shogi": ("animal_shogi", {}, SHOGI),
    "ttt": ("tic_tac_toe", {}, UCT),
    "reversi6": ("reversi", {"size": 6}, UCT),
}


def policy(spec: str, env):
    name, _, arg = spec.partition(":")
    if name == "engine":
        return animal_shogi_engine_policy(env, int(arg))
    if name == "uct":
        return uct_policy(env, int(arg))
    return make_opponent(spec, env)


def random_positions(env, key, n, plies):
    """n states after ``plies`` random plies; a game that ended is kept just before its end."""

    def one(k):
        def body(t, s):
            nxt = env.step(s, jaxgames.random_action(jax.random.fold_in(k, t), s.legal_action_mask))
            over = nxt.terminated | nxt.truncated
            return jax.tree_util.tree_map(lambda x, y: jnp.where(over, y, x), nxt, s)

        return jax.lax.fori_loop(0, plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(key, n))


def time_per_move(spec, env, batches, plies=6, repeats=3):
    """{batch: (ms per call, ms per position)}: one move for every position of the batch,
    compiled first, averaged over ``repeats`` calls on different positions."""
    fn = jax.jit(jax.vmap(policy(spec, env)))
    out = {}
    for b in batches:
        pos = random_positions(env, jax.random.PRNGKey(b), b * repeats, plies)
        chunks = [
            jax.tree_util.tree_map(lambda x: x[i * b : (i + 1) * b], pos) for i in range(repeats)
        ]
        keys = jax.random.split(jax.random.PRNGKey(0), b)
        fn(keys, chunks[0]).block_until_ready()  # compile
        t = time.perf_counter()
        for c in chunks:
            fn(keys, c).block_until_ready()
        ms = (time.perf_counter() - t) / repeats * 1e3
        out[b] = (ms, ms / b)
        print(
            f"  {env.name}{env.config or ''} {spec:10s} batch {b:4d}: {ms:9.1f} ms per call, "
            f"{ms / b:8.2f} ms per position",
            flush=True,
        )
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200, help="games per match")
    p.add_argument("--opening", type=int, default=4, help="random opening plies (animal shogi)")
    p.add_argument("--only", nargs="+", choices=sorted(GAMES), default=sorted(GAMES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timing", action="store_true", help="also time the engines per move")
    p.add_argument("--timing-only", action="store_true")
    p.add_argument("--quick", action="store_true", help="60 games per match (a few minutes)")
    p.add_argument("--out", default="runs/validate_engines")
    a = p.parse_args(argv)
    if a.quick:
        a.games = 60
    results = {"matches": [], "timing": {}, "args": vars(a), "platform": jax.devices()[0].platform}
    if not a.timing_only:
        for key in a.only:
            game, options, matches = GAMES[key]
            env = jaxgames.make(game, **options)
            # tic-tac-toe and reversi vary through the searches' own randomness
            opening = a.opening if game == "animal_shogi" else (1 if game == "tic_tac_toe" else 2)
            print(f"{env!r}: {a.games} games per match, {opening} random opening plies")
            for spec_a, spec_b in matches:
                t = time.perf_counter()
                r = arena(
                    policy(spec_a, env),
                    policy(spec_b, env),
                    env,
                    a.games,
                    jax.random.PRNGKey(a.seed),
                    opening_plies=opening,
                )
                lo, hi = r.overall.ci("score")
                verdict = "PASS" if lo > 0.5 else "no clear win"
                print(
                    f"  {spec_a} vs {spec_b} ({time.perf_counter() - t:.0f} s, mean "
                    f"{r.plies.mean():.0f} plies): {r.overall}  [{verdict}]",
                    flush=True,
                )
                results["matches"].append(
                    dict(
                        game=env.name,
                        options=options,
                        a=spec_a,
                        b=spec_b,
                        opening=opening,
                        **r.to_dict(),
                        passed=bool(lo > 0.5),
                    )
                )
    if a.timing or a.timing_only:
        print("time per move")
        shogi = jaxgames.make("animal_shogi")
        for d in (2, 3, 4, 5):
            results["timing"][f"animal_shogi engine:{d}"] = time_per_move(
                f"engine:{d}", shogi, (1, 256)
            )
        for env in (jaxgames.make("reversi", size=8), shogi):
            for n in (100, 1000):
                results["timing"][f"{env.name} uct:{n}"] = time_per_move(
                    f"uct:{n}", env, (1, 64), repeats=1 if n == 1000 else 3
                )
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(f"wrote {os.path.join(a.out, 'results.json')}")
    return results


if __name__ == "__main__":
    sys.exit(report_errors(main))

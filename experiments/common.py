"""Helpers shared by the experiment scripts: output folders, CSV/JSON, plots with a seed band,
and *seed-vmapped training with periodic arena evaluation*.

    out = prepare_out("runs/learning_curves/tic_tac_toe_ppo", {"seeds": [0, 1, 2], ...})
    result = train_seeds("ppo", config, seeds=[0, 1, 2], n_evals=10,
                         opponents={"random": ..., "greedy": ...}, eval_games=200)
    write_csv(f"{out}/curves.csv", result.rows)
    save_seed_runs(result, out)              # out/seed<k>/: a run directory load_policy reads

Training design (``train_seeds``): the algorithm's pure ``init``/``chunk`` are ``vmap``-ed over
the seed keys ``PRNGKey(seed)`` (exactly the key the run driver would use for ``--seed``), the
chunk is compiled once ahead of time (compile time reported separately), and between chunks the
greedy policy of EVERY seed plays each opponent in one jitted, seed-vmapped arena
(``jaxgames.evaluation.arena.play_games``: half the games as first player, half as second,
common random numbers across colours). The wall clock counts only the training chunks of all
seeds together (they run at once), not the evaluation.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import sys
import time
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if (
    ROOT not in sys.path
):  # scripts run as `python experiments/x.py` import jaxgames from the checkout
    sys.path.insert(0, ROOT)

import jaxgames  # noqa: E402
from jaxgames.agents import algorithm_module  # noqa: E402
from jaxgames.compile_cache import enable_compile_cache  # noqa: E402
from jaxgames.evaluation.elo import wilson_interval  # noqa: E402
from jaxgames.evaluation.match import play_games  # noqa: E402
from jaxgames.provenance import machine_description  # noqa: E402
from jaxgames.runs import CONFIG_FILE, CREATED_FORMAT, config_record  # noqa: E402
from jaxgames.runs.checkpoint import CheckpointStore  # noqa: E402
from jaxgames.runs.metrics import MetricsLog, chunk_record  # noqa: E402
from jaxgames.training.driver import fit_params, initial_params, needs_widening  # noqa: E402

# the experiments reuse compiled programs across runs (off: JAXGAMES_COMPILE_CACHE=0)
enable_compile_cache()


# ----------------------------------------------------------------------------- files
def prepare_out(out: str, config: dict[str, Any]) -> str:
    """Create ``out`` and write ``out/config.json`` (``config`` plus backend, jax version, time).
    Returns ``out``."""
    os.makedirs(out, exist_ok=True)
    record = {
        **config,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "jax": jax.__version__,
        "created": time.strftime(CREATED_FORMAT),
    }
    write_json(os.path.join(out, "config.json"), record)
    return out


def write_json(path: str, data: Any) -> str:
    """Write ``data`` as indented JSON (numpy scalars/arrays converted). Returns ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    def default(x):
        if isinstance(x, np.ndarray):
            return x.tolist()
        if isinstance(x, (np.generic,)):
            return x.item()
        if dataclasses.is_dataclass(x):
            return dataclasses.asdict(x)
        return str(x)

    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=default)
    return path


def write_csv(path: str, rows: Sequence[dict[str, Any]]) -> str:
    """Write ``rows`` (dicts; columns = union of keys in first-seen order). Returns ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    cols: list[str] = []
    for r in rows:
        cols.extend(k for k in r if k not in cols)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols or ["empty"])
        w.writeheader()
        w.writerows(rows)
    return path


def read_csv(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_jsonl(path: str, records: Sequence[dict[str, Any]]) -> str:
    """One JSON object per line. Returns ``path``."""
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, default=float) + "\n")
    return path


# ----------------------------------------------------------------------------- statistics
_T975 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    12: 2.179,
    15: 2.131,
    20: 2.086,
    25: 2.060,
    30: 2.042,
}


def t_quantile_975(df: int) -> float:
    """Student-t 97.5% quantile for ``df`` degrees of freedom (table; 1.96 beyond 30)."""
    if df < 1:
        return float("nan")
    if df > 30:
        return 1.959963984540054
    best = max(k for k in _T975 if k <= df)
    return _T975[best]


def mean_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """values float[seeds, T] -> (mean, low, high) float[T]: the 95% t-interval of the mean
    over seeds (``low == high == mean`` for a single seed)."""
    v = np.asarray(values, dtype=np.float64)
    mu = v.mean(0)
    n = v.shape[0]
    if n < 2:
        return mu, mu, mu
    half = t_quantile_975(n - 1) * v.std(0, ddof=1) / math.sqrt(n)
    lo, hi = mu - half, mu + half
    if v.min() >= 0.0 and v.max() <= 1.0:  # rates: keep the band inside [0, 1]
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return mu, lo, hi


# ----------------------------------------------------------------------------- plots
def pyplot():
    """matplotlib.pyplot with the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_band(
    ax,
    x: np.ndarray,
    values: np.ndarray,
    label: str,
    color=None,
    style: str = "-",
    alpha: float = 0.2,
):
    """Seed mean of ``values`` float[seeds, T] against ``x`` float[T] with its 95% band."""
    mu, lo, hi = mean_band(values)
    (line,) = ax.plot(x, mu, style, color=color, label=label, marker="o", ms=2.5)
    if np.asarray(values).shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=alpha, lw=0)
    return line


def save_figure(fig, stem: str) -> list[str]:
    """Save ``fig`` as ``stem.png`` and ``stem.pdf``; close it. Returns the paths."""
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        fig.savefig(f"{stem}.{ext}", dpi=120 if ext == "png" else None)
        paths.append(f"{stem}.{ext}")
    pyplot().close(fig)
    return paths


# ----------------------------------------------------------------------------- targets
#: targets of the final greedy agents: opponent -> [(what, threshold)]. The opponents are the
#: floor (random) and held-out rungs of the game's ladder, never the presets' training partners
#: (greedy, alphabeta:2). "win_first"/"win_second"/"win_all": minimum win rate;
#: "score_first"/"score_second"/"score_all": minimum score (win 1, draw 1/2); "no_losses": zero
#: losses. Each colour separately where a colour is named (the stricter reading).
TARGETS = {
    "tic_tac_toe": {
        "random": [("win_first", 0.95), ("win_second", 0.75)],
        "uct:300": [("no_losses", 0)],
        "perfect": [("no_losses", 0)],
    },
    "default": {
        "random": [("win_first", 0.98), ("win_second", 0.98)],
        # the issue-18 bar: at least an even score against the depth-2 engine, as either colour
        "engine:2": [("score_first", 0.5), ("score_second", 0.5)],
    },
}


def reversi_discs(states: Any, player: jax.Array) -> tuple[jax.Array, jax.Array]:
    """int32[...] discs of ``player`` and of the other side in batched reversi ``states``
    (bitboards ``mover`` / ``opponent`` over the last axis, from the side to move's view)."""
    mover = jnp.sum(jax.lax.population_count(states.mover), axis=-1).astype(jnp.int32)
    other = jnp.sum(jax.lax.population_count(states.opponent), axis=-1).astype(jnp.int32)
    to_move = states.current_player == player
    return jnp.where(to_move, mover, other), jnp.where(to_move, other, mover)


def colour_columns(first: Any, second: Any) -> dict[str, Any]:
    """Each colour's W/D/L, score and 95% Wilson interval of the score, from the
    :class:`~jaxgames.evaluation.arena.Record` of the games as first and as second player
    (``first_wdl``, ``first_score``, ``first_score_low``, ``first_score_high``, ``second_...``)."""
    out: dict[str, Any] = {}
    for side, r in (("first", first), ("second", second)):
        low, high = r.ci("score")
        out.update(
            {
                f"{side}_wdl": f"{r.wins}/{r.draws}/{r.losses}",
                f"{side}_score": r.score,
                f"{side}_score_low": low,
                f"{side}_score_high": high,
            }
        )
    return out


def colour_cell(row: dict[str, Any], side: str) -> str:
    """``W/D/L, score [low, high]`` of one colour of a :func:`colour_columns` row."""
    low, high = row[f"{side}_score_low"], row[f"{side}_score_high"]
    return f"{row[f'{side}_wdl']}, {row[f'{side}_score']:.1%} [{low:.1%}, {high:.1%}]"


def targets_for(game: str, opponent: str) -> list[tuple[str, float]]:
    return TARGETS.get(game, TARGETS["default"]).get(opponent, [])


def target_line(game: str, opponent: str) -> tuple[str, float] | None:
    """(``"win"`` or ``"score"``, the lowest threshold) of ``opponent``'s rate targets on
    ``game`` (a line on the learning curves), or None if it has none."""
    rates = [(what.split("_")[0], thr) for what, thr in targets_for(game, opponent)]
    rates = [(w, thr) for w, thr in rates if w in ("win", "score")]
    return min(rates, key=lambda r: r[1]) if rates else None


#: ladder rungs too slow to play during training (per-move cost on the 2-core CPU, see
#: experiments/benchmark_opponents.py): uct with more simulations, deeper engines
CURVE_RUNG_LIMITS = {"uct": 300, "engine": 2}


def eval_opening_plies(env) -> int:
    """Random plies that start every evaluation game on ``env``: the ladder's (4 for reversi and
    animal shogi), as a greedy network against a deterministic engine would otherwise replay
    one game per colour; none for tic-tac-toe, whose targets are about the game from its start
    (one random ply can decide it) and whose opponents break ties at random."""
    from experiments.build_ladder import ladder_definition

    return 0 if env.name == "tic_tac_toe" else ladder_definition(env)[1]


def curve_opponents(env, partners: Any = ()) -> list[str]:
    """The opponents a ``env`` agent is measured against during training: random (the floor of
    every target) plus the held-out rungs of the game's ladder cheap enough to evaluate often
    (:data:`CURVE_RUNG_LIMITS`), weakest first; a rung among ``partners`` (the run's training
    partners) is left out: it measures what was trained on, not strength."""
    from experiments.build_ladder import ladder_specs
    from jaxgames.specs import parse_spec

    def cheap(text: str) -> bool:
        spec = parse_spec(text)
        limit = CURVE_RUNG_LIMITS.get(spec.kind)
        return limit is None or spec.args[0] <= limit

    rungs = [r for r in ladder_specs(env) if cheap(r) and r not in set(partners or ())]
    return ["random"] + [r for r in rungs if r != "random"]


# ----------------------------------------------------------------------------- games / configs
def add_overrides_argument(parser, help: str, dest: str = "overrides") -> None:
    """``--set KEY=VALUE ...``: config overrides into ``dest`` (:func:`parse_set_args` checks
    them)."""
    parser.add_argument("--set", dest=dest, nargs="*", default=[], metavar="KEY=VALUE", help=help)


def standard_games() -> list[str]:
    """Every variant of every registered game (``jaxgames.game_variants()``) as a game spec of
    :func:`parse_game`, in registry order: ``["tic_tac_toe", "reversi:6", "reversi:8",
    "animal_shogi"]``; the experiments' default list of games."""
    specs = []
    for name, options in jaxgames.game_variants():
        if set(options) - {"size"}:
            raise ValueError(f"no game spec for {name} with options {options} (only name:size)")
        specs.append(f"{name}:{options['size']}" if options else name)
    return specs


def parse_game(spec: str) -> tuple[str, dict[str, Any], str]:
    """``"reversi:6"`` -> ("reversi", {"size": 6}, "reversi6x6");
    ``"tic_tac_toe"`` -> (.., {}, "tic_tac_toe")."""
    name, _, size = spec.partition(":")
    if size:
        try:
            n = int(size)
        except ValueError:
            raise ValueError(
                f"bad game spec {spec!r}: use a name or name:size, e.g. reversi:6"
            ) from None
        return name, {"size": n}, f"{name}{n}x{n}"
    return name, {}, name


def make_config(
    algorithm: str,
    game: str,
    options: dict[str, Any],
    quick: bool,
    overrides: dict[str, Any] | Sequence[str] = (),
) -> Any:
    """The algorithm's per-game default config (``quick`` preset if asked) with ``overrides``
    (a mapping or ``--key=value`` strings) applied. An ``init_from`` agent is checked here
    (``ValueError`` if it does not fit), before a script writes anything."""
    module = algorithm_module(algorithm)
    cfg = module.default_config(game, options, quick=quick)
    cfg = cfg.override(overrides) if overrides else cfg
    if cfg.init_from:
        initial_params(module.make_algorithm(cfg))
    return cfg


def parse_set_args(parser, items: Sequence[str]) -> list[tuple[str, str]]:
    """``--set KEY=VALUE ...`` strings as (key, value) pairs; ``parser.error`` for a bad one."""
    pairs = [tuple(kv.split("=", 1)) for kv in items]
    for kv in pairs:
        if len(kv) != 2:
            parser.error(f"--set expects KEY=VALUE, got {kv[0]!r}")
    return pairs


def with_eval_points(algorithm: str, config: Any, n_evals: int) -> Any:
    """``config`` with ``updates_per_chunk`` chosen so the run has about ``n_evals`` chunks
    (one evaluation after each); the total number of updates stays about the same."""
    module = algorithm_module(algorithm)
    algo = module.make_algorithm(config)
    per_update = algo.steps_per_chunk // config.updates_per_chunk
    updates = max(1, round(config.total_steps / per_update))
    upc = max(1, round(updates / max(1, n_evals)))
    return config.override({"updates_per_chunk": upc, "eval_games": 0})


# ----------------------------------------------------------------------------- evaluation
def make_seed_evaluator(
    agent,
    env,
    opponent: Callable,
    n_games: int,
    max_plies: int | None = None,
    opening_plies: int = 0,
):
    """Jitted ``evaluate(params[S...], keys[S, 2]) -> outcomes int8[S, n_games]`` (+1 the
    agent won, 0 draw, -1 lost) of every seed's greedy policy against ``opponent``. The first
    ``ceil(n/2)`` games give the agent the first move (game i of each colour starts from the
    same ``opening_plies`` random plies); ``a_player`` int32[n_games] is attached as
    ``evaluate.a_player`` (numpy)."""
    first = (n_games + 1) // 2
    i = jnp.arange(n_games, dtype=jnp.int32)
    a_player = jnp.where(i < first, 0, 1).astype(jnp.int32)
    game_ids = jnp.where(i < first, i, i - first)

    def one(params, key):
        total, _ = play_games(
            agent.policy(params, greedy=True),
            opponent,
            env,
            a_player,
            key,
            opening_plies,
            max_plies,
            game_ids,
        )
        mine = total[i, a_player]
        theirs = total[i, 1 - a_player]
        return jnp.sign(mine - theirs).astype(jnp.int8)

    fn = jax.jit(jax.vmap(one))
    fn.a_player = np.asarray(a_player)
    return fn


def outcome_counts(outcomes: np.ndarray, a_player: np.ndarray) -> dict[str, np.ndarray]:
    """outcomes int8[S, G], a_player int[G] -> counts int[S] keyed
    ``{win,draw,loss}_{first,second,all}`` and ``games_{first,second,all}``."""
    out = {}
    for side, sel in (
        ("first", a_player == 0),
        ("second", a_player == 1),
        ("all", np.ones_like(a_player, bool)),
    ):
        o = outcomes[:, sel]
        out[f"win_{side}"] = (o > 0).sum(1)
        out[f"draw_{side}"] = (o == 0).sum(1)
        out[f"loss_{side}"] = (o < 0).sum(1)
        out[f"games_{side}"] = np.full(o.shape[0], o.shape[1])
    return out


# -------------------------------------------------------------------------- seed-vmapped training
@dataclasses.dataclass
class SeedTraining:
    """Result of :func:`train_seeds`.

    rows: one dict per (evaluation point, seed, opponent): env_steps, train_seconds, seed,
    opponent and W/D/L counts and rates per colour. state: final train state, leading axis =
    seeds. metrics: per-chunk training metrics, float[chunks, seeds] per name. started: when
    training began (as ``config.json``'s "created"); chunk_clock: per chunk done, (unix
    time at its end, its own seconds).
    """

    algorithm: str
    config: Any
    seeds: list[int]
    rows: list[dict[str, Any]]
    state: Any
    metrics: dict[str, np.ndarray]
    compile_seconds: float
    train_seconds: float
    eval_seconds: float
    num_chunks: int
    steps_per_chunk: int
    started: str
    chunk_clock: list[tuple[float, float]]


def train_seeds(
    algorithm: str,
    config: Any,
    seeds: Sequence[int],
    opponents: dict[str, Callable],
    eval_games: int,
    eval_every: int = 1,
    echo: Callable[[str], None] = print,
    eval_at_start: bool = True,
    time_budget_s: float | None = None,
    opening_plies: int = 0,
) -> SeedTraining:
    """Train ``algorithm`` with ``config`` for every seed at once (``vmap``) and evaluate the
    greedy policies against ``opponents`` (name -> policy) every ``eval_every`` chunks, at the
    start (untrained, if ``eval_at_start``) and at the end. ``eval_games`` games per
    opponent and seed, half with each colour, each from ``opening_plies`` random plies.
    ``time_budget_s`` stops training (after the current chunk, with a final evaluation) once
    the training wall clock exceeds it."""
    module = algorithm_module(algorithm)
    algo = module.make_algorithm(config)
    seeds = [int(s) for s in seeds]
    keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
    started = time.strftime(CREATED_FORMAT)
    t0 = time.perf_counter()
    # init runs un-jitted (op by op): jitted and seed-vmapped, the orthogonal initialisers become
    # batched LAPACK QRs that can deadlock XLA:CPU's thread pool on 2 cores (a race; see
    # docs/known_issues/jit_vmap_init_hang.py); op by op they run one at a time
    state = jax.block_until_ready(jax.vmap(algo.init)(keys))
    if config.init_from:  # every seed starts from the same trained network

        def tell(text: str) -> None:
            echo(f"  [{algorithm} {config.game}] {text}")

        params, fresh = initial_params(algo, tell), algo.params(state)  # fresh: one per seed
        if needs_widening(params, jax.tree_util.tree_map(lambda x: x[0], fresh)):
            tell(f"widening its network to {config.net}")
        state = jax.vmap(lambda s, f: algo.start_from(s, fit_params(params, f)))(state, fresh)
        tell(f"starting from the parameters of {config.init_from}")
    chunk = jax.jit(jax.vmap(algo.chunk), donate_argnums=0).lower(state).compile()
    compile_s = time.perf_counter() - t0
    evaluators = {
        name: make_seed_evaluator(algo.agent, algo.env, pol, eval_games, None, opening_plies)
        for name, pol in opponents.items()
    }
    params_of = jax.jit(jax.vmap(algo.params))
    eval_key = jax.random.PRNGKey(0x5EED)
    rows: list[dict[str, Any]] = []
    eval_s = 0.0

    def evaluate(k: int, train_s: float) -> None:
        nonlocal eval_s
        t = time.perf_counter()
        params = params_of(state)
        ekeys = jnp.stack([jax.random.fold_in(jax.random.fold_in(eval_key, s), k) for s in seeds])
        summary = []
        for name, fn in evaluators.items():
            counts = outcome_counts(np.asarray(fn(params, ekeys)), fn.a_player)
            for j, s in enumerate(seeds):
                row = dict(
                    chunk=k,
                    env_steps=k * algo.steps_per_chunk,
                    train_seconds=round(train_s, 3),
                    seed=s,
                    opponent=name,
                )
                for side in ("first", "second", "all"):
                    g = int(counts[f"games_{side}"][j])
                    for what in ("win", "draw", "loss"):
                        row[f"{what}_{side}"] = int(counts[f"{what}_{side}"][j])
                    for what in ("win", "draw", "loss"):
                        row[f"{what}_rate_{side}"] = (
                            row[f"{what}_{side}"] / g if g else float("nan")
                        )
                rows.append(row)
            w = counts["win_all"] / counts["games_all"]
            lo = counts["loss_all"] / counts["games_all"]
            summary.append(f"{name} win {w.mean():.2f} loss {lo.mean():.2f}")
        eval_s += time.perf_counter() - t
        echo(
            f"  [{algorithm} {config.game}] chunk {k}/{algo.num_chunks} "
            f"steps {k * algo.steps_per_chunk:,} "
            f"train {train_s:.1f}s | " + "; ".join(summary)
        )

    if eval_at_start and evaluators:
        evaluate(0, 0.0)
    train_s = 0.0
    metric_log: list[dict[str, np.ndarray]] = []
    chunk_clock: list[tuple[float, float]] = []
    done = 0
    for k in range(1, algo.num_chunks + 1):
        t = time.perf_counter()
        state, m = chunk(state)
        m = jax.block_until_ready(jax.device_get(m))
        chunk_clock.append((time.time(), time.perf_counter() - t))
        train_s += chunk_clock[-1][1]
        metric_log.append({n: np.asarray(v) for n, v in m.items()})
        done = k
        over = time_budget_s is not None and train_s > time_budget_s
        if evaluators and (k % eval_every == 0 or k == algo.num_chunks or over):
            evaluate(k, train_s)
        if over:
            echo(f"  time budget {time_budget_s:.0f}s reached after chunk {k}/{algo.num_chunks}")
            break
    metrics = {
        n: np.stack([m[n] for m in metric_log]) for n in (metric_log[0] if metric_log else {})
    }
    return SeedTraining(
        algorithm,
        config,
        seeds,
        rows,
        state,
        metrics,
        compile_s,
        train_s,
        eval_s,
        done,
        algo.steps_per_chunk,
        started,
        chunk_clock,
    )


def compiled_flops(compiled) -> float | None:
    """Floating-point operations of one call of a compiled function, as XLA counts them
    (``cost_analysis``; a dict, or a list of one dict per program in older JAX), or None
    where the backend gives no count."""
    try:
        cost = compiled.cost_analysis()
    except Exception:  # not every backend implements it
        return None
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else None
    flops = (cost or {}).get("flops")
    return float(flops) if flops is not None and flops > 0 else None


def matmul_peak_flops(n: int = 1024, repeats: int = 20) -> float:
    """This machine's measured float32 matmul rate (FLOP/s): the best of ``repeats`` timed
    ``[n, n] @ [n, n]`` products on the default device (2 n^3 FLOPs each) after a warm-up."""
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32)
    mm = jax.jit(lambda x: x @ x)
    jax.block_until_ready(mm(a))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(mm(a))
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best


def save_seed_runs(result: SeedTraining, out: str) -> list[str]:
    """Write each seed's final train state as a run directory ``out/seed<s>/`` (config.json
    with ``seed = s`` and the training's start as "created", ``metrics.jsonl`` with each
    chunk's env steps, end time, seconds and that seed's training metrics, as ``jaxgames
    train`` writes them, + an orbax checkpoint), readable by ``jaxgames.load_policy``,
    ``make_opponent(<dir>)``, ``jaxgames play`` and ``jaxgames export`` (whose model card
    reads the steps and clock from them). Returns the directories."""
    dirs = []
    for j, s in enumerate(result.seeds):
        d = os.path.join(out, f"seed{s}")
        if os.path.exists(d):
            import shutil

            shutil.rmtree(d)
        os.makedirs(d)
        cfg = result.config.override({"seed": s})
        write_json(
            os.path.join(d, CONFIG_FILE),
            {
                **config_record(result.algorithm, cfg),
                "created": result.started,
                "machine": machine_description(),
                "trained_by": "experiments/common.py train_seeds (vmapped seeds)",
                "chunks_done": result.num_chunks,
            },
        )
        log = MetricsLog(d)
        for k, (end, seconds) in enumerate(result.chunk_clock, start=1):
            own = {name: values[k - 1, j] for name, values in result.metrics.items()}
            log.append({**chunk_record(k, result.steps_per_chunk, own, seconds), "time": end})
        log.write_csv()
        store = CheckpointStore(os.path.join(d, "checkpoints"), keep=1)
        try:
            store.save(result.num_chunks, jax.tree_util.tree_map(lambda x: x[j], result.state))
        finally:
            store.close()
        dirs.append(d)
    return dirs


def curve_arrays(
    rows: Sequence[dict[str, Any]], opponent: str | None, column: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From :attr:`SeedTraining.rows` (or curves.csv rows): (env_steps float[T], train_seconds
    float[T], values float[seeds, T]) of ``column`` against ``opponent`` (None: every row, for
    rows with one value per point and seed such as elo.csv's)."""
    sel = [r for r in rows if opponent is None or r["opponent"] == opponent]
    seeds = sorted({int(r["seed"]) for r in sel})
    chunks = sorted({int(r["chunk"]) for r in sel})
    by = {(int(r["seed"]), int(r["chunk"])): r for r in sel}
    steps = np.array([float(by[(seeds[0], c)]["env_steps"]) for c in chunks])
    secs = np.array([float(by[(seeds[0], c)]["train_seconds"]) for c in chunks])
    vals = np.array([[float(by[(s, c)][column]) for c in chunks] for s in seeds])
    return steps, secs, vals


def fmt_rate(k: int, n: int) -> str:
    """``"97.3% [96.1%, 98.2%]"``: rate with its 95% Wilson interval."""
    if n == 0:
        return "-"
    lo, hi = wilson_interval(k, n)
    return f"{k / n:.1%} [{lo:.1%}, {hi:.1%}]"

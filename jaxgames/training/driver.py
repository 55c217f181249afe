"""The run driver shared by all algorithms: jitted chunks on device, bookkeeping on the host.

    summary = run_training("ppo", config, "runs/ttt-ppo")

``runs/<name>/`` layout::

    config.json          {"algorithm": "ppo", "config": {...}}  created once (exclusively)
    .lock                while a process trains into the run (see jaxgames.runs.lock)
    metrics.jsonl        one record per chunk: training metrics, eval/{win,draw,loss}_{first,second}
    metrics.csv          the same as a table (rewritten every chunk)
    tensorboard/, wandb/ optional mirrors of the metrics (``loggers``; jaxgames.training.loggers)
    checkpoints/<k>/     orbax checkpoint of the whole train state after chunk k (newest kept)
    learning_curve.png   win/loss rate vs random against env steps (at the end)

Per chunk: ``state, metrics = chunk(state)`` (jit, donated), evaluation of the greedy policy
vs a uniformly random player as each side (key = fold_in(seed key, chunk): never the training
RNG), one JSONL record, then the checkpoint. Rerunning the same command resumes from the
newest readable checkpoint (later records are dropped and recomputed identically), so an
interrupted run ends bit for bit where an uninterrupted one does. A different config for an
existing run directory is an error. ``init_from`` starts from a trained agent's network
(:func:`initial_params`, read once when the run starts).

Safety: one process trains into a run at a time (:class:`~jaxgames.runs.lock.RunLock`; a
killed holder's lock is taken over); a damaged checkpoint is skipped for the previous one
(:mod:`jaxgames.runs.checkpoint`); parameters that stop being finite stop the run with
:class:`TrainingDivergedError` before anything of that chunk is written; a damaged
``metrics.jsonl`` line other than a torn last one is a
:class:`~jaxgames.runs.metrics.MetricsError` and nothing is changed.

Devices: the chunk runs SPMD on a :func:`jaxgames.distributed.make_mesh` mesh (``devices``:
all by default, or a count): the env batch is split over the ``'data'`` axis, the rest
replicated (``Algorithm.partition`` decides). The device count is not part of the config: a
run may resume on another number of devices (then to float tolerance, not bit for bit). With
several hosts (``jaxgames.distributed.initialize``) every host runs this same function; only
process 0 writes config.json, metrics and plots.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import time
import warnings
from typing import Any, Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from jaxgames import distributed
from jaxgames.agents.algorithm import Algorithm
from jaxgames.agents.networks import add_input_rows, can_widen, widen_params
from jaxgames.agents.registry import algorithm_module
from jaxgames.core import feature_channels_within, random_policy
from jaxgames.evaluation.match import evaluate_vs
from jaxgames.provenance import machine_description
from jaxgames.runs import (
    CONFIG_FILE,
    CREATED_FORMAT,
    check_run_dir,
    config_record,
    load_agent,
)
from jaxgames.runs.checkpoint import CheckpointError, CheckpointStore
from jaxgames.runs.lock import RunLock
from jaxgames.runs.metrics import MetricsLog, chunk_record, plot_learning_curve
from jaxgames.specs import agent_run, make_partners, parse_spec
from jaxgames.training.loggers import Logger, open_loggers, parse_loggers

_EVAL_TAG = 0x5EED


class TrainingDivergedError(ValueError):
    """The parameters stopped being finite (NaN or inf); nothing of that chunk was saved."""


@dataclasses.dataclass
class RunSummary:
    """Result of :func:`run_training`.

    run_dir, algorithm, state (final train state, on device), records (all metric records),
    completed (all chunks done), chunks_run (chunks computed by this call).
    """

    run_dir: str
    algorithm: Algorithm
    state: Any
    records: list[dict[str, Any]]
    completed: bool
    chunks_run: int

    @property
    def last(self) -> dict[str, Any]:
        return self.records[-1] if self.records else {}


def make_evaluator(
    algo: Algorithm, n_games: int
) -> Callable[[Any, jax.Array], dict[str, jax.Array]]:
    """Jitted ``evaluate(params, key)``: greedy policy vs uniform random, ``n_games`` per side."""

    def evaluate(params, key):
        return evaluate_vs(
            algo.env, algo.agent.policy(params, greedy=True), random_policy, key, n_games
        )

    return jax.jit(evaluate)


def _shapes(tree: Any) -> tuple[Any, list[tuple[tuple[int, ...], Any]]]:
    """A parameter tree's structure and its leaves' shapes and dtypes."""
    return jax.tree_util.tree_structure(tree), [
        (x.shape, x.dtype) for x in jax.tree_util.tree_leaves(tree)
    ]


def initial_params(algo: Algorithm, echo: Callable[[str], None] | None = None) -> Any:
    """The network parameters of the trained agent ``algo.config.init_from`` names (a run
    directory's newest readable checkpoint, or ``pretrained:<name>``), to start ``algo``'s run
    from. ``ValueError`` ``invalid init_from=...: <why>`` for a spec that is no trained agent
    or cannot be read, an agent of another game, or another network shape. Two exceptions,
    each the same function: a narrower MLP of the same depth (widened by :func:`fit_params`)
    and an MLP reading fewer input features than the run's, which get zero weights
    (:func:`~jaxgames.agents.networks.add_input_rows`; ``echo`` is told)."""
    config = algo.config
    text = config.init_from

    def bad(why: str) -> ValueError:
        return ValueError(f"invalid init_from={text!r}: {why}")

    try:
        kind = parse_spec(text).kind
        folder = agent_run(text) if kind in ("run", "pretrained") else None
    except ValueError as e:
        raise bad(str(e)) from None
    if folder is None:
        raise bad("must be a run directory or 'pretrained:<name>', not a search or engine")
    try:
        loaded = load_agent(folder)
    except ValueError as e:  # RunNotFoundError, CheckpointError, a corrupt file
        raise bad(str(e)) from None
    theirs = (loaded.env.name, dict(loaded.env.config))  # options at their defaults too
    ours = (algo.env.name, dict(algo.env.config))
    if theirs != ours:
        raise bad(f"it plays {theirs[0]} {theirs[1]}, this run trains {ours[0]} {ours[1]}")
    want = jax.eval_shape(lambda k: algo.params(algo.init(k)), jax.random.PRNGKey(0))
    params = loaded.params
    if loaded.config.features != config.features:
        rows = feature_channels_within(algo.env, loaded.config.features, config.features)
        if rows is None or not loaded.config.network == config.network == "mlp":
            raise bad(
                f"its network reads features {loaded.config.features!r}, this run's "
                f"{config.features!r} (an MLP can start from one reading fewer channels)"
            )
        params = add_input_rows(params, rows, want)
        if echo is not None:
            echo(
                f"adding the input features {config.features!r} to its network "
                f"(zero weights: it computes the same function)"
            )

    ours_shapes, theirs_shapes = _shapes(want), _shapes(params)
    widens = (
        loaded.config.network == config.network
        and can_widen(config.network, loaded.config.net, config.net)
        and ours_shapes[0] == theirs_shapes[0]  # the same tree: only widths differ
    )
    if ours_shapes != theirs_shapes and not widens:
        raise bad(
            f"its network ({loaded.config.network} {loaded.config.net}) does not fit this run's "
            f"({config.network} {config.net})"
        )
    return params


def needs_widening(params: Any, fresh: Any) -> bool:
    """Whether ``params`` from :func:`initial_params` are a narrower network than ``fresh``
    (an initialisation of the run's own network)."""
    return _shapes(params) != _shapes(fresh)


def fit_params(params: Any, fresh: Any) -> Any:
    """``params`` from :func:`initial_params` as parameters of the run's network: as they are,
    or a narrower MLP widened with ``fresh``'s new units (:func:`widen_params`), so the run
    starts from the same function either way and its seed decides the new units."""
    return widen_params(params, fresh) if needs_widening(params, fresh) else params


def make_finite_check(algo: Algorithm) -> Callable[[Any], jax.Array]:
    """Jitted ``finite(train_state) -> bool[]``: every floating-point parameter is finite."""

    def finite(state):
        leaves = [
            jnp.all(jnp.isfinite(x))
            for x in jax.tree_util.tree_leaves(algo.params(state))
            if jnp.issubdtype(x.dtype, jnp.inexact)
        ]
        return jnp.all(jnp.stack(leaves)) if leaves else jnp.bool_(True)

    return jax.jit(finite)


class Compiled(NamedTuple):
    """What :func:`run_training` builds once per config and device mesh."""

    algo: Algorithm
    chunk: Callable  # jitted, sharded chunk(state) -> (state, metrics)
    evaluate: Callable | None  # jitted evaluate(params, key), None without evaluation
    init: Callable  # jitted, sharded init(key) -> state
    shardings: Any  # the train state's shardings on the mesh
    finite: Callable  # jitted finite(state) -> bool[]


_COMPILED: dict[str, Compiled] = {}


def _compiled(module, algorithm: str, config: Any, mesh) -> Compiled:
    """The :class:`Compiled` pieces for ``mesh``, cached per config and devices so that
    resuming or rerunning in the same process does not recompile."""
    tag = json.dumps(config_record(algorithm, config), sort_keys=True) + repr(
        mesh.device_ids.tolist()
    )
    if tag not in _COMPILED:
        # the partners are resolved here, not inside make_algorithm: building an algorithm
        # (e.g. to load a trained agent) never reads other runs
        partners = make_partners(config.partners, config.make_env())
        algo: Algorithm = module.make_algorithm(config, partners)
        init_fn, chunk_fn, shardings = distributed.sharded_train_fns(algo, mesh)
        evaluate = make_evaluator(algo, config.eval_games) if config.eval_games > 0 else None
        if len(_COMPILED) >= 8:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[tag] = Compiled(
            algo, chunk_fn, evaluate, init_fn, shardings, make_finite_check(algo)
        )
    return _COMPILED[tag]


def _create_config_file(run_dir: str, record: dict[str, Any]) -> bool:
    """Create ``config.json`` exclusively, complete or not at all: False if it already exists."""
    path = os.path.join(run_dir, CONFIG_FILE)
    tmp = os.path.join(run_dir, f"{CONFIG_FILE}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        json.dump(
            {**record, "created": time.strftime(CREATED_FORMAT), "machine": machine_description()},
            f,
            indent=2,
        )
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)  # fails if the file exists: never replaces another writer's
    except FileExistsError:
        return False
    except OSError as e:  # no hard links here: an exclusive create (not atomic, still exclusive)
        if e.errno == errno.EEXIST:
            return False
        try:
            with open(path, "x") as f, open(tmp) as src:
                f.write(src.read())
        except FileExistsError:
            return False
    finally:
        os.unlink(tmp)
    return True


def _remove_if_empty(path: str) -> None:
    """Remove the directory ``path`` if it is empty (a run that failed before writing)."""
    try:
        os.rmdir(path)
    except OSError:
        pass


def run_training(
    algorithm: str,
    config: Any,
    run_dir: str,
    *,
    progress: bool = True,
    max_chunks: int | None = None,
    echo: Callable[[str], None] = print,
    devices: int | str | None = None,
    loggers: str | Sequence[str] = (),
) -> RunSummary:
    """Train ``algorithm`` (a name in :data:`jaxgames.agents.ALGORITHMS`) with ``config`` into
    ``run_dir``, resuming if it already holds this run.

    max_chunks: stop after computing this many chunks in this call (the run stays resumable);
    ``None`` runs to the end. devices: ``None``/``"all"`` (every visible device) or a count
    (:func:`jaxgames.distributed.make_mesh`). loggers: optional mirrors of ``metrics.jsonl``
    (always written), e.g. ``("tensorboard", "wandb")`` (:mod:`jaxgames.training.loggers`); not
    part of the config, so a run can resume with others. Raises ``ValueError`` for a run directory
    holding a different run or a ``num_envs`` that is not a multiple of the device count
    (nothing is written then), :class:`~jaxgames.runs.lock.RunLockedError` if another
    process trains into ``run_dir``, :class:`~jaxgames.runs.metrics.MetricsError` for a
    damaged ``metrics.jsonl`` line (nothing is changed),
    :class:`~jaxgames.runs.checkpoint.CheckpointError` if checkpoints exist but none is
    readable, :class:`TrainingDivergedError` if the parameters stop being finite.
    """
    module = algorithm_module(algorithm)
    if not isinstance(config, module.Config):
        raise TypeError(
            f"{algorithm} expects a {module.Config.__name__}, got {type(config).__name__}"
        )
    mesh = distributed.make_mesh(devices)
    primary = distributed.is_primary()
    record = config_record(algorithm, config)
    loggers = parse_loggers(loggers)  # MissingExtraError naming the pip extra, before writing
    check_run_dir(run_dir, record)
    log = MetricsLog(run_dir)
    log.records()  # MetricsError for a damaged line, before anything is written
    with contextlib.ExitStack() as stack:
        existing = True
        if primary:  # RunLockedError naming the holder if another process trains here
            if not os.path.exists(run_dir):
                os.makedirs(run_dir)
                stack.callback(_remove_if_empty, run_dir)  # after the lock is released
            lock = stack.enter_context(RunLock(run_dir))
            if lock.stale_pid is not None:
                echo(f"taking over the lock of process {lock.stale_pid}, which no longer runs")
            existing = check_run_dir(run_dir, record)  # again: no other writer can change it now
        # ValueError if the batch does not split over the devices, before config.json exists
        compiled = _compiled(module, algorithm, config, mesh)
        algo = compiled.algo
        # a new run checks its starting agent before config.json is written
        start_params = initial_params(algo, echo) if config.init_from and not existing else None
        os.makedirs(run_dir, exist_ok=True)
        if not existing and not _create_config_file(run_dir, record):
            check_run_dir(run_dir, record)  # created meanwhile: ValueError unless the same run
        if distributed.mesh_size(mesh) > 1:
            platform = mesh.devices.flat[0].platform
            echo(
                f"splitting {config.num_envs} games over {distributed.mesh_size(mesh)} "
                f"{platform} devices"
            )
        logged = [r["chunk"] for r in log.records()]
        store = CheckpointStore(os.path.join(run_dir, "checkpoints"), keep=config.keep_checkpoints)
        stack.callback(store.close)
        key = jax.random.PRNGKey(config.seed)
        template = distributed.abstract_state(jax.eval_shape(algo.init, key), compiled.shardings)
        restored = store.restore_latest(template)
        if restored is None:
            if logged and max(logged) > 1:
                raise CheckpointError(
                    f"{run_dir!r} has metrics up to chunk {max(logged)} but no checkpoint; "
                    "refusing to start over on top of it (delete the directory or choose another "
                    "run name)"
                )
            start, state = 0, compiled.init(key)
            if config.init_from:
                params = start_params if start_params is not None else initial_params(algo)
                fresh = algo.params(state)
                if needs_widening(params, fresh):
                    echo(f"widening its network to {config.net} (it computes the same function)")
                state = algo.start_from(state, fit_params(params, fresh))
                state = jax.device_put(state, compiled.shardings)
                echo(f"starting from the parameters of {config.init_from}")
        else:
            start, state = restored
            if primary:
                for path in store.quarantine_after(start):
                    echo(f"moved the damaged checkpoint aside to {path}")
            echo(f"resuming {run_dir} from chunk {start}/{algo.num_chunks}")
        if primary:
            log.truncate(start)
        records = [r for r in log.records() if r["chunk"] <= start]
        end = algo.num_chunks if max_chunks is None else min(algo.num_chunks, start + max_chunks)
        mirrors: list[Logger] = []
        if primary and loggers:
            mirrors = open_loggers(loggers, run_dir, records, start * algo.steps_per_chunk, record)
            for mirror in mirrors:
                stack.callback(mirror.close)
        bar = None
        if progress and primary:
            bar = tqdm(
                total=algo.total_steps,
                initial=start * algo.steps_per_chunk,
                unit="step",
                unit_scale=True,
                desc=f"{algorithm} {config.game}",
                dynamic_ncols=True,
            )
            stack.callback(bar.close)
        state, chunks_run = _chunks(
            compiled, state, key, start, end, store, log, records, bar, mirrors
        )
    completed = end == algo.num_chunks
    if completed and primary:
        plot_learning_curve(
            run_dir, records, title=f"{algorithm} on {config.game} {config.game_options or ''}"
        )
    return RunSummary(run_dir, algo, state, records, completed, chunks_run)


def _chunks(
    compiled: Compiled,
    state: Any,
    key: jax.Array,
    start: int,
    end: int,
    store: CheckpointStore,
    log: MetricsLog,
    records: list[dict[str, Any]],
    bar: Any,
    mirrors: Sequence[Logger] = (),
) -> tuple[Any, int]:
    """Run chunks ``start + 1 .. end``: each one's record is appended to ``records`` (and, on
    the primary process, to ``log``), then its checkpoint saved, then the record sent to the
    ``mirrors`` (after the save: a failing mirror never costs a chunk). Returns (state, chunks
    run).
    :class:`TrainingDivergedError` as soon as the parameters are not finite."""
    algo, evaluate = compiled.algo, compiled.evaluate
    primary = distributed.is_primary()
    eval_key = jax.random.fold_in(key, _EVAL_TAG)
    chunks_run = 0
    last_saved = start
    for k in range(start + 1, end + 1):
        t0 = time.perf_counter()
        state, metrics = compiled.chunk(state)
        metrics = jax.device_get(metrics)
        if not bool(compiled.finite(state)):
            raise TrainingDivergedError(
                f"training diverged in chunk {k}/{algo.num_chunks}: the parameters hold NaN "
                f"or inf (metrics: {_bad_metrics(metrics)}); nothing of chunk {k} was saved. "
                + (
                    f"The last good checkpoint is chunk {last_saved} in {store.directory}. "
                    if last_saved
                    else "The run has no checkpoint yet. "
                )
                + "Rerunning the same command repeats the same computation: lower the "
                "learning rate or fix the config and use another run name."
            )
        rec = chunk_record(k, algo.steps_per_chunk, metrics, time.perf_counter() - t0)
        if evaluate is not None:
            ev = jax.device_get(evaluate(algo.params(state), jax.random.fold_in(eval_key, k)))
            rec.update({f"eval/{n}": float(v) for n, v in ev.items()})
        rec["time"] = time.time()
        if not all(np.isfinite(v) for v in rec.values() if isinstance(v, float)):
            warnings.warn(f"non-finite metrics in chunk {k}: {_bad_metrics(rec)}", stacklevel=2)
        if primary:
            log.append(rec)
            log.write_csv()
        records.append(rec)
        store.save(k, state)
        last_saved = k
        for mirror in mirrors:
            mirror.write(rec)
        chunks_run += 1
        if bar is not None:
            bar.update(algo.steps_per_chunk)
            post = {"steps/s": f"{rec['steps_per_sec']:.3g}"}
            if evaluate is not None:
                post["win1"] = f"{rec['eval/win_first']:.2f}"
                post["win2"] = f"{rec['eval/win_second']:.2f}"
                post["loss"] = f"{max(rec['eval/loss_first'], rec['eval/loss_second']):.2f}"
            bar.set_postfix(post)
    return state, chunks_run


def _bad_metrics(metrics: dict[str, Any]) -> str:
    """The non-finite entries of a metrics dict, e.g. ``train/loss=nan, train/value_loss=inf``."""
    bad = [
        f"{k}={float(v)}"
        for k, v in metrics.items()
        if isinstance(v, (float, np.floating, np.ndarray)) and not np.all(np.isfinite(v))
    ]
    return ", ".join(bad[:6]) + (", ..." if len(bad) > 6 else "") if bad else "all finite"

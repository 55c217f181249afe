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

Seeds: ``run_training(..., seeds=[0, 1, 2])`` trains the seeds in lockstep, one jitted ``vmap``
of the algorithm's pure ``init`` and ``chunk`` on one device (the networks' initialisers are
safe to vmap: :func:`jaxgames.agents.networks.one_key_at_a_time`), each into the ordinary run
directory ``run_dir/seed<s>/`` (its config's ``seed`` is ``s``; each seed's results equal its
single run's to float tolerance: vmapped matmuls sum in another order). They resume together
from the newest chunk every seed has a checkpoint of: each keeps one checkpoint more than
``keep_checkpoints``, so a run stopped between two seeds' saves still has one. ``on_chunk(k,
state, records)`` runs between chunks: an experiment's own evaluation, and its stop.

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
import operator
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
from jaxgames.agents.registry import algorithm_module
from jaxgames.core import random_policy
from jaxgames.evaluation.match import evaluate_vs
from jaxgames.provenance import machine_description
from jaxgames.runs import (
    CONFIG_FILE,
    CREATED_FORMAT,
    check_run_dir,
    config_record,
    is_config_draft,
)
from jaxgames.runs.checkpoint import (
    CheckpointDamagedError,
    CheckpointError,
    CheckpointStore,
    CheckpointWarning,
)
from jaxgames.runs.lock import RunLock
from jaxgames.runs.metrics import MetricsLog, chunk_record, plot_learning_curve
from jaxgames.runs.outputs import run_owning
from jaxgames.signals import interrupts_held
from jaxgames.specs import make_partners
from jaxgames.training.init_from import initial_params, start_from
from jaxgames.training.loggers import Logger, open_loggers, parse_loggers

_EVAL_TAG = 0x5EED


class TrainingDivergedError(ValueError):
    """The parameters stopped being finite (NaN or inf); nothing of that chunk was saved."""


@dataclasses.dataclass
class RunSummary:
    """Result of :func:`run_training`.

    run_dir, algorithm, state (final train state, on device), records (all metric records),
    completed (all chunks done), chunks_run (chunks computed by this call). With ``seeds``:
    the state has a leading seed axis and ``records[i]`` are seed ``seeds[i]``'s records.
    """

    run_dir: str
    algorithm: Algorithm
    state: Any
    records: list[Any]
    completed: bool
    chunks_run: int
    seeds: list[int] | None = None

    @property
    def last(self) -> dict[str, Any]:
        """The last record (of the first seed, with ``seeds``)."""
        records = self.records[0] if self.seeds is not None else self.records
        return records[-1] if records else {}


def _finite(algo: Algorithm, state: Any) -> jax.Array:
    """bool[]: every floating-point parameter of ``state`` is finite."""
    leaves = jax.tree_util.tree_leaves(algo.params(state))
    ok = [jnp.all(jnp.isfinite(x)) for x in leaves if jnp.issubdtype(x.dtype, jnp.inexact)]
    return jnp.all(jnp.stack(ok)) if ok else jnp.bool_(True)


class Compiled(NamedTuple):
    """What :func:`run_training` builds once per config and device mesh (or seed vmap)."""

    algo: Algorithm
    chunk: Callable  # jitted chunk(state) -> (state, metrics), the state donated
    evaluate: Callable | None  # jitted evaluate(params, key), None without evaluation
    init: Callable  # jitted init(key) -> state
    shardings: Any  # the train state's shardings on the mesh (None: seed-vmapped)
    finite: Callable  # jitted finite(state) -> bool[] (bool[S] seed-vmapped)


_COMPILED: dict[str, Compiled] = {}


def _compiled(module, algorithm: str, config: Any, mesh=None) -> Compiled:
    """The :class:`Compiled` pieces for ``mesh`` (sharded), or with ``mesh=None`` vmapped over
    seeds on the default device (every function takes and returns a leading seed axis), cached
    per config and devices so that resuming or rerunning in the same process does not
    recompile. The seed is not part of the key (only ``init``'s key depends on it), so
    ``algo.config.seed`` is that of the config compiled first."""
    record = config_record(algorithm, config.override({"seed": 0}))
    where = "seeds" if mesh is None else repr(mesh.device_ids.tolist())
    tag = json.dumps(record, sort_keys=True) + where
    if tag not in _COMPILED:
        # the partners are resolved here, not inside make_algorithm: building an algorithm
        # (e.g. to load a trained agent) never reads other runs
        partners = make_partners(config.partners, config.make_env())
        algo: Algorithm = module.make_algorithm(config, partners)

        def evaluate(params, key):  # the greedy policy vs uniform random, as each side
            policy = algo.agent.policy(params, greedy=True)
            return evaluate_vs(algo.env, policy, random_policy, key, config.eval_games)

        def finite(state):
            return _finite(algo, state)

        if mesh is not None:
            init_fn, chunk_fn, shardings = distributed.sharded_train_fns(algo, mesh)
        else:  # the orthogonal initialisers make jit(vmap(init)) safe (agents.networks)
            init_fn, shardings = jax.jit(jax.vmap(algo.init)), None
            chunk_fn = jax.jit(jax.vmap(algo.chunk), donate_argnums=0)
            evaluate, finite = jax.vmap(evaluate), jax.vmap(finite)
        evaluate = jax.jit(evaluate) if config.eval_games > 0 else None
        if len(_COMPILED) >= 8:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[tag] = Compiled(algo, chunk_fn, evaluate, init_fn, shardings, jax.jit(finite))
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
    for name in os.listdir(run_dir):  # drafts of processes killed while creating the run
        if is_config_draft(name):
            os.unlink(os.path.join(run_dir, name))
    return True


def _remove_if_empty(path: str) -> None:
    """Remove the directory ``path`` if it is empty (a run that failed before writing)."""
    try:
        os.rmdir(path)
    except OSError:
        pass


@dataclasses.dataclass
class _RunFiles:
    """One run directory while training into it: its record, metrics, checkpoints, mirrors."""

    run_dir: str
    record: dict[str, Any]
    log: MetricsLog
    store: Any = None  # CheckpointStore, opened after config.json is written
    records: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    mirrors: list[Logger] = dataclasses.field(default_factory=list)


def _check(run_dir: str, record: dict[str, Any]) -> _RunFiles:
    """``ValueError`` if ``run_dir`` holds another run, :class:`MetricsError` for a damaged
    metrics line: before anything is written."""
    check_run_dir(run_dir, record)
    log = MetricsLog(run_dir)
    log.records()
    return _RunFiles(run_dir, record, log)


def _claim(stack: contextlib.ExitStack, run: _RunFiles, echo: Callable[[str], None]) -> bool:
    """Lock ``run.run_dir`` (on the primary process; ``RunLockedError`` naming the holder if
    another process trains there) and tell whether it already holds this run."""
    if not distributed.is_primary():
        return True
    if not os.path.exists(run.run_dir):
        os.makedirs(run.run_dir)
        stack.callback(_remove_if_empty, run.run_dir)  # after the lock is released
    lock = stack.enter_context(RunLock(run.run_dir))
    if lock.stale_pid is not None:
        if lock.stale_host is None:
            echo(f"taking over the lock of process {lock.stale_pid}, which no longer runs")
        else:
            echo(
                f"taking over the lock of process {lock.stale_pid} on {lock.stale_host} "
                "(another machine: make sure it no longer trains there)"
            )
    return check_run_dir(run.run_dir, run.record)  # again: no other writer can change it now


def _write_config(run: _RunFiles, existing: bool) -> None:
    os.makedirs(run.run_dir, exist_ok=True)
    if not existing and not _create_config_file(run.run_dir, run.record):
        check_run_dir(run.run_dir, run.record)  # created meanwhile: ValueError unless the same


def _logged_chunks(run: _RunFiles) -> int:
    """The newest chunk in the run's metrics (0: none)."""
    return max((r["chunk"] for r in run.log.records()), default=0)


def _no_restart_over_metrics(run: _RunFiles) -> None:
    logged = _logged_chunks(run)
    if logged > 1:
        raise CheckpointError(
            f"{run.run_dir!r} has metrics up to chunk {logged} but no checkpoint; "
            "refusing to start over on top of it (delete the directory or choose another "
            "run name)"
        )


def _open_outputs(stack, runs: list[_RunFiles], start: int, algo: Algorithm, loggers) -> None:
    """Truncate each run's metrics to ``start``, read its records, open its mirrors."""
    for run in runs:
        if distributed.is_primary():
            run.log.truncate(start)
        run.records = [r for r in run.log.records() if r["chunk"] <= start]
        missing = sorted(set(range(1, start + 1)) - {r["chunk"] for r in run.records})
        if missing:  # deleted or edited while it trained: outside the guarantees, but said
            warnings.warn(
                f"{run.log.path} has no metrics for chunk(s) {_ranges(missing)} of the "
                f"{start} trained (the file was edited or deleted while the run trained); "
                "the parameters are intact, those metrics are not recomputed",
                stacklevel=2,
            )
        if distributed.is_primary() and loggers:
            steps = start * algo.steps_per_chunk
            run.mirrors = open_loggers(loggers, run.run_dir, run.records, steps, run.record)
            for mirror in run.mirrors:
                stack.callback(mirror.close)


def _ranges(chunks: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"``."""
    spans: list[list[int]] = []
    for c in chunks:
        if spans and c == spans[-1][1] + 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans)


def _progress_bar(stack, progress: bool, algo: Algorithm, start: int, desc: str):
    if not (progress and distributed.is_primary()):
        return None
    shape = dict(unit="step", unit_scale=True, dynamic_ncols=True)
    bar = tqdm(total=algo.total_steps, initial=start * algo.steps_per_chunk, desc=desc, **shape)
    stack.callback(bar.close)
    return bar


def run_training(
    algorithm: str,
    config: Any,
    run_dir: str,
    *,
    seeds: Sequence[int] | None = None,
    on_chunk: Callable[[int, Any, list[dict[str, Any]]], Any] | None = None,
    progress: bool = True,
    max_chunks: int | None = None,
    echo: Callable[[str], None] = print,
    devices: int | str | None = None,
    loggers: str | Sequence[str] = (),
) -> RunSummary:
    """Train ``algorithm`` (a name in :data:`jaxgames.agents.ALGORITHMS`) with ``config`` into
    ``run_dir``, resuming if it already holds this run.

    seeds: ``None`` trains ``config.seed`` into ``run_dir``; a list of seeds trains them at
    once into ``run_dir/seed<s>/`` (module docstring). on_chunk: ``on_chunk(k, state,
    records)`` after each chunk ``k`` is saved and once before this call's first chunk (``k`` =
    the chunk resumed from, 0 for a new run), with the train state (a leading seed axis with
    ``seeds``) and that chunk's records (one per run directory, ``{}`` at chunk 0); a true
    return stops the run there (it stays resumable).
    max_chunks: stop after computing this many chunks in this call; ``None`` runs to the end.
    devices: ``None``/``"all"`` (every visible device) or a count
    (:func:`jaxgames.distributed.make_mesh`; one device with ``seeds``). loggers: optional
    mirrors of ``metrics.jsonl`` (always written), e.g. ``("tensorboard", "wandb")``
    (:mod:`jaxgames.training.loggers`); not part of the config, so a run can resume with
    others. Raises ``ValueError`` for a run directory holding a different run, a ``num_envs``
    that is not a multiple of the device count or bad ``seeds`` (nothing is written then),
    :class:`~jaxgames.runs.lock.RunLockedError` if another process trains into ``run_dir``,
    :class:`~jaxgames.runs.metrics.MetricsError` for a damaged ``metrics.jsonl`` line (nothing
    is changed), :class:`~jaxgames.runs.checkpoint.CheckpointError` if checkpoints exist but
    none is readable, :class:`TrainingDivergedError` if the parameters stop being finite.
    """
    module = algorithm_module(algorithm)
    if not isinstance(config, module.Config):
        raise TypeError(
            f"{algorithm} expects a {module.Config.__name__}, got {type(config).__name__}"
        )
    owner = run_owning(os.path.realpath(os.path.dirname(os.path.abspath(run_dir))))
    if owner is not None:  # a run inside another run's folder would pass for its files
        raise ValueError(f"{run_dir!r} would put a run inside the run {owner[0]!r}")
    if seeds is not None:
        return _run_seeds(
            module, algorithm, config, run_dir, seeds, on_chunk, progress, max_chunks, echo,
            devices, loggers,
        )  # fmt: skip
    mesh = distributed.make_mesh(devices)
    record = config_record(algorithm, config)
    loggers = parse_loggers(loggers)  # MissingExtraError naming the pip extra, before writing
    run = _check(run_dir, record)
    with contextlib.ExitStack() as stack:
        existing = _claim(stack, run, echo)
        # ValueError if the batch does not split over the devices, before config.json exists
        compiled = _compiled(module, algorithm, config, mesh)
        algo = dataclasses.replace(compiled.algo, config=config)
        # a new run checks its starting agent before config.json is written
        start_params = initial_params(algo, echo) if config.init_from and not existing else None
        _write_config(run, existing)
        if distributed.mesh_size(mesh) > 1:
            platform = mesh.devices.flat[0].platform
            echo(
                f"splitting {config.num_envs} games over {distributed.mesh_size(mesh)} "
                f"{platform} devices"
            )
        run.store = CheckpointStore(
            os.path.join(run_dir, "checkpoints"), keep=config.keep_checkpoints
        )
        stack.callback(run.store.close)
        key = jax.random.PRNGKey(config.seed)
        template = distributed.abstract_state(jax.eval_shape(algo.init, key), compiled.shardings)
        restored = run.store.restore_latest(template)
        if restored is None:
            _no_restart_over_metrics(run)
            start, state = 0, compiled.init(key)
            if config.init_from:
                params = start_params if start_params is not None else initial_params(algo)
                state = start_from(algo, state, params, echo, batched=False)
                state = jax.device_put(state, compiled.shardings)
        else:
            start, state = restored
            if distributed.is_primary():
                for path in run.store.quarantine_after(start):
                    echo(f"moved the damaged checkpoint aside to {path}")
            echo(f"resuming {run_dir} from chunk {start}/{algo.num_chunks}")
        _open_outputs(stack, [run], start, algo, loggers)
        end = algo.num_chunks if max_chunks is None else min(algo.num_chunks, start + max_chunks)
        bar = _progress_bar(stack, progress, algo, start, f"{algorithm} {config.game}")
        eval_key = jax.random.fold_in(key, _EVAL_TAG)
        if start < end:
            compiled = _compile_ahead(compiled, state, echo)
        state, chunks_run = _chunks(
            compiled, state, eval_key, start, end, [run], bar, on_chunk, seeds=None
        )
    completed = start + chunks_run == algo.num_chunks
    if completed and distributed.is_primary():
        plot_learning_curve(
            run_dir, run.records, title=f"{algorithm} on {config.game} {config.game_options or ''}"
        )
    return RunSummary(run_dir, algo, state, run.records, completed, chunks_run)


def seed_run_dir(run_dir: str, seed: int) -> str:
    """Where ``run_training(..., run_dir, seeds=[..., seed, ...])`` trains ``seed``."""
    return os.path.join(run_dir, f"seed{seed}")


def _check_seeds(seeds: Sequence[int]) -> list[int]:
    try:
        out = [operator.index(s) for s in seeds]
    except TypeError:
        raise ValueError(f"invalid seeds={seeds!r}: must be a list of integers") from None
    if not out or len(set(out)) != len(out):
        raise ValueError(f"invalid seeds={list(seeds)!r}: must be distinct, at least one")
    return out


def _run_seeds(
    module, algorithm, config, run_dir, seeds, on_chunk, progress, max_chunks, echo, devices,
    loggers,
) -> RunSummary:  # fmt: skip
    """:func:`run_training` with ``seeds``: one vmapped run into ``run_dir/seed<s>/`` each."""
    seeds = _check_seeds(seeds)
    if jax.process_count() > 1:
        raise ValueError("seeds train in one process; run each seed on its own host instead")
    if devices not in (None, "all") and distributed.mesh_size(distributed.make_mesh(devices)) > 1:
        raise ValueError(f"seeds train on one device, not devices={devices!r}")
    if os.path.exists(os.path.join(run_dir, CONFIG_FILE)):
        raise ValueError(f"{run_dir!r} holds a single run; train seeds into another directory")
    configs = [config.override({"seed": s}) for s in seeds]  # ValueError for a bad seed
    loggers = parse_loggers(loggers)
    runs = [
        _check(seed_run_dir(run_dir, s), config_record(algorithm, c))
        for s, c in zip(seeds, configs)
    ]
    with contextlib.ExitStack() as stack:
        if not os.path.exists(run_dir) and distributed.is_primary():
            os.makedirs(run_dir)
            stack.callback(_remove_if_empty, run_dir)  # after the seeds' directories
        existing = [_claim(stack, run, echo) for run in runs]
        compiled = _compiled(module, algorithm, config)
        algo = dataclasses.replace(compiled.algo, config=config)
        new_with_init = config.init_from and not all(existing)
        start_params = initial_params(algo, echo) if new_with_init else None
        for run, found in zip(runs, existing):
            _write_config(run, found)
            # one checkpoint more than asked: a run stopped between two seeds' saves of chunk k
            # still has chunk k - 1 in every seed directory
            run.store = CheckpointStore(
                os.path.join(run.run_dir, "checkpoints"), keep=config.keep_checkpoints + 1
            )
            stack.callback(run.store.close)
        keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
        restored = _restore_common(runs, jax.eval_shape(algo.init, keys[0]), echo)
        if restored is None:
            for run in runs:
                _no_restart_over_metrics(run)
            start, state = 0, compiled.init(keys)
            if config.init_from:
                params = start_params if start_params is not None else initial_params(algo)
                state = start_from(algo, state, params, echo, batched=True)
        else:
            start, state = restored
            echo(f"resuming {run_dir} (seeds {seeds}) from chunk {start}/{algo.num_chunks}")
        _open_outputs(stack, runs, start, algo, loggers)
        end = algo.num_chunks if max_chunks is None else min(algo.num_chunks, start + max_chunks)
        desc = f"{algorithm} {config.game} x{len(seeds)} seeds"
        bar = _progress_bar(stack, progress, algo, start, desc)
        eval_keys = jax.vmap(lambda k: jax.random.fold_in(k, _EVAL_TAG))(keys)
        if start < end:
            compiled = _compile_ahead(compiled, state, echo, f" of {len(seeds)} seeds")
        state, chunks_run = _chunks(
            compiled, state, eval_keys, start, end, runs, bar, on_chunk, seeds=seeds
        )
    completed = start + chunks_run == algo.num_chunks
    if completed and distributed.is_primary():
        for s, run in zip(seeds, runs):
            title = f"{algorithm} on {config.game} {config.game_options or ''} seed {s}"
            plot_learning_curve(run.run_dir, run.records, title=title)
    records = [run.records for run in runs]
    return RunSummary(run_dir, algo, state, records, completed, chunks_run, seeds)


def _restore_common(runs: list[_RunFiles], template: Any, echo) -> tuple[int, Any] | None:
    """(chunk, state with a leading seed axis) of the newest chunk that every seed has a
    readable checkpoint of; newer checkpoints (damaged, or of seeds stopped ahead of the
    others) are moved aside. ``None`` if the seeds share no checkpoint;
    :class:`CheckpointError` if they share some and none restores."""
    steps = [run.store.steps() for run in runs]
    common = set.intersection(*(set(s) for s in steps))
    errors = []
    for step in sorted(common, reverse=True):
        try:
            states = [run.store.restore(step, template) for run in runs]
        except CheckpointDamagedError as e:
            errors.append(f"chunk {step}: {e}")
            warnings.warn(
                f"a checkpoint of chunk {step} is damaged: {e}; falling back to the previous one",
                CheckpointWarning,
                stacklevel=3,
            )
            continue
        if distributed.is_primary():
            for run in runs:
                for path in run.store.quarantine_after(step):
                    echo(f"moved a checkpoint after the seeds' common chunk {step} aside to {path}")
        return step, jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
    if errors:
        raise CheckpointError(
            "no chunk has a readable checkpoint in every seed's directory ("
            + "; ".join(errors)
            + "); to train them again from scratch, delete the run directory or choose another "
            "run name."
        )
    if any(steps) and any(_logged_chunks(run) > 1 for run in runs):
        # seeds trained together past chunk 1, now asked with others: refuse, moving nothing
        have = ", ".join(
            f"{os.path.basename(r.run_dir)} " + (f"chunks {min(s)}-{max(s)}" if s else "none")
            for r, s in zip(runs, steps)
        )
        if all(steps):  # a seed resumed alone went on without the others
            fix = (
                "a seed's folder was trained on alone; finish each seed alone the same way "
                "(resume its seed<s> folder as a run), or train the seeds again under another "
                "run name"
            )
        else:
            fix = (
                "the seeds of a run train together, so give the seeds it was trained with, or "
                "train other seeds under another run name"
            )
        raise CheckpointError(f"the seeds' checkpoints share no chunk ({have}): {fix}")
    if distributed.is_primary():
        for run in runs:
            for path in run.store.quarantine_after(0):  # a seed saved chunk 1, another did not
                echo(f"moved a checkpoint the other seeds lack aside to {path}")
    return None


def _compile_ahead(compiled: Compiled, state: Any, echo, what: str = "") -> Compiled:
    """``compiled`` with the chunk and the finiteness check compiled for ``state`` ahead of
    the first chunk, so that the chunks' seconds are training time alone."""
    t0 = time.perf_counter()
    chunk = compiled.chunk.lower(state).compile()
    finite = compiled.finite.lower(state).compile()
    echo(f"compiled the chunk{what} in {time.perf_counter() - t0:.1f} s")
    return compiled._replace(chunk=chunk, finite=finite)


def _chunks(
    compiled: Compiled,
    state: Any,
    eval_key: jax.Array,
    start: int,
    end: int,
    runs: list[_RunFiles],
    bar: Any,
    on_chunk: Callable | None,
    seeds: list[int] | None,
) -> tuple[Any, int]:
    """Run chunks ``start + 1 .. end``: each run's record is appended to its records (and, on
    the primary process, to its log), then its checkpoint saved; then the records are sent to
    the mirrors (after the save: a failing mirror never costs a chunk) and to ``on_chunk``.
    ``seeds``: ``None`` (one run) or the seeds (the state, metrics, evaluation and
    ``eval_key`` have a leading seed axis). Returns (state, chunks run).
    :class:`TrainingDivergedError` as soon as the parameters are not finite."""
    algo, evaluate = compiled.algo, compiled.evaluate
    primary = distributed.is_primary()
    params_of = algo.params if seeds is None else jax.vmap(algo.params)

    def part(tree: Any, i: int) -> Any:
        return tree if seeds is None else jax.tree_util.tree_map(lambda x: x[i], tree)

    if on_chunk is not None and on_chunk(
        start, state, [r.records[-1] if r.records else {} for r in runs]
    ):
        return state, 0
    chunks_run = 0
    last_saved = start
    for k in range(start + 1, end + 1):
        t0 = time.perf_counter()
        state, metrics = compiled.chunk(state)
        metrics = jax.device_get(metrics)
        finite = np.atleast_1d(np.asarray(compiled.finite(state)))
        if not finite.all():
            i = int(np.argmin(finite))
            raise TrainingDivergedError(
                _diverged(k, algo.num_chunks, part(metrics, i), runs[i], last_saved, seeds, i)
            )
        seconds = time.perf_counter() - t0
        ev = None
        if evaluate is not None:
            keys = (
                jax.random.fold_in(eval_key, k)
                if seeds is None
                else jax.vmap(lambda e: jax.random.fold_in(e, k))(eval_key)
            )
            ev = jax.device_get(evaluate(params_of(state), keys))
        now = time.time()
        recs = []
        with interrupts_held() as interrupted:  # every seed's chunk saved, or none cut
            for i, run in enumerate(runs):
                rec = chunk_record(k, algo.steps_per_chunk, part(metrics, i), seconds)
                if ev is not None:
                    rec.update({f"eval/{n}": float(v) for n, v in part(ev, i).items()})
                rec["time"] = now
                if not all(np.isfinite(v) for v in rec.values() if isinstance(v, float)):
                    warnings.warn(
                        f"non-finite metrics in chunk {k}: {_bad_metrics(rec)}", stacklevel=2
                    )
                if primary:
                    run.log.append(rec)
                    run.log.write_csv()
                run.records.append(rec)
                run.store.save(k, part(state, i))
                recs.append(rec)
        if interrupted:
            raise KeyboardInterrupt
        last_saved = k
        for run, rec in zip(runs, recs):
            for mirror in run.mirrors:
                mirror.write(rec)
        chunks_run += 1
        if bar is not None:
            bar.update(algo.steps_per_chunk)
            bar.set_postfix(_postfix(recs))
        if on_chunk is not None and on_chunk(k, state, recs):
            break
    return state, chunks_run


def _diverged(k: int, n: int, metrics: dict, run: _RunFiles, last_saved: int, seeds, i) -> str:
    which = "" if seeds is None else f" (seed {seeds[i]})"
    return (
        f"training diverged in chunk {k}/{n}{which}: the parameters hold NaN "
        f"or inf (metrics: {_bad_metrics(metrics)}); nothing of chunk {k} was saved. "
        + (
            f"The last good checkpoint is chunk {last_saved} in {run.store.directory}. "
            if last_saved
            else "The run has no checkpoint yet. "
        )
        + "Rerunning the same command repeats the same computation: lower the "
        "learning rate or fix the config and use another run name."
    )


def _postfix(recs: list[dict[str, Any]]) -> dict[str, str]:
    """The progress bar's steps/s and evaluation vs random (means over the seeds)."""
    mean = {k: float(np.mean([r[k] for r in recs])) for k, v in recs[0].items() if k != "chunk"}
    post = {"steps/s": f"{mean['steps_per_sec']:.3g}"}
    if "eval/win_first" in mean:
        loss = max(mean["eval/loss_first"], mean["eval/loss_second"])
        post.update(win1=f"{mean['eval/win_first']:.2f}", win2=f"{mean['eval/win_second']:.2f}")
        post["loss"] = f"{loss:.2f}"
    return post


def _bad_metrics(metrics: dict[str, Any]) -> str:
    """The non-finite entries of a metrics dict, e.g. ``train/loss=nan, train/value_loss=inf``."""
    bad = [
        f"{k}={float(v)}"
        for k, v in metrics.items()
        if isinstance(v, (float, np.floating, np.ndarray)) and not np.all(np.isfinite(v))
    ]
    return ", ".join(bad[:6]) + (", ..." if len(bad) > 6 else "") if bad else "all finite"

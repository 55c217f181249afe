"""Gumbel AlphaZero: the loss against hand-computed values, search targets that are legal
distributions, the replay buffer of search targets (written in order, wrapping, sampled only
where written, augmented by symmetries of the rules), bit-exact resume with the buffer,
learning tic-tac-toe from its own search, config errors, the batch-scaling rule."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from tiny_configs import TINY_FIELDS, TINY_PPO

import jaxgames
from jaxgames.agents import alphazero, ppo, presets
from jaxgames.agents.common import Agent
from jaxgames.agents.networks import make_network
from jaxgames.agents.replay import make_trajectory_buffer
from jaxgames.agents.rollout_learning import RolloutState
from jaxgames.core import apply_symmetry
from jaxgames.evaluation import arena
from jaxgames.specs import make_opponent


def tiny_config(**kw):
    return alphazero.AlphaZeroConfig(
        **{**TINY_FIELDS, "total_steps": 128, "eval_games": 4, "num_simulations": 4, **kw}
    )


def test_loss_is_cross_entropy_to_the_search_policy_plus_value_regression(ttt, key):
    agent = Agent(make_network("mlp", 9, hidden=16, layers=1), (2, 3, 3))
    params = agent.init_params(key)
    obs = jax.random.normal(key, (5, 2, 3, 3))
    mask = jnp.array([[True] * 9] * 4 + [[True, True] + [False] * 7])
    target = jax.nn.one_hot(jnp.array([0, 3, 8, 4, 1]), 9)
    value_target = jnp.array([1.0, -1.0, 0.0, 0.5, 1.0])
    batch = alphazero.SearchTarget(obs, mask, target, value_target)
    cfg = tiny_config(vf_coef=0.5)
    total, aux = alphazero.alphazero_loss(agent, params, batch, cfg)
    logits, value = agent.apply(params, obs)
    logits = jnp.where(mask, logits, -jnp.inf)
    ce = -jnp.take_along_axis(jax.nn.log_softmax(logits), jnp.array([0, 3, 8, 4, 1])[:, None], 1)[
        :, 0
    ]
    np.testing.assert_allclose(float(aux["policy_loss"]), float(ce.mean()), rtol=1e-5)
    np.testing.assert_allclose(
        float(aux["value_loss"]), float(0.5 * ((value - value_target) ** 2).mean()), rtol=1e-5
    )
    np.testing.assert_allclose(
        float(total), float(aux["policy_loss"] + 0.5 * aux["value_loss"]), rtol=1e-5
    )
    np.testing.assert_allclose(
        float(aux["policy_kl"]), float(aux["policy_loss"]), rtol=1e-5
    )  # one-hot: H = 0
    # Adam on the fixed batch drives the network to the targets
    opt = optax.adam(1e-2)
    state = opt.init(params)
    grad = jax.jit(jax.grad(lambda p: alphazero.alphazero_loss(agent, p, batch, cfg)[0]))
    for _ in range(200):
        upd, state = opt.update(grad(params), state, params)
        params = optax.apply_updates(params, upd)
    after, aux2 = alphazero.alphazero_loss(agent, params, batch, cfg)
    assert float(after) < 0.1 * float(total) and float(aux2["policy_kl"]) < 0.05


def test_rollout_targets_are_legal_distributions(key):
    """The stored search policies sum to one over legal moves, the root values lie in [-1, 1]."""
    cfg = tiny_config(
        game="reversi", game_options={"size": 6}, num_envs=8, num_steps=6, update_epochs=1
    )
    algo = alphazero.make_algorithm(cfg)
    state = jax.jit(algo.init)(key)
    guide = algo.agent.policy(state.params)
    from jaxgames.agents.search import SearchConfig, search_batch

    config = SearchConfig(num_simulations=4, gumbel_scale=1.0)
    assert algo.config.search == config  # the training search
    out = jax.jit(lambda k, s: search_batch(algo.env, guide, k, s, config))(key, state.env_state)
    w, mask = np.asarray(out.action_weights), np.asarray(state.env_state.legal_action_mask)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)
    assert np.all(w[~mask] == 0)
    assert np.all(np.take_along_axis(mask, np.asarray(out.action)[:, None], 1))
    state, metrics = jax.jit(algo.chunk)(state)
    for name, v in metrics.items():
        assert np.isfinite(np.asarray(v)).all(), name
    assert -1.0 <= float(metrics["value_mean"]) <= 1.0


def test_learns_tic_tac_toe_from_its_own_search(ttt, run_bound):
    """50k plies with 16 simulations (the preset: a quarter of the games against random,
    outcome value targets, root noise): the network alone (greedy, no search) goes from worse
    than random to winning most games against random as X. Play against the perfect player
    after the full preset is a benchmark (docs/results.md), not a unit test."""
    cfg = presets.default_config(
        "alphazero", "tic_tac_toe", quick=True, eval_games=0, num_envs=32, total_steps=50_000
    )
    algo = alphazero.make_algorithm(cfg)
    state, _ = jax.jit(algo.make_train())(jax.random.PRNGKey(0))
    rand = make_opponent("random", ttt)
    untrained = arena(
        algo.agent.policy(algo.init(jax.random.PRNGKey(0)).params),
        rand,
        ttt,
        400,
        jax.random.PRNGKey(1),
    )
    trained = arena(algo.agent.policy(state.params), rand, ttt, 400, jax.random.PRNGKey(1))
    print(untrained, trained, sep="\n")
    assert (
        trained.as_first.win_rate >= 0.85
        and trained.overall.loss_rate < untrained.overall.loss_rate / 2
    )
    assert trained.score > untrained.score + 0.2


def empty_squares(obs):
    """Tic-tac-toe legal moves of live positions: bool[..., 9] squares with no mark."""
    return ~np.asarray(obs).astype(bool).any(-1).reshape(*obs.shape[:-3], 9)


# 12 plies x 8 games of replay (rounded down from 101), 4 plies per update, 2 updates per chunk
REPLAY_CFG = tiny_config(replay_size=8 * 12 + 5, eval_games=0, total_steps=8 * 4 * 4)


@pytest.fixture(scope="module")
def replay_runs(tmp_path_factory):
    """Through the run driver (one compile): the full 2-chunk run, and the same run stopped
    after chunk 1 then resumed."""
    from jaxgames.training.driver import run_training

    root = tmp_path_factory.mktemp("az")
    full = run_training("alphazero", REPLAY_CFG, str(root / "full"), progress=False)
    part = run_training("alphazero", REPLAY_CFG, str(root / "part"), progress=False, max_chunks=1)
    rest = run_training("alphazero", REPLAY_CFG, str(root / "part"), progress=False, echo=print)
    return full, part, rest


def test_replay_buffer_keeps_the_last_searched_positions(replay_runs):
    """Two updates fill rows 0-7, two more write rows 8-11 then wrap onto rows 0-3; every
    stored target is a search policy over the legal moves of its position, with an outcome
    in [-1, 1]."""
    full, part, _ = replay_runs
    assert REPLAY_CFG.replay_rows == 12
    first = jax.tree_util.tree_map(np.asarray, part.state.buffer.data)  # after chunk 1
    assert first.obs.shape == (12, 8, 3, 3, 2) and first.mask.shape == (12, 8, 9)
    assert first.policy.shape == (12, 8, 9) and first.value.shape == (12, 8)
    assert int(part.state.buffer.count) == 8 and int(part.state.buffer.pos) == 8
    np.testing.assert_allclose(first.policy[:8].sum(-1), 1.0, rtol=1e-5)
    assert not first.policy[8:].any()  # not written yet
    second = jax.tree_util.tree_map(np.asarray, full.state.buffer.data)
    assert int(full.state.buffer.count) == 16 and int(full.state.buffer.pos) == 4
    np.testing.assert_allclose(second.policy.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(second.obs[4:8], first.obs[4:8])  # the 2nd rollout stays
    assert not np.array_equal(second.obs[:4], first.obs[:4])  # the 1st one was overwritten
    assert np.array_equal(second.mask, empty_squares(second.obs))
    assert not second.policy[~second.mask].any()
    assert np.all(np.abs(second.value) <= 1.0 + 1e-6)  # outcomes (float32 rounding)
    fill = [r["train/replay_fill"] for r in full.records]
    np.testing.assert_allclose(fill, [(4 + 8) / 2 / 12, 1.0], rtol=1e-6)


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winning_squares(obs):
    """Tic-tac-toe, by hand: bool[..., 9] empty squares that complete a line of the mover's."""
    mine, theirs = (np.asarray(obs)[..., k].reshape(*obs.shape[:-3], 9) > 0 for k in (0, 1))
    wins = np.zeros(mine.shape, bool)
    for line in LINES:
        for sq in line:
            others = [o for o in line if o != sq]
            wins[..., sq] |= mine[..., others].all(-1) & ~mine[..., sq] & ~theirs[..., sq]
    return wins


@pytest.mark.parametrize("win_check", [False, True])
def test_win_check_targets_play_only_wins_in_one(win_check, key):
    """With ``win_check`` every stored search policy of a position whose mover can complete a
    line puts all its weight on such moves; the same run without it spreads weight elsewhere
    (an untrained prior and 4 simulations miss wins)."""
    cfg = tiny_config(num_envs=32, replay_size=32 * 8, eval_games=0, win_check=win_check)
    algo = alphazero.make_algorithm(cfg)
    state, _ = jax.jit(algo.chunk)(algo.init(key))
    data = jax.tree_util.tree_map(np.asarray, state.buffer.data)
    wins = winning_squares(data.obs)
    can_win = wins.any(-1) & data.mask.any(-1)
    assert can_win.sum() >= 10  # enough positions to tell the two apart
    off_wins = np.where(wins, 0.0, data.policy).sum(-1)[can_win]
    if win_check:
        np.testing.assert_allclose(off_wins, 0.0, atol=1e-6)
    else:
        assert off_wins.max() > 0.1


def test_replay_samples_written_positions_moved_by_symmetries(replay_runs, key):
    """Minibatches come only from written rows; augmented, each is a symmetry image of a stored
    position (obs, mask and policy moved together)."""
    buf = replay_runs[1].state.buffer  # 8 of 12 rows written
    buffer = make_trajectory_buffer(REPLAY_CFG.replay_rows, REPLAY_CFG.num_envs)
    sym = jaxgames.make("tic_tac_toe").symmetries
    stored = jax.tree_util.tree_map(lambda x: np.asarray(x[:8]).reshape(64, *x.shape[2:]), buf.data)
    plain, moved = jax.jit(
        lambda buf: (
            alphazero.sample_targets(buffer, buf, key, 4, 64),
            alphazero.sample_targets(buffer, buf, key, 4, 64, sym),
        )
    )(buf)
    assert plain.obs.shape == (4, 64, 3, 3, 2) and moved.policy.shape == (4, 64, 9)

    def rows(t):
        t = jax.tree_util.tree_map(lambda x: np.asarray(x).reshape(-1, *x.shape[2:]), t)
        return [
            (o.tobytes(), m.tobytes(), p.tobytes(), v.tobytes())
            for o, m, p, v in zip(t.obs, t.mask, t.policy, t.value)
        ]

    every = jnp.repeat(jnp.arange(sym.count), 64)  # all symmetries of all stored positions
    o, m, p = apply_symmetry(sym, every, *(np.tile(x, (8, 1, 1, 1)[: x.ndim]) for x in stored[:3]))
    images = set(
        rows(alphazero.SearchTarget(o[None], m[None], p[None], np.tile(stored.value, 8)[None]))
    )
    stored_rows = set(rows(jax.tree_util.tree_map(lambda x: x[None], stored)))
    assert set(rows(plain)) <= stored_rows
    assert set(rows(moved)) <= images
    assert len([r for r in rows(moved) if r not in stored_rows]) > 64  # most were moved
    assert np.array_equal(np.asarray(moved.mask), empty_squares(moved.obs))


def test_resume_with_replay_buffer_is_bit_exact(replay_runs):
    """The buffer is part of the checkpointed train state: a run stopped after one chunk and
    resumed ends bit for bit where the uninterrupted run ends."""
    full, part, rest = replay_runs
    assert not part.completed and rest.completed and rest.chunks_run == 1
    assert int(rest.state.buffer.count) == 16  # wrapped, and restored from the checkpoint
    la, lb = jax.tree_util.tree_leaves(rest.state), jax.tree_util.tree_leaves(full.state)
    assert len(la) == len(lb)
    for a, b in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_without_replay_the_state_is_the_rollout_state(key):
    """replay_size 0 (learn on the fresh rollout only): no buffer, the leaves of a PPO state."""
    algo = alphazero.make_algorithm(tiny_config(replay_size=0))
    state = jax.eval_shape(algo.init, key)
    assert state.buffer is None
    ppo_like = RolloutState(state.params, state.opt_state, state.env_state, state.key, state.update)
    assert len(jax.tree_util.tree_leaves(state)) == len(jax.tree_util.tree_leaves(ppo_like))


@pytest.mark.parametrize(
    "replay_size, rows",
    [(0, 0), (4, 4), (16, 4), (32, 4), (40, 5), (80, 10)],
)
def test_replay_ring_holds_at_least_one_rollout(replay_size, rows):
    """replay_rows: replay_size // num_envs plies of the 8 games, but never fewer than one
    rollout's num_steps = 4 (a ring smaller than a rollout, even below one row, still holds
    the whole rollout rather than turning replay off); 0 is no replay."""
    assert tiny_config(replay_size=replay_size).replay_rows == rows


@pytest.mark.parametrize("replay_size", [0, 64])
def test_augment_moves_the_training_examples(monkeypatch, key, replay_size):
    """augment=True on a game with symmetries moves the examples of every update by the 8
    symmetries of the square (with and without replay); augment=False leaves them. Checked on
    the traced chunk (no compile) by counting calls to augment_targets."""
    calls = []
    real = alphazero.augment_targets

    def spy(symmetries, key, batch):
        calls.append(symmetries.count)
        return real(symmetries, key, batch)

    monkeypatch.setattr(alphazero, "augment_targets", spy)
    for augment in (True, False):
        calls.clear()
        algo = alphazero.make_algorithm(tiny_config(replay_size=replay_size, augment=augment))
        jax.eval_shape(algo.chunk, algo.init(key))
        assert set(calls) == ({8} if augment else set()), (augment, calls)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("num_simulations", 0, "num_simulations"),
        ("max_num_considered_actions", -1, "max_num_considered_actions"),
        ("gumbel_scale", -1.0, "gumbel_scale"),
        ("num_minibatches", 3, "num_minibatches"),
        ("replay_size", -1, "replay_size"),
        ("augment", 1, "augment"),
        ("value_scale", -0.1, "value_scale"),
        ("root_noise", 1.5, "root_noise"),
        ("root_noise_alpha", 0.0, "root_noise_alpha"),
        ("win_check", 1, "win_check"),
    ],
)
def test_bad_config_values_raise_clear_errors(field, value, match):
    with pytest.raises(ValueError, match=match):
        tiny_config(**{field: value})


def test_default_configs_are_valid_for_every_game():
    for game in jaxgames.registered_games():
        cfg = presets.default_config("alphazero", game)
        assert alphazero.AlphaZeroConfig.from_dict(cfg.to_dict()) == cfg
        assert alphazero.default_config(game) == cfg  # the module's shortcut to the presets


def test_retired_fields_load_at_their_old_defaults_only():
    """A config.json written before playout caps, reanalysis, explore_plies, the score utility,
    outcome value targets and noise-free policy targets were removed loads where they hold
    their old defaults, and is refused in one line naming the field where they do not."""
    cfg = tiny_config()
    old = {
        **cfg.to_dict(),
        "explore_plies": 0,
        "full_search_every": 1,
        "cheap_simulations": 1,
        "reanalyse_rows": 0,
        "score_utility": 0.0,
        "value_target": "return",
        "noisy_target": True,
    }
    assert alphazero.AlphaZeroConfig.from_dict(old) == cfg
    gone = [("reanalyse_rows", 8), ("full_search_every", 4), ("score_utility", 0.25)]
    for field, value in gone + [("value_target", "outcome"), ("noisy_target", False)]:
        with pytest.raises(ValueError, match=f"config field '{field}' was removed from jaxgames "):
            alphazero.AlphaZeroConfig.from_dict({**old, field: value})
    with pytest.raises(ValueError, match="unknown config field"):  # retired for AlphaZero only
        ppo.PPOConfig.from_dict({**TINY_PPO.to_dict(), "reanalyse_rows": 0})
    with pytest.raises(ValueError, match="unknown config field 'reanalyse_rows'"):
        cfg.override({"reanalyse_rows": 0})  # a new config cannot set one


@pytest.mark.parametrize("num_envs", [64, 256, 96, 4])
def test_scaled_to_keeps_the_learning_per_ply(num_envs):
    """scaled_to: each ply is still sampled update_epochs times, the replay ring spans the same
    plies of every game, the minibatch grows with the games up to the cap (divides the
    rollout), the learning rate with the square root of the minibatch's growth."""
    base = tiny_config(replay_size=64, learning_rate=1e-3)  # 8 plies of 8 games
    cfg = base.scaled_to(num_envs, max_minibatch=64)
    old_mb = base.batch_size // base.num_minibatches
    mb = cfg.batch_size // cfg.num_minibatches
    assert cfg.num_envs == num_envs and cfg.batch_size % cfg.num_minibatches == 0
    assert cfg.num_minibatches * mb * cfg.update_epochs == cfg.batch_size * base.update_epochs
    assert mb == min(old_mb * num_envs // 8, 64)
    assert cfg.learning_rate == pytest.approx(1e-3 * (mb / old_mb) ** 0.5, rel=1e-5)
    assert cfg.replay_rows == base.replay_rows and cfg.replay_size == 8 * num_envs
    for name in ("num_steps", "update_epochs", "num_simulations", "total_steps", "net"):
        assert getattr(cfg, name) == getattr(base, name)
    # and back, below the cap (past it the minibatch grew less than the games)
    back = base.scaled_to(16).scaled_to(8)
    assert back.learning_rate == pytest.approx(base.learning_rate, rel=1e-5)
    assert dataclasses.replace(back, learning_rate=base.learning_rate) == base


@pytest.mark.parametrize("base", [TINY_PPO, tiny_config()], ids=["ppo", "alphazero"])
def test_the_minibatch_cap_never_splits_an_existing_minibatch(base):
    """The cap of scaled_to bounds how far minibatches grow, never shrinks one: with minibatches
    of 16 plies (8 games x 4 plies / 2) and a cap of 8, scaling to the same 8 games is the
    identity, and to 16 games keeps minibatches of 16 (4 of them, same learning rate)."""
    assert base.scaled_to(8, max_minibatch=8) == base
    up = base.scaled_to(16, max_minibatch=8)
    assert up.batch_size // up.num_minibatches == 16 and up.num_minibatches == 4
    assert up.learning_rate == base.learning_rate


def test_a_scaled_config_trains_on_the_cpu(key):
    """The large-batch settings at a small size: 32 games, minibatches capped at 16 (more
    optimiser steps per update), one chunk on the CPU with finite losses."""
    cfg = tiny_config(replay_size=64).scaled_to(32, max_minibatch=16)
    assert cfg.num_minibatches == 8
    algo = alphazero.make_algorithm(cfg)
    state, metrics = jax.jit(algo.chunk)(algo.init(key))
    assert int(state.update) == cfg.updates_per_chunk
    assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())


def test_scaling_is_refused_in_one_line_where_no_rule_is_known():
    with pytest.raises(ValueError, match="WinnerImitationConfig has no batch-scaling rule"):
        presets.default_config("winner_imitation", "animal_shogi", scale_envs=1024)
    with pytest.raises(ValueError, match="num_envs"):
        tiny_config().scaled_to(0)
    # the preset, then the scaling, then overrides: an override wins over the rule
    cfg = presets.default_config("alphazero", "reversi", scale_envs=1024, learning_rate=1e-4)
    assert cfg.learning_rate == 1e-4 and cfg.num_minibatches == 8 and cfg.replay_size == 65536

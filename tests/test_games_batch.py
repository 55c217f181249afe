"""Training games with partners (jaxgames.agents.games_batch): the learner's frame, rewards
when the partner ends the game, colour coin, config validation, and both algorithms using it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.agents import alphazero, dqn, ppo
from jaxgames.agents.common import negamax_gae, per_ply_discount, selfplay_step
from jaxgames.agents.config import partner_sizes
from jaxgames.agents.games_batch import make_training_games
from jaxgames.core import random_action, random_policy
from jaxgames.specs import check_partners, check_spec, make_opponent, make_partners
from jaxgames.training.driver import run_training


def _rollout(games, key, plies):
    """Random learner moves for ``plies`` plies; returns the stacked SelfPlaySteps and the
    states the learner saw."""
    states = jax.jit(games.init)(key)

    def ply(carry, k):
        s = carry
        k_act, k_step = jax.random.split(k)
        a = random_action(k_act, s.legal_action_mask)
        out = games.step(s, a, k_step)
        return out.state, (out, s)

    _, (outs, seen) = jax.jit(lambda s, ks: jax.lax.scan(ply, s, ks))(
        states, jax.random.split(key, plies)
    )
    return outs, seen


def test_no_partners_is_plain_selfplay(key):
    env = jaxgames.make("tic_tac_toe")
    games = make_training_games(env, 16)
    states = jax.jit(games.init)(key)
    np.testing.assert_array_equal(states.board, jax.vmap(env.init)(jax.random.split(key, 16)).board)
    a = random_action(key, states.legal_action_mask)
    got = jax.jit(games.step)(states, a, key)
    want = jax.jit(selfplay_step, static_argnums=0)(env, states, a, key)
    for x, y in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(x, y)


def _discs(states):
    """int[B]: discs on each reversi board of a batch."""
    both = np.concatenate([np.asarray(states.mover), np.asarray(states.opponent)], axis=-1)
    return np.unpackbits(both.view(np.uint8), axis=-1).sum(-1)


def test_random_openings_start_every_game_after_random_plies(key):
    """max_opening_plies=4 on reversi 6x6: new games (the first ones and those after an auto-reset,
    self-play and partner games) start after 0..4 random plies, each count about equally often,
    every one a live position with one disc per ply played; 0 leaves the env as it is."""
    env = jaxgames.make("reversi", size=6)
    assert make_training_games(env, 16).env is env
    games = make_training_games(
        env, 512, {"random": 0.25}, make_partners({"random": 0.25}, env), max_opening_plies=4
    )
    states = jax.jit(games.init)(key)
    count = np.asarray(states.step_count)
    selfplay = count[:384]
    assert set(selfplay) == {0, 1, 2, 3, 4} and np.bincount(selfplay).min() > 384 // 5 // 2
    assert count[384:].max() <= 5  # the partner may open after the random plies
    assert not np.asarray(states.terminated).any()
    np.testing.assert_array_equal(_discs(states), 4 + count)  # no pass within 5 plies
    # games that ended and restarted inside a rollout start the same way
    outs, seen = _rollout(games, key, 40)
    done = np.asarray(outs.done)[:-1, :384]
    restarted = np.asarray(seen.step_count)[1:, :384][done]
    assert done.sum() > 100 and set(restarted) == {0, 1, 2, 3, 4}


def test_random_openings_that_end_the_game_start_from_the_initial_position(key):
    """Tic-tac-toe with up to 9 random plies: an opening that ends the game (a line, or the
    full board) is replaced by the initial position, so no game starts over."""
    games = make_training_games(jaxgames.make("tic_tac_toe"), 1024, max_opening_plies=9)
    states = jax.jit(games.init)(key)
    count = np.asarray(states.step_count)
    assert not np.asarray(states.terminated).any() and set(count) == set(range(9))
    # 1/10 draw 0 plies; those of 5+ plies that end in a line (and all of 9) fall back to 0
    assert (count == 0).mean() > 0.25


def test_partner_games_are_in_the_learner_frame(key):
    """Self-play rows alternate movers (sign -1); partner rows always come back to the learner
    (sign +1), the learner plays both colours about equally, and finished games score +-1/0
    from the learner's view, consistent with the game's own rewards."""
    env = jaxgames.make("tic_tac_toe")
    games = make_training_games(env, 64, {"random": 0.5}, make_partners({"random": 0.5}, env))
    assert games.num_selfplay == 32 and [p.size for p in games.partners] == [32]
    outs, seen = _rollout(games, key, 200)
    sign = np.asarray(outs.sign)
    done = np.asarray(outs.done)
    assert (sign[:, 32:] == 1).all()
    assert (sign[:, :32][~done[:, :32]] == -1).all()
    # the learner is the mover of every partner row: with the partner opening, X's move came first
    learner = np.asarray(seen.current_player)[:, 32:]
    assert 0.4 < learner.mean() < 0.6, learner.mean()
    reward = np.asarray(outs.reward)[:, 32:]
    outcome = np.asarray(outs.outcome)[:, 32:]
    d = done[:, 32:]
    assert d.sum() > 500
    np.testing.assert_array_equal(
        reward[d], np.take_along_axis(outcome, learner[..., None], -1)[..., 0][d]
    )
    assert set(np.unique(reward[d])) <= {-1.0, 0.0, 1.0}
    assert (reward[~d] == 0).all()
    # random vs random in tic-tac-toe, colours at random: learner wins ~= losses (~44% each)
    assert abs((reward[d] > 0).mean() - (reward[d] < 0).mean()) < 0.08


def test_a_perfect_partner_is_never_beaten_and_its_wins_reach_the_learner(key):
    """Against perfect play a random learner never wins; its losses arrive on the learner's
    move whose reply ended the game (reward -1, done), proving partner rewards are counted."""
    env = jaxgames.make("tic_tac_toe")
    games = make_training_games(env, 32, {"perfect": 1.0}, make_partners({"perfect": 1.0}, env))
    assert games.num_selfplay == 0
    outs, _ = _rollout(games, key, 120)
    reward, done = np.asarray(outs.reward), np.asarray(outs.done)
    assert (reward[done] <= 0).all()
    assert (reward[done] < 0).mean() > 0.5
    stats = games.episode_stats(outs.done, outs.outcome[..., 0], outs.length, outs.reward)
    assert float(stats["win_vs_perfect"]) == 0.0
    assert float(stats["loss_vs_perfect"]) == pytest.approx((reward[done] < 0).mean())


def test_partner_rows_discount_per_ply_as_self_play(key):
    """Both sides play the first free square: X takes 0, 2, 4, 6 and wins on the 7th ply. A
    partner row holds the learner's move and the partner's reply (plies 2, the last 1), and
    its reward and discount (per_ply_discount) give every move the return self-play gives it:
    X's first move gamma^6, O's first move -gamma^5."""
    env = jaxgames.make("tic_tac_toe")

    def first_free(k, s):
        return jnp.argmax(s.legal_action_mask).astype(jnp.int32)

    games = make_training_games(env, 64, {"first": 0.5}, {"first": first_free})
    gamma = 0.9
    states = jax.jit(games.init)(key)
    learner_x = np.asarray(states.step_count) == 0  # partner games the learner opens

    def ply(s, k):
        out = games.step(s, jax.vmap(first_free, (None, 0))(None, s), k)
        return out.state, out

    _, outs = jax.jit(lambda s, ks: jax.lax.scan(ply, s, ks))(states, jax.random.split(key, 7))
    later, discount = per_ply_discount(gamma, outs.plies)
    _, ret = negamax_gae(
        outs.reward * later, jnp.zeros_like(outs.reward), outs.done, outs.sign,
        jnp.zeros(64), discount, 1.0,
    )  # fmt: skip
    ret = np.asarray(ret[0])
    partner_x = np.flatnonzero(learner_x[32:]) + 32
    partner_o = np.flatnonzero(~learner_x[32:]) + 32
    assert len(partner_x) and len(partner_o)
    np.testing.assert_allclose(ret[:32], gamma**6, rtol=1e-6)  # self-play: X's opening move
    np.testing.assert_allclose(ret[partner_x], gamma**6, rtol=1e-6)
    np.testing.assert_allclose(ret[partner_o], -(gamma**5), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(outs.plies)[:4, partner_x[0]], [2, 2, 2, 1])
    np.testing.assert_array_equal(np.asarray(outs.plies)[:, :32], 1)


def test_the_learner_is_never_handed_a_finished_game(key):
    """A random opening can leave the partner a win in one before the learner has moved; that
    game starts again from the first position, at the start of training and after every
    reset, so no learner ply is taken in a finished game (none counted as a phantom draw)."""
    env = jaxgames.make("tic_tac_toe")
    games = make_training_games(
        env, 256, {"perfect": 1.0}, make_partners({"perfect": 1.0}, env), max_opening_plies=4
    )
    outs, seen = _rollout(games, key, 40)
    over = np.asarray(seen.terminated | seen.truncated)
    assert not over.any(), f"{over.sum()} learner plies in finished games"
    done = np.asarray(outs.done)
    assert done.sum() > 1000


@pytest.mark.parametrize(
    "partners, match",
    [
        ({"greedy": 0.0}, "share of games"),
        ({"greedy": 1.5}, "share of games"),
        ({"greedy": "x"}, "share of games"),
        ({"greedy": 0.001}, "rounds to 0"),
        ({"greedy": 0.6, "random": 0.6}, "more than all"),
    ],
)
def test_partner_shares_are_checked(partners, match):
    with pytest.raises(ValueError, match=match):
        partner_sizes(64, partners)
    with pytest.raises(ValueError, match="invalid partners"):
        ppo.default_config("tic_tac_toe", num_envs=64, partners=partners)


def test_unknown_partner_is_named(tmp_path):
    """Partner specs are resolved by the driver (config validation is pure): a bad one is named
    by make_partners, and run_training refuses it before writing anything."""
    cfg = dqn.default_config("reversi", {"size": 6}, num_envs=64, partners={"grredy": 0.5})
    with pytest.raises(ValueError, match="invalid partners.*unknown opponent spec 'grredy'"):
        make_partners(cfg.partners, cfg.make_env())
    cfg = ppo.default_config("reversi", {"size": 6}, partners={"perfect": 0.5})
    with pytest.raises(ValueError, match="perfect"):
        check_partners(cfg.partners, cfg.make_env())
    with pytest.raises(ValueError, match="perfect"):
        run_training("ppo", cfg, str(tmp_path / "run"), progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("module", [ppo, dqn, alphazero])
def test_algorithms_train_with_partners(module, key):
    """One chunk of each algorithm with a greedy partner and random openings: finite metrics,
    the partner win/loss rates are reported, and the partner block of the env states is
    learner-to-move."""
    cfg = module.default_config(
        "reversi",
        {"size": 6},
        quick=True,
        num_envs=16,
        updates_per_chunk=2,
        partners={"greedy": 0.5},
        max_opening_plies=3,
        net={"hidden": 16, "layers": 1},
        eval_games=0,
    )
    if module is dqn:
        cfg = cfg.override({"learning_starts": 16, "batch_size": 16, "buffer_size": 512})
    if module is alphazero:
        cfg = cfg.override({"num_simulations": 2, "num_steps": 4})
    algo = module.make_algorithm(cfg, make_partners(cfg.partners, cfg.make_env()))
    state = jax.jit(algo.init)(key)
    state, metrics = jax.jit(algo.chunk)(state)
    assert {"win_vs_greedy", "loss_vs_greedy", "selfplay_first_win"} <= set(metrics)
    for name, v in metrics.items():
        assert np.isfinite(np.asarray(v)).all(), name
    assert 0.0 <= float(metrics["win_vs_greedy"]) + float(metrics["loss_vs_greedy"]) <= 1.0
    # partner games never stop on the partner's turn
    assert not np.asarray(state.env_state.terminated[8:]).any()


def test_run_directory_partner_is_checked_without_restoring(tmp_path):
    """Config validation reads a partner run's config.json (game must match) but restores no
    checkpoint: a run without checkpoints passes validation and fails only when it is built."""
    import json

    from jaxgames.runs.checkpoint import CheckpointError

    run = tmp_path / "ttt_run"
    run.mkdir()
    ttt_config = ppo.default_config("tic_tac_toe", quick=True)
    (run / "config.json").write_text(
        json.dumps({"algorithm": "ppo", "config": ttt_config.to_dict()})
    )
    cfg = ppo.default_config("tic_tac_toe", num_envs=64, partners={str(run): 0.5})
    assert cfg.partners == {str(run): 0.5}
    check_partners(cfg.partners, cfg.make_env())
    cfg = ppo.default_config("reversi", {"size": 6}, partners={str(run): 0.5})
    with pytest.raises(ValueError, match="was trained on"):
        check_partners(cfg.partners, cfg.make_env())
    env = jaxgames.make("tic_tac_toe")
    assert check_spec(f" {run} ", env) == str(run)
    assert check_spec("alphabeta:02", env) == "alphabeta:2"
    with pytest.raises(CheckpointError, match="no checkpoints"):
        make_opponent(str(run), env)
    (run / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="corrupt"):
        check_spec(str(run), env)


def test_stand_in_partners_have_the_same_structure(key):
    """Built without partner policies (to restore a checkpoint or act), the training games
    hold random stand-ins with the same state structure; a missing policy is an error."""
    env = jaxgames.make("tic_tac_toe")
    real = make_training_games(env, 8, {"perfect": 0.5}, make_partners({"perfect": 0.5}, env))
    stand_in = make_training_games(env, 8, {"perfect": 0.5})
    assert stand_in.partners[0].policy is random_policy
    a, b = jax.eval_shape(real.init, key), jax.eval_shape(stand_in.init, key)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    assert jax.tree_util.tree_leaves(a) == jax.tree_util.tree_leaves(b)
    with pytest.raises(ValueError, match="no policy given"):
        make_training_games(env, 8, {"perfect": 0.5}, {})

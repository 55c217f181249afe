"""The PettingZoo and pgx adapters (jaxgames.interop): PettingZoo's own API test on every game
variant, pgx's own helpers and a step-by-step comparison with pgx's tic-tac-toe."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.interop.pgx import PgxEnv

VARIANTS = jaxgames.game_variants()
IDS = [f"{g}{''.join(f'-{k}{v}' for k, v in o.items())}" for g, o in VARIANTS]


# ---------------------------------------------------------------- PettingZoo
# the API test names the classic envs whose dict observations it expects; ours warn otherwise
@pytest.mark.filterwarnings("ignore:Observation.*:UserWarning")
@pytest.mark.parametrize("game,options", VARIANTS, ids=IDS)
def test_pettingzoo_api_test(game, options):
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test

    from jaxgames.interop.pettingzoo import PettingZooEnv

    env = PettingZooEnv(game, **options)
    api_test(env, num_cycles=300)

    # each agent sees the position from its own side (Env.observe): after a few moves, the
    # mover's view is state.observation and the other's differs (the 2-plane games: swapped)
    env.reset(seed=1)
    for _ in range(3):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))
    mover = env.agent_selection
    other = next(a for a in env.agents if a != mover)
    mine, theirs = env.observe(mover)["observation"], env.observe(other)["observation"]
    np.testing.assert_array_equal(mine, env.state.observation)
    assert mine.shape == theirs.shape == env.game.observation_shape
    assert not np.array_equal(mine, theirs)
    if env.game.observation_shape[-1] == 2:  # own pieces, opponent's pieces
        np.testing.assert_array_equal(theirs, mine[..., ::-1])


def test_pettingzoo_game_to_the_end():
    """A full game of tic-tac-toe: masks, rewards, terminations and the dead steps."""
    pytest.importorskip("pettingzoo")
    from jaxgames.interop.pettingzoo import PettingZooEnv

    env = PettingZooEnv("tic_tac_toe", render_mode="ansi")
    env.reset(seed=0)
    moves = iter([0, 3, 1, 4, 2])  # X takes the top row
    seen = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        seen.append((agent, reward, terminated))
        if terminated or truncated:
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        assert obs["action_mask"].sum() == 9 - len(seen) + 1
        other = env.observe("player_1" if agent == "player_0" else "player_0")
        assert not other["action_mask"].any()  # only the mover has legal moves
        env.step(next(moves))
    assert seen[:5] == [("player_0", 0.0, False), ("player_1", 0.0, False)] * 2 + [
        ("player_0", 0.0, False)
    ]
    assert sorted(seen[5:]) == [("player_0", 1.0, True), ("player_1", -1.0, True)]
    assert env.agents == []
    assert "X" in env.render()


def test_pettingzoo_illegal_action_loses():
    pytest.importorskip("pettingzoo")
    from jaxgames.interop.pettingzoo import PettingZooEnv

    env = PettingZooEnv(jaxgames.make("tic_tac_toe"))
    for bad in (4, 9, 2**40, -1):
        env.reset()
        if bad == 4:
            env.step(4)
            env.step(4)  # occupied; player_1 loses
            assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
        else:
            env.step(bad)  # out of range, not wrapped onto a legal id
            assert env.rewards == {"player_0": -1.0, "player_1": 1.0}, bad
        assert all(env.terminations.values())
    with pytest.raises(ValueError, match="render_mode"):
        PettingZooEnv("tic_tac_toe", render_mode="rgb")
    with pytest.raises(ValueError, match="unknown game"):
        PettingZooEnv("chess")


# ---------------------------------------------------------------- pgx
def test_pgx_helpers_run_on_the_view():
    """pgx's own auto_reset and act_randomly drive the view (they need the all-True mask of a
    finished game and ``state.replace``)."""
    pgx_exp = pytest.importorskip("pgx.experimental")
    env = PgxEnv("tic_tac_toe")
    batch = 4
    step = jax.vmap(pgx_exp.auto_reset(env.step, env.init))

    def ply(state, key):
        k1, k2 = jax.random.split(key)
        action = pgx_exp.act_randomly(k1, state.legal_action_mask)
        state = step(state, action, jax.random.split(k2, batch))
        return state, (state.terminated | state.truncated, state.rewards)

    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), batch))
    assert state.observation.shape == (batch, *env.observation_shape)
    assert state.legal_action_mask.shape == (batch, env.num_actions)
    state, (over, rewards) = jax.jit(lambda s, k: jax.lax.scan(ply, s, k))(
        state, jax.random.split(jax.random.PRNGKey(1), 30)
    )
    assert state.env_id == env.id
    np.testing.assert_array_equal(rewards.sum(-1), 0.0)  # zero-sum
    # every game ended and restarted at least once; rewards only on final steps
    assert over.any(0).all()
    assert (np.abs(rewards).sum(-1) > 0).sum() <= over.sum()


def test_pgx_view_of_a_finished_game():
    env = PgxEnv(jaxgames.make("tic_tac_toe"))
    state = env.init(jax.random.PRNGKey(0))
    assert state.legal_action_mask.all() and state.step_count == 0
    for a in (0, 3, 1, 4, 2):
        state = env.step(state, a)
    assert state.terminated and state.legal_action_mask.all()  # pgx's convention
    assert not state.game.legal_action_mask.any()  # jaxgames' own
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])
    assert int(state._step_count) == 5
    again = env.step(state, 7)
    np.testing.assert_array_equal(again.rewards, [0.0, 0.0])  # finished: a no-op
    with pytest.raises(ValueError, match="options"):
        PgxEnv(jaxgames.make("reversi"), size=6)
    assert PgxEnv("reversi", size=6).id == "jaxgames_reversi_size6"
    # no id is one of pgx's own (pgx code would take the state for its game's)
    pgx = pytest.importorskip("pgx")
    for game in ("tic_tac_toe", "reversi", "animal_shogi"):
        assert PgxEnv(game).id not in pgx.available_envs()


def test_pgx_view_matches_pgx_tic_tac_toe():
    """Random games driven through the view and through pgx's tic_tac_toe with the same keys:
    same masks, observations, terminations and rewards (pgx draws which player id moves
    first; jaxgames' player 0 always does)."""
    pgx = pytest.importorskip("pgx")
    ours, theirs = PgxEnv("tic_tac_toe"), pgx.make("tic_tac_toe")
    keys = jax.random.split(jax.random.PRNGKey(3), 64)

    def run(env):
        def ply(state, key):
            logits = jnp.log(state.legal_action_mask.astype(jnp.float32))
            action = jax.random.categorical(key, logits, axis=-1)
            state = jax.vmap(env.step)(state, action)
            return state, state

        state = jax.vmap(env.init)(keys)
        _, traj = jax.lax.scan(ply, state, jax.random.split(jax.random.PRNGKey(4), 9))
        return state.current_player, traj

    _, a = jax.jit(lambda: run(ours))()
    first, b = jax.jit(lambda: run(theirs))()
    np.testing.assert_array_equal(a.legal_action_mask, b.legal_action_mask)
    np.testing.assert_array_equal(a.terminated, b.terminated)
    np.testing.assert_array_equal(a.observation, b.observation.astype(np.float32))
    first_rewards = np.take_along_axis(np.asarray(b.rewards), first[None, :, None], -1)[..., 0]
    np.testing.assert_array_equal(a.rewards[..., 0], first_rewards)
    assert a.terminated[-1].all() and np.abs(a.rewards).sum() > 0

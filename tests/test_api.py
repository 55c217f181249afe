"""The API contract, checked on every registered game (new games are covered automatically)."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import records, render
from jaxgames.core import COMMON_FIELDS, GameState, GameStateBase
from jaxgames.evaluation.match import arena
from jaxgames.games import game_module

# every variant of every registered game (reversi 6x6 and 8x8: jaxgames.games registry)
CASES = [
    pytest.param(name, opts, id=name + "".join(f"-{k}{v}" for k, v in opts.items()))
    for name, opts in jaxgames.game_variants()
]


def random_rollout(env, key, batch, steps):
    """Random legal play with auto-reset; returns the stacked per-step outputs."""

    def body(carry, _):
        state, key = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        action = jax.vmap(jaxgames.random_action)(
            jax.random.split(k_act, batch), state.legal_action_mask
        )
        out = jax.vmap(jaxgames.step_autoreset, in_axes=(None, 0, 0, 0))(
            env, state, action, jax.random.split(k_reset, batch)
        )
        return (out.state, key), (state, action, out)

    init = jax.vmap(env.init)(jax.random.split(key, batch))
    return jax.lax.scan(body, (init, key), None, length=steps)


@pytest.mark.parametrize("name,opts", CASES)
def test_fields_shapes_and_dtypes_under_vmap(name, opts):
    env = jaxgames.make(name, **opts)
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 5))
    assert isinstance(state, GameState)
    assert state.current_player.shape == (5,) and state.current_player.dtype == jnp.int32
    assert (
        state.legal_action_mask.shape == (5, env.num_actions)
        and state.legal_action_mask.dtype == jnp.bool_
    )
    assert state.rewards.shape == (5, 2) and state.rewards.dtype == jnp.float32
    assert state.terminated.shape == (5,) and state.terminated.dtype == jnp.bool_
    assert state.truncated.shape == (5,) and state.truncated.dtype == jnp.bool_
    assert state.step_count.dtype == jnp.int32
    assert state.observation.shape == (5, *env.observation_shape)
    assert state.observation.dtype == jnp.float32
    assert env.num_players == 2
    np.testing.assert_array_equal(state.current_player, 0)  # player 0 always moves first
    assert bool(jnp.all(jnp.any(state.legal_action_mask, axis=-1)))


@pytest.mark.parametrize("name,opts", CASES)
def test_jit_matches_eager_and_rewards_are_zero_sum(name, opts):
    env = jaxgames.make(name, **opts)
    (final, _), (states, actions, outs) = jax.jit(random_rollout, static_argnums=(0, 2, 3))(
        env, jax.random.PRNGKey(1), 8, 40
    )
    # zero-sum, nonzero only when a game just ended
    np.testing.assert_allclose(outs.rewards.sum(-1), 0.0)
    done = outs.terminated | outs.truncated
    assert not bool(jnp.any((outs.rewards != 0).any(-1) & ~done))
    # the chosen actions were always legal
    chosen = jnp.take_along_axis(states.legal_action_mask, actions[..., None], axis=-1)[..., 0]
    assert bool(jnp.all(chosen))
    # eager single-game step agrees with the jitted batched one for a few transitions
    for t in (0, 7, 23):
        s = jax.tree_util.tree_map(lambda x: x[t, 3], states)
        eager = env.step(s, actions[t, 3])
        jitted = jax.tree_util.tree_map(
            lambda x: x[3],
            jax.vmap(jax.jit(env.step))(jax.tree_util.tree_map(lambda x: x[t], states), actions[t]),
        )
        for a, b in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(jitted)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,opts", CASES)
def test_illegal_action_ends_game_against_the_mover(name, opts):
    env = jaxgames.make(name, **opts)
    state = env.init(jax.random.PRNGKey(0))
    while bool(jnp.all(state.legal_action_mask)):  # tic-tac-toe: every square is free at first
        state = env.step(state, int(jnp.argmax(state.legal_action_mask)))
    illegal = int(jnp.argmin(state.legal_action_mask))
    mover = int(state.current_player)
    for bad in (illegal, -1, env.num_actions):
        nxt = jax.jit(env.step)(state, bad)
        assert bool(nxt.terminated)
        assert float(nxt.rewards[mover]) == -1.0 and float(nxt.rewards[1 - mover]) == 1.0
        assert not bool(jnp.any(nxt.legal_action_mask))
        # the ended game's text reads back as the same finished position
        text = env.to_text(nxt)
        back = env.from_text(text)
        assert env.to_text(back) == text and bool(back.terminated)
        # stepping a finished game is a no-op with zero rewards
        again = env.step(nxt, illegal)
        np.testing.assert_array_equal(again.rewards, [0.0, 0.0])
        assert bool(again.terminated) and int(again.step_count) == int(nxt.step_count)
    # a legal move in any integer dtype that holds it (num_actions may not fit: int8 132)
    legal = int(jnp.argmax(state.legal_action_mask))
    for dtype in (jnp.int8, jnp.uint8, jnp.int16, jnp.uint16):
        if legal <= jnp.iinfo(dtype).max:
            assert not bool(jax.jit(env.step)(state, jnp.asarray(legal, dtype)).terminated)
            assert bool(jax.jit(env.step)(state, jnp.asarray(illegal, dtype)).terminated)
    with pytest.raises(jaxgames.IllegalActionError, match=f"action {illegal} is illegal"):
        env.step_checked(state, illegal)
    with pytest.raises(jaxgames.IllegalActionError, match="out of range"):
        env.step_checked(state, env.num_actions)


@pytest.mark.parametrize("name,opts", CASES)
def test_text_round_trip_along_random_games(name, opts):
    env = jaxgames.make(name, **opts)
    _, (states, actions, _) = jax.jit(random_rollout, static_argnums=(0, 2, 3))(
        env, jax.random.PRNGKey(2), 2, 30
    )
    for t in range(0, 30, 3):
        s = jax.tree_util.tree_map(lambda x: x[t, 0], states)
        text = env.to_text(s)
        parsed = env.from_text(text)
        assert env.to_text(parsed) == text
        np.testing.assert_array_equal(parsed.legal_action_mask, s.legal_action_mask)
        np.testing.assert_array_equal(parsed.observation, s.observation)
        a = int(actions[t, 0])
        assert env.text_to_action(s, env.action_to_text(s, a)) == a


@pytest.mark.parametrize(
    "name,opts", CASES + [pytest.param("reversi", {"size": 4}, id="reversi-4")]
)
def test_finished_games_read_back_with_their_result(name, opts):
    """The text of a game's final position reads back with the rewards its last move gave
    (its result: a record starting there replays with it), whichever way the rules ended it:
    a line or a full board, a disc majority after two passes, a try or a captured lion."""
    env = jaxgames.make(name, **opts)
    rand = jaxgames.random_policy
    r = arena(rand, rand, env, 32, jax.random.PRNGKey(5), final_states=True)
    ends = set()
    for g in range(32):
        s = jax.tree_util.tree_map(lambda x: x[g], r.states)
        back = env.from_text(env.to_text(s))
        assert records.result_of(back) == records.result_of(s), env.to_text(s)
        np.testing.assert_array_equal(back.rewards, s.rewards)
        ends.add((records.result_of(s), env.to_text(s).endswith(" end")))
    assert len({result for result, _ in ends}) >= 2  # decisive games and others


@pytest.mark.parametrize("name,opts", CASES)
def test_one_game_functions_refuse_a_batch_and_equal_envs_are_equal(name, opts):
    """A batch of games (or of keys) given where one is taken is one clear ValueError, not a
    shape error from inside a game (or a silent answer for the first game); two envs made
    alike are equal and hash alike (jit caches and compiled matches serve both)."""
    env = jaxgames.make(name, **opts)
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    batch = jax.vmap(env.init)(keys)
    calls = {
        "env.step": lambda: env.step(batch, 0),
        "env.step_checked": lambda: env.step_checked(batch, 0),
        "env.to_text": lambda: env.to_text(batch),
        "env.action_to_text": lambda: env.action_to_text(batch, 0),
        "env.legal_actions": lambda: env.legal_actions(batch),
        "render.text": lambda: render.text(batch, env),
        "render.svg": lambda: render.svg(batch, env),
    }
    for what, call in calls.items():
        with pytest.raises(
            ValueError, match=rf"^{what} takes one game, got a batch of shape \(3,\)"
        ):
            call()
    with pytest.raises(ValueError, match=r"env.init takes one key, got keys of shape \(3, 2\)"):
        env.init(keys)
    with pytest.raises(ValueError, match="takes one game"):
        jax.jit(env.step)(batch, 0)  # refused while tracing too
    twin = jaxgames.make(name, **opts)
    assert twin == env and hash(twin) == hash(env) and twin is not env
    assert env != jaxgames.make("reversi", size=4) and env != "env"


@pytest.mark.parametrize("name,opts", CASES)
def test_observe_takes_a_batch_or_one_state(name, opts):
    """``env.observe(states[B], players[B])`` is each state's own view, with or without vmap;
    a player's view is the observation when that player is to move."""
    env = jaxgames.make(name, **opts)
    _, (states, _, _) = jax.jit(random_rollout, static_argnums=(0, 2, 3))(
        env, jax.random.PRNGKey(4), 3, 4
    )
    batch = jax.tree_util.tree_map(lambda x: x[3], states)  # 3 games after 3 random plies
    for players in (jnp.array([0, 1, 1]), jnp.array([1, 0, 0])):
        views = env.observe(batch, players)
        np.testing.assert_array_equal(views, jax.vmap(env.observe)(batch, players))
        mover = np.asarray(players == batch.current_player)
        np.testing.assert_array_equal(views[mover], batch.observation[mover])
        assert not np.array_equal(views[~mover], batch.observation[~mover])
    # one id for the whole batch: the same as one per state
    for p in (0, 1):
        np.testing.assert_array_equal(env.observe(batch, p), env.observe(batch, jnp.full(3, p)))
    one = jax.tree_util.tree_map(lambda x: x[0], batch)
    for bad in (2, -1, jnp.array([0, 2, 1]), 0.5):  # a player id known on the host
        with pytest.raises(ValueError, match="a player id is 0 or 1"):
            env.observe(batch if jnp.ndim(bad) else one, bad)
    for states, ids in ((one, jnp.array([0, 1])), (batch, jnp.array([0, 1]))):
        with pytest.raises(ValueError, match="give one id, or one per state"):
            env.observe(states, ids)


@pytest.mark.parametrize("name,opts", CASES)
def test_autoreset_keeps_final_rewards_and_restarts(name, opts):
    env = jaxgames.make(name, **opts)
    _, (states, _, outs) = jax.jit(random_rollout, static_argnums=(0, 2, 3))(
        env, jax.random.PRNGKey(3), 16, 60
    )
    done = np.asarray(outs.terminated | outs.truncated)
    if not done.any():
        pytest.skip("no game finished in 60 random plies")
    start = env.init(jax.random.PRNGKey(0))
    t, b = map(int, np.argwhere(done)[0])
    restarted = jax.tree_util.tree_map(lambda x: x[t, b], outs.state)
    assert env.to_text(restarted) == env.to_text(start)
    assert not bool(restarted.terminated)
    decisive = np.abs(np.asarray(outs.rewards)).sum(-1) > 0
    assert set(np.flatnonzero(decisive.ravel())) <= set(np.flatnonzero(done.ravel()))


def test_make_rejects_unknown_games_and_options():
    with pytest.raises(ValueError, match="unknown game 'chess'.*tic_tac_toe"):
        jaxgames.make("chess")
    with pytest.raises(ValueError, match="unknown option.*'colour'"):
        jaxgames.make("tic_tac_toe", colour=1)


def test_random_action_is_uniform_over_legal_actions():
    mask = jnp.array([[0, 1, 0, 1, 1], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0]], bool)
    keys = jax.random.split(jax.random.PRNGKey(0), 30_000)
    actions = np.asarray(jax.vmap(lambda k: jaxgames.random_action(k, mask))(keys))
    freq = np.bincount(actions[:, 0], minlength=5) / len(keys)
    np.testing.assert_allclose(freq, [0, 1 / 3, 0, 1 / 3, 1 / 3], atol=0.015)
    assert set(actions[:, 1]) == {0} and set(actions[:, 2]) == {0}


@pytest.mark.parametrize("name,opts", CASES)
def test_pure_functions_take_the_spec_first(name, opts):
    """The game contract: the module's pure functions, called with ``env.spec`` (static,
    hashable), are what the env runs; states extend GameStateBase; the game has a board view."""
    env = jaxgames.make(name, **opts)
    mod = game_module(name)
    spec = env.spec
    assert hash(spec) == hash(jaxgames.make(name, **opts).spec)
    assert spec == jaxgames.make(name, **opts).spec
    state = env.init(jax.random.PRNGKey(0))
    assert isinstance(state, GameStateBase)
    fields = [f.name for f in dataclasses.fields(state)]
    i = fields.index(COMMON_FIELDS[0])
    assert tuple(fields[i : i + len(COMMON_FIELDS)]) == COMMON_FIELDS
    same = lambda a, b: jax.tree_util.tree_all(  # noqa: E731
        jax.tree_util.tree_map(lambda x, y: bool(jnp.array_equal(x, y)), a, b)
    )
    assert same(jax.jit(mod.init, static_argnums=0)(spec), state)
    action = int(jnp.argmax(state.legal_action_mask))
    nxt = jax.jit(mod.step, static_argnums=0)(spec, state, action)
    assert same(nxt, env.step(state, action))
    assert float(jax.jit(mod.heuristic, static_argnums=0)(spec, nxt)) == float(env.heuristic(nxt))
    view = mod.board_view(spec, nxt)
    assert view == env.board_view(nxt) and view.to_move == int(nxt.current_player)
    assert len(env.side_names) == 2


def test_state_classes_must_declare_the_common_fields_in_order():
    with pytest.raises(TypeError, match="must declare the common state fields"):

        class Missing(GameStateBase):
            board: jax.Array
            current_player: jax.Array

    with pytest.raises(TypeError, match="contiguously in the order"):

        class Shuffled(GameStateBase):
            current_player: jax.Array
            legal_action_mask: jax.Array
            rewards: jax.Array
            board: jax.Array
            terminated: jax.Array
            truncated: jax.Array
            step_count: jax.Array

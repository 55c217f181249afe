"""Game symmetries (``env.symmetries``, for data augmentation): the tables form a group of
permutations, and each is a symmetry of the rules: the transformed position, built
independently through the text notation, has the transformed observation and legal mask, and
corresponding moves lead to corresponding positions for several plies."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.core import apply_symmetry

VARIANTS = [("tic_tac_toe", {}, 8), ("reversi", {"size": 6}, 8), ("reversi", {"size": 8}, 8)]
VARIANTS += [("animal_shogi", {}, 2)]


def ids(v):
    return f"{v[0]}{v[1].get('size', '')}"


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_tables_are_a_group_of_permutations(variant):
    name, options, count = variant
    env = jaxgames.make(name, **options)
    sym = env.symmetries
    size = int(np.prod(env.observation_shape))
    assert sym.count == count
    assert sym.obs.shape == (count, size) and sym.actions.shape == (count, env.num_actions)
    assert sym.obs.dtype == np.int32 and sym.actions.dtype == np.int32
    np.testing.assert_array_equal(sym.obs[0], np.arange(size))
    np.testing.assert_array_equal(sym.actions[0], np.arange(env.num_actions))
    pairs = {(o.tobytes(), a.tobytes()) for o, a in zip(sym.obs, sym.actions)}
    assert len(pairs) == count  # distinct
    for o, a in zip(sym.obs, sym.actions):
        np.testing.assert_array_equal(np.sort(o), np.arange(size))
        np.testing.assert_array_equal(np.sort(a), np.arange(env.num_actions))
        for o2, a2 in zip(sym.obs, sym.actions):  # closed under composition
            assert (o[o2].tobytes(), a[a2].tobytes()) in pairs


def grid_text(text: str, squares: np.ndarray) -> str:
    """Tic-tac-toe / reversi text with the board moved by a square gather table."""
    board, *rest = text.split(" ")
    return " ".join(["".join(board[i] for i in squares), *rest])


def mirror_sfen(text: str) -> str:
    """Animal shogi text mirrored left-right: each rank read backwards (digits are runs of
    empty squares, single characters on a 3-file board)."""
    board, *rest = text.split(" ")
    return " ".join(["/".join(rank[::-1] for rank in board.split("/")), *rest])


def random_positions(env, step, n_games: int, seed: int):
    """Live states at random plies of random games (at most ``n_games``)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_games):
        state = env.init(jax.random.PRNGKey(0))
        stop = rng.integers(0, min(24, env.max_game_length - 4))
        for _ in range(stop):
            legal = np.flatnonzero(np.asarray(state.legal_action_mask))
            nxt = step(state, jnp.int32(rng.choice(legal)))
            if bool(nxt.terminated | nxt.truncated):
                break
            state = nxt
        out.append(state)
    return out


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_symmetries_commute_with_the_rules(variant):
    name, options, count = variant
    env = jaxgames.make(name, **options)
    sym = env.symmetries
    step = jax.jit(env.step)
    n = env.num_actions - 1 if name == "reversi" else env.num_actions
    rng = np.random.default_rng(1)
    positions = random_positions(env, step, 6 if count == 8 else 12, seed=0)
    checked = 0
    for position in positions:
        text = env.to_text(position)
        for k in range(count):
            # the transformed position, built through the text: board moved, rest unchanged
            if name == "animal_shogi":
                moved = text if k == 0 else mirror_sfen(text)
            else:
                moved = grid_text(text, sym.actions[k, :n])
            a_state, b_state = env.from_text(text), env.from_text(moved)
            for _ply in range(4):
                obs, mask = apply_symmetry(
                    sym, jnp.int32(k), a_state.observation, a_state.legal_action_mask
                )
                np.testing.assert_array_equal(np.asarray(b_state.observation), np.asarray(obs))
                np.testing.assert_array_equal(np.asarray(b_state.legal_action_mask), mask)
                for f in ("terminated", "truncated", "current_player", "rewards"):
                    np.testing.assert_array_equal(getattr(a_state, f), getattr(b_state, f))
                checked += 1
                legal = np.flatnonzero(np.asarray(b_state.legal_action_mask))
                if legal.size == 0:
                    break
                b = int(rng.choice(legal))  # a move of the moved position ...
                a_state = step(a_state, jnp.int32(sym.actions[k, b]))  # ... and its preimage
                b_state = step(b_state, jnp.int32(b))
    assert checked >= 3 * len(positions) * count  # most lines went on for several plies


def test_apply_symmetry_batches_and_keeps_distributions():
    """A batch with one symmetry per element: policies stay distributions over the moved legal
    moves; the identity changes nothing."""
    env = jaxgames.make("reversi", size=6)
    sym = env.symmetries
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 8))
    obs, mask = state.observation, state.legal_action_mask
    policy = jnp.where(mask, 1.0, 0.0) / mask.sum(-1, keepdims=True)
    k = jnp.arange(8, dtype=jnp.int32)
    o2, m2, p2 = apply_symmetry(sym, k, obs, mask, policy)
    assert o2.shape == obs.shape and m2.shape == mask.shape and p2.shape == policy.shape
    np.testing.assert_allclose(np.asarray(p2.sum(-1)), 1.0, rtol=1e-6)
    assert not np.asarray(p2[~m2]).any()
    np.testing.assert_array_equal(np.asarray(o2[0]), np.asarray(obs[0]))
    # the start position is symmetric under the 180-degree turn, and not under 90 degrees
    # (colours swap)
    np.testing.assert_array_equal(np.asarray(o2[2]), np.asarray(obs[2]))
    assert not np.array_equal(np.asarray(o2[1]), np.asarray(obs[1]))


@pytest.mark.parametrize("variant", VARIANTS[1:2] + VARIANTS[3:], ids=ids)
def test_symmetry_averaged_network_is_equivariant(variant):
    """``Agent(symmetries=...)`` averages the network over the game's symmetries: a moved
    position gets the moved move logits and the same value (the bare network does not: the
    check can fail), one position or a batch; the identity alone changes nothing. Input
    features are computed after the move (reversi's mobility, animal shogi's attacks)."""
    from jaxgames.agents.common import Agent
    from jaxgames.agents.networks import make_network
    from jaxgames.core import feature_function, identity_symmetries

    name, options, count = variant
    env = jaxgames.make(name, **options)
    features = feature_function(env, next(iter(env.input_features)))  # mobility, attacks
    plain = Agent(
        make_network("mlp", env.num_actions, hidden=16, layers=2), env.observation_shape, features
    )
    params = plain.init_params(jax.random.PRNGKey(1))
    averaged = Agent(plain.network, plain.observation_shape, features, env.symmetries)
    positions = random_positions(env, jax.jit(env.step), 6, seed=2)
    obs = jnp.stack([state.observation for state in positions])
    average, bare = jax.jit(averaged.apply), jax.jit(plain.apply)  # called once per symmetry
    logits, value = average(params, obs)
    single = average(params, obs[3])
    np.testing.assert_allclose(np.asarray(single[0]), np.asarray(logits[3]), rtol=1e-5, atol=1e-5)
    bare_logits_here = bare(params, obs)[0]
    bare_moves = 0
    move = jax.jit(functools.partial(apply_symmetry, env.symmetries))
    for k in range(1, count):
        ks = jnp.full(obs.shape[0], k, jnp.int32)
        moved_obs, expected = move(ks, obs, logits)
        moved_logits, moved_value = average(params, moved_obs)
        np.testing.assert_allclose(np.asarray(moved_logits), np.asarray(expected), atol=1e-4)
        np.testing.assert_allclose(np.asarray(moved_value), np.asarray(value), atol=1e-5)
        bare_logits, _ = bare(params, moved_obs)
        bare_expected = move(ks, obs, bare_logits_here)[1]
        bare_moves += not np.allclose(np.asarray(bare_logits), np.asarray(bare_expected), atol=1e-4)
    assert bare_moves == count - 1
    alone = Agent(
        plain.network,
        plain.observation_shape,
        features,
        identity_symmetries(env.observation_shape, env.num_actions),
    )
    for a, b in zip(jax.jit(alone.apply)(params, obs), bare(params, obs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)

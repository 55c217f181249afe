"""Network input features (config field ``features``): reversi's mobility planes against the
bitboard rules and a direct numpy reading of the board, animal shogi's attack planes against
the pure-Python reference rules, their symmetry, and an agent that reads them end to end
(config check, training chunk, save and reload, ``init_from`` guard; a network reading the
observation alone given the features, the same function)."""

import dataclasses
import re

import jax
import numpy as np
import pytest
from tiny_configs import TINY_FIELDS

import jaxgames
from jaxgames.agents import alphazero
from jaxgames.core import PLAIN_FEATURES, feature_channels_within, feature_function
from jaxgames.games import animal_shogi, reversi
from jaxgames.games.bitboard import split_words, stack_words, unpack
from jaxgames.runs import load_agent
from jaxgames.training.driver import run_training


def random_states(env, games: int, plies: int, seed: int):
    """States [plies, games] of random play (finished games stay finished)."""
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(seed), games))
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), plies)

    def ply(state, key):
        a = jax.vmap(jaxgames.random_action)(jax.random.split(key, games), state.legal_action_mask)
        return jax.vmap(env.step)(state, a), state

    return jax.lax.scan(ply, state, keys)[1]


def frontier_numpy(own: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """Discs of ``own`` (bool[N, N]) with an empty square among their 8 neighbours."""
    n = own.shape[0]
    out = np.zeros_like(own)
    for r in range(n):
        for c in range(n):
            near = empty[max(r - 1, 0) : r + 2, max(c - 1, 0) : c + 2]
            out[r, c] = own[r, c] and near.any()
    return out


@pytest.mark.parametrize("size", [4, 6, 8, 10])
def test_mobility_planes_match_the_rules(size):
    env = jaxgames.make("reversi", size=size)
    states = random_states(env, games=24, plies=size * size - 2, seed=size)
    flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), states)
    obs = jax.vmap(lambda s: s.observation)(flat)
    feats = np.asarray(jax.jit(reversi.mobility_features)(obs))
    n2 = size * size
    assert feats.shape == (obs.shape[0], size, size, len(reversi.MOBILITY_PLANES))
    live = ~np.asarray(flat.terminated | flat.truncated)
    # the opponent's moves: the bitboard rules with the sides swapped
    theirs = jax.jit(
        jax.vmap(
            lambda m, o: unpack(
                stack_words(reversi.legal_moves(env.geo, split_words(o), split_words(m))), n2
            )
        )
    )(flat.mover, flat.opponent)
    o, legal, theirs = np.asarray(obs), np.asarray(flat.legal_action_mask), np.asarray(theirs)
    for i in np.flatnonzero(live):
        f = feats[i].reshape(n2, -1)
        np.testing.assert_array_equal(f[:, 0], o[i, ..., 0].reshape(-1))
        np.testing.assert_array_equal(f[:, 1], o[i, ..., 1].reshape(-1))
        empty = (o[i, ..., 0] + o[i, ..., 1]) == 0
        np.testing.assert_array_equal(f[:, 2], empty.reshape(-1))
        np.testing.assert_array_equal(f[:, 3] > 0, legal[i, :n2])
        np.testing.assert_array_equal(f[:, 4] > 0, theirs[i] > 0)
        for plane, own in ((5, o[i, ..., 0] > 0), (6, o[i, ..., 1] > 0)):
            np.testing.assert_array_equal(f[:, plane] > 0, frontier_numpy(own, empty).reshape(-1))
    assert live.sum() > 100


FEATURES = [("reversi", {"size": 8}, "mobility"), ("animal_shogi", {}, "attacks")]


@pytest.mark.parametrize("game, options, name", FEATURES, ids=[f[2] for f in FEATURES])
def test_features_commute_with_the_game_symmetries(game, options, name):
    """Moving a position by a symmetry moves its features the same way (so augmentation of
    the observations stays exact): the square permutation of ``env.symmetries`` applied to
    the feature planes."""
    env = jaxgames.make(game, **options)
    fn = env.input_features[name]
    states = random_states(env, games=16, plies=30, seed=3)
    obs = jax.vmap(jax.vmap(lambda s: s.observation))(states).reshape(-1, *env.observation_shape)
    feats = fn(obs)
    planes_in, planes_out = obs.shape[-1], feats.shape[-1]
    for k in range(env.symmetries.count):
        squares = env.symmetries.obs[k][::planes_in] // planes_in  # where each square comes from
        moved_obs = obs.reshape(obs.shape[0], -1, planes_in)[:, squares].reshape(obs.shape)
        moved_feats = feats.reshape(feats.shape[0], -1, planes_out)[:, squares]
        np.testing.assert_array_equal(fn(moved_obs).reshape(moved_feats.shape), moved_feats)
        if k:
            assert not np.array_equal(moved_obs, obs)


def test_attack_planes_match_the_reference_moves():
    """Each square's attackers of each side, counted with the independent pure-Python rules
    (tests/reference_animal_shogi.py) on the position's text, in the mover's frame."""
    from reference_animal_shogi import Game

    env = jaxgames.make("animal_shogi")
    states = random_states(env, games=12, plies=40, seed=5)
    flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), states)
    feats = np.asarray(animal_shogi.attack_features(jax.vmap(lambda s: s.observation)(flat)))
    checked = 0
    for i in range(feats.shape[0]):
        state = jax.tree_util.tree_map(lambda x: x[i], flat)
        if bool(state.terminated | state.truncated):
            continue
        game = Game(env.to_text(state))
        mover = game.turn
        counts = np.zeros((2, 4, 3), int)  # [mover / opponent, row, col] in the mover's frame
        for sq, (owner, kind) in game.board.items():
            for f, r in Game.targets(game.board, sq, owner, kind):
                row, col = (r, f) if mover == 0 else (3 - r, 2 - f)
                counts[int(owner != mover), row, col] += 1
        expect = np.stack([counts[0] >= 1, counts[0] >= 2, counts[1] >= 1, counts[1] >= 2], -1)
        np.testing.assert_array_equal(feats[i, ..., 24:] > 0, expect)
        checked += 1
    assert checked > 200


def test_feature_channels_within_finds_the_observation_in_the_features(monkeypatch):
    """Every game's features are its observation's planes and then more: the map puts each
    observation input at its place in the features' flattened input; a narrower or reordered
    input is no prefix."""
    for game, options, name in FEATURES:
        env = jaxgames.make(game, **options)
        rows = feature_channels_within(env, PLAIN_FEATURES, name)
        obs = random_states(env, games=8, plies=6, seed=1).observation.reshape(
            -1, *env.observation_shape
        )
        feats = np.asarray(jax.jit(feature_function(env, name))(obs)).reshape(obs.shape[0], -1)
        np.testing.assert_array_equal(feats[:, rows], np.asarray(obs).reshape(obs.shape[0], -1))
        assert len(set(rows.tolist())) == rows.size == np.prod(env.observation_shape)
        assert feature_channels_within(env, name, PLAIN_FEATURES) is None
        assert feature_channels_within(env, name, name).tolist() == list(range(feats.shape[1]))
    env = jaxgames.make("reversi", size=4)
    flipped = {**env.input_features, "flipped": lambda o: reversi.mobility_features(o)[..., ::-1]}
    monkeypatch.setattr(type(env), "input_features", flipped)
    assert feature_channels_within(env, PLAIN_FEATURES, "flipped") is None


def test_feature_names_are_checked():
    tic = jaxgames.make("tic_tac_toe")
    assert feature_function(tic, PLAIN_FEATURES) is None
    assert feature_function(jaxgames.make("reversi"), "mobility") is reversi.mobility_features
    with pytest.raises(ValueError, match=re.escape("invalid features='mobility': must be one of")):
        feature_function(tic, "mobility")
    with pytest.raises(ValueError, match="invalid features='nope'.*'observation', 'mobility'"):
        alphazero.default_config("reversi", {"size": 6}, features="nope")


# the tests' tiny AlphaZero fields on 4x4 reversi, reading the features
TINY = alphazero.AlphaZeroConfig(
    **{**TINY_FIELDS, "game": "reversi", "game_options": {"size": 4}, "update_epochs": 1},
    features="mobility",
    num_simulations=2,
    max_num_considered_actions=4,
    total_steps=64,
    eval_games=4,
)


def test_an_agent_reads_its_features_through_training_and_reload(tmp_path):
    run_dir = str(tmp_path / "mob")
    summary = run_training("alphazero", TINY, run_dir, progress=False)
    assert summary.completed
    loaded = load_agent(run_dir)
    assert loaded.config.features == "mobility"
    assert loaded.agent.features is reversi.mobility_features
    # the first layer reads the 7 feature planes of the 4x4 board
    kernel = loaded.params["params"]["Dense_0"]["kernel"]
    assert kernel.shape[0] == 4 * 4 * len(reversi.MOBILITY_PLANES)
    state = loaded.env.init(jax.random.PRNGKey(0))
    logits, value = loaded.agent.apply(loaded.params, state.observation)
    direct = loaded.agent.network.apply(
        loaded.params, reversi.mobility_features(state.observation[None])
    )
    np.testing.assert_array_equal(logits, direct[0][0])
    # a run reading the bare observation cannot start from it, and says why
    plain = dataclasses.replace(TINY, features=PLAIN_FEATURES, init_from=run_dir)
    with pytest.raises(ValueError, match="its network reads features 'mobility'"):
        run_training("alphazero", plain, str(tmp_path / "plain"), progress=False)


def test_a_run_gives_features_to_a_network_reading_the_observation(tmp_path):
    """``init_from`` an agent reading the bare observation into a run reading the features:
    the run starts from the same function (the new inputs' weights are zero) and trains."""
    plain_dir = str(tmp_path / "plain")
    plain = dataclasses.replace(TINY, features=PLAIN_FEATURES)
    run_training("alphazero", plain, plain_dir, progress=False, max_chunks=1)
    before = load_agent(plain_dir)
    msgs = []
    cfg = dataclasses.replace(TINY, init_from=plain_dir, seed=1)
    start = run_training(
        "alphazero", cfg, str(tmp_path / "mob"), progress=False, max_chunks=0, echo=msgs.append
    )
    assert msgs == [
        "adding the input features 'mobility' to its network (zero weights: it computes the "
        "same function)",
        f"starting from the parameters of {plain_dir}",
    ]
    params = start.state.params
    first = np.asarray(params["params"]["Dense_0"]["kernel"])
    channels = before.env.observation_shape[-1]
    added = np.arange(first.shape[0]).reshape(4, 4, -1)[..., channels:].reshape(-1)
    assert first.shape[0] == 4 * 4 * len(reversi.MOBILITY_PLANES) and not first[added].any()
    agent = alphazero.make_algorithm(cfg).agent
    obs = random_states(before.env, games=8, plies=10, seed=2).observation
    obs = obs.reshape(-1, *before.env.observation_shape)
    got_want = jax.jit(agent.apply)(params, obs), jax.jit(before.agent.apply)(before.params, obs)
    for got, want in zip(*got_want):
        np.testing.assert_allclose(got, want, atol=1e-6)
    trained = run_training("alphazero", cfg, str(tmp_path / "mob"), progress=False)
    assert trained.completed
    assert np.asarray(trained.state.params["params"]["Dense_0"]["kernel"])[added].any()

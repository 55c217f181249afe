"""Play-time search (jaxgames.agents.search): the mctx tree's sign conventions, legality,
that search finds what the network misses, and the ``mcts:N:<run>`` opponent spec."""

import dataclasses
import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.agents import dqn, ppo
from jaxgames.agents.common import MASK_MIN, Agent, NetworkPolicy
from jaxgames.agents.networks import make_network
from jaxgames.agents.search import (
    SearchConfig,
    SearchPolicy,
    guide_outputs,
    immediate_wins,
    make_recurrent_fn,
    noisy_prior,
    search_batch,
    with_win_check,
)
from jaxgames.core import random_action
from jaxgames.evaluation import arena
from jaxgames.specs import check_spec, make_opponent


def untrained_policy(env, key=jax.random.PRNGKey(0)) -> NetworkPolicy:
    agent = Agent(
        make_network("mlp", env.num_actions, hidden=16, layers=1), tuple(env.observation_shape)
    )
    return agent.policy(agent.init_params(key))


def batch(*states):
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


class FixedGuide:
    """A guide with the same prior logits everywhere (``favourite`` +3, the rest 0) and value
    0: what a network that has never seen a position's danger tells the search."""

    def __init__(self, num_actions: int, favourite: int):
        self.logits = jnp.zeros(num_actions).at[favourite].set(3.0)

    def search_outputs(self, state):
        return self.logits, jnp.zeros(())


# reversi 8x8, X to move (from a game the shipped reversi8 with 64 simulations lost to greedy):
# d6 lets O take every X disc at once, b2 does not
WIPE_OUT_TRAP = "----O------O-O--OOOOOOO---OOOOO---OOO-----O-OX----O------------- X"


def wiped_out_by_a_reply(env, state, action) -> bool:
    """Reference without the terminal flags or rewards: after ``action``, can the opponent
    leave the mover with no disc? (counts the discs of the text notation)"""
    after = env.step(state, action)
    mine = "X" if int(state.current_player) == 0 else "O"
    return any(
        mine not in env.to_text(env.step(after, int(b))).split()[0]
        for b in np.flatnonzero(np.asarray(after.legal_action_mask))
    )


def test_immediate_wins_are_the_moves_that_end_the_game_won(ttt):
    """Tic-tac-toe: the squares that complete the mover's line (not the opponent's); reversi:
    exactly the replies that wipe the other side out, against a disc-counting reference; a
    finished game has none."""
    x_wins = ttt.from_text("XX.OO.... X")  # X completes row 0 at 2; O's 5 is not X's win
    o_wins = ttt.from_text("XX.OO.X.. O")  # O completes row 1 at 5; X's 2 is not O's win
    over = ttt.step(x_wins, 2)
    got = np.asarray(immediate_wins(ttt, batch(x_wins, o_wins, over)))
    assert [list(np.flatnonzero(row)) for row in got] == [[2], [5], []]
    env = jaxgames.make("reversi", size=8)
    trap = env.from_text(WIPE_OUT_TRAP)
    legal = [int(a) for a in np.flatnonzero(np.asarray(trap.legal_action_mask))]
    afters = batch(*[env.step(trap, a) for a in legal])
    can_wipe = np.asarray(immediate_wins(env, afters)).any(-1)
    reference = [wiped_out_by_a_reply(env, trap, a) for a in legal]
    assert list(can_wipe) == reference and any(reference) and not all(reference)


@pytest.mark.parametrize("game", ["tic_tac_toe", "reversi", "animal_shogi"])
def test_immediate_wins_agree_with_env_step_on_random_positions(game):
    """immediate_wins steps with ``env.step_legal`` and masks out what it leaves unspecified
    (illegal moves, finished games): on random positions, some of them finished, it marks
    exactly the legal moves after which ``env.step`` reports a finished game won by the mover."""
    env = jaxgames.make(game, **({"size": 4} if game == "reversi" else {}))
    key = jax.random.PRNGKey(5)
    states = jax.vmap(env.init)(jax.random.split(key, 64))
    step = jax.jit(jax.vmap(env.step))
    every = jnp.arange(env.num_actions)

    def reference_wins(state):
        kids = jax.vmap(env.step, in_axes=(None, 0))(state, every)
        won = kids.rewards[:, state.current_player] > 0
        return kids.terminated & won & state.legal_action_mask

    reference = jax.jit(jax.vmap(reference_wins))
    wins = jax.jit(functools.partial(immediate_wins, env))
    wins_seen = finished_seen = 0
    for _ in range(20):  # long enough for games to end (reversi 4x4: at most 12 moves + passes)
        key, k = jax.random.split(key)
        got = np.asarray(wins(states))
        np.testing.assert_array_equal(got, np.asarray(reference(states)))
        wins_seen += int(got.any(-1).sum())
        finished_seen += int(np.asarray(states.terminated).sum())
        states = step(states, random_action(k, states.legal_action_mask))  # 0 where finished
    assert wins_seen > 0 and finished_seen > 0


def test_win_check_makes_a_won_position_worth_one_and_plays_the_win(ttt):
    """with_win_check: where the mover can win at once, value +1 and a prior on the winning
    moves only; elsewhere the guide's outputs unchanged. The search then takes the win even
    when the guide prefers another move."""
    win, quiet = ttt.from_text("XX.OO.... X"), ttt.from_text("X...O.... X")
    prior = jnp.full((2, 9), 0.5)
    value = jnp.array([-0.3, -0.3])
    states = batch(win, quiet)
    prior = jnp.where(states.legal_action_mask, prior, MASK_MIN)
    new_prior, new_value = with_win_check(ttt, states, prior, value)
    np.testing.assert_allclose(np.asarray(new_value), [1.0, -0.3])
    assert list(np.flatnonzero(np.asarray(new_prior[0]) > MASK_MIN)) == [2]
    np.testing.assert_array_equal(np.asarray(new_prior[1]), np.asarray(prior[1]))
    guide = FixedGuide(9, favourite=8)
    for w in (False, True):
        play = SearchPolicy(ttt, guide, num_simulations=1, win_check=w)
        assert int(play(jax.random.PRNGKey(0), win)) == (2 if w else 8)


def test_win_check_search_avoids_a_move_that_loses_at_once():
    """Reversi 8x8, the wipe-out trap: a guide that favours the losing move d6 and never
    rates danger leads plain search (one visit to each move) into it; with the win check the
    reply's wipe-out is seen on d6's first visit and the search plays the safe b2. Then, with
    O to move after d6, the win-check search takes the wipe-out the guide does not favour."""
    env = jaxgames.make("reversi", size=8)
    trap = env.from_text(WIPE_OUT_TRAP)
    d6, b2 = env.text_to_action(trap, "d6"), env.text_to_action(trap, "b2")
    guide = FixedGuide(env.num_actions, favourite=d6)
    for w, expected in ((False, d6), (True, b2)):
        play = jax.jit(SearchPolicy(env, guide, num_simulations=2, win_check=w))
        assert int(play(jax.random.PRNGKey(0), trap)) == expected
    after = env.step(trap, d6)
    wipe = np.flatnonzero(np.asarray(immediate_wins(env, batch(after))[0]))
    assert len(wipe) >= 1
    play = jax.jit(SearchPolicy(env, guide, num_simulations=8, win_check=True))
    assert int(play(jax.random.PRNGKey(0), after)) in set(wipe.tolist())


def test_recurrent_fn_rewards_and_discounts_are_from_the_movers_view(ttt):
    """A winning move pays +1 to the mover and ends the search path (discount 0); an ordinary
    move hands the turn over (discount -1); a finished game is absorbing."""
    fn = make_recurrent_fn(ttt, untrained_policy(ttt))
    win = ttt.from_text("XX.OO.... X")  # X to move; cell 2 wins
    out, children = fn((), None, jnp.array([2, 8], jnp.int32), batch(win, win))
    np.testing.assert_allclose(np.asarray(out.reward), [1.0, 0.0])
    np.testing.assert_allclose(np.asarray(out.discount), [0.0, -1.0])
    assert float(out.value[0]) == 0.0  # the finished child has no value to add
    assert bool(children.terminated[0]) and not bool(children.terminated[1])
    # illegal moves of the child carry the masked minimum, legal ones finite logits
    assert np.all(
        np.asarray(out.prior_logits[1])[~np.asarray(children.legal_action_mask[1])] == MASK_MIN
    )
    out2, _ = fn((), None, jnp.array([0, 0], jnp.int32), children)  # stepping past the end
    assert float(out2.reward[0]) == 0.0 and float(out2.discount[0]) == 0.0


def test_recurrent_fn_discounts_follow_the_turn_through_reversi_passes():
    """Reversi, random games: every transition's discount is 0 if the game ended, else -1: the
    turn always changes hands (checked). A reversi ``pass`` is a move that hands the turn over,
    so it is discounted by -1 like any other (checked to occur)."""
    env = jaxgames.make("reversi", size=4)
    fn = make_recurrent_fn(env, untrained_policy(env))
    step = jax.jit(jax.vmap(env.step))
    key = jax.random.PRNGKey(3)
    states = jax.vmap(env.init)(jax.random.split(key, 256))
    passes = 0
    for _ in range(16):
        key, k = jax.random.split(key)
        logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
        actions = jax.random.categorical(k, logits).astype(jnp.int32)
        actions = jnp.where(states.legal_action_mask.any(-1), actions, 0)
        out, children = fn((), None, actions, states)
        live = np.asarray(states.legal_action_mask.any(-1))
        done = np.asarray(children.terminated | children.truncated)
        same = np.asarray(children.current_player == states.current_player)
        disc = np.asarray(out.discount)
        np.testing.assert_array_equal(disc[live & done], 0.0)
        assert not same[live & ~done].any()
        np.testing.assert_array_equal(disc[live & ~done & ~same], -1.0)
        is_pass = live & ~done & (np.asarray(actions) == env.num_actions - 1)
        np.testing.assert_array_equal(disc[is_pass], -1.0)
        passes += int(is_pass.sum())
        states = step(states, actions)
    assert passes > 0, "no pass happened in the sampled games"


def test_recurrent_fn_discounts_a_move_again_by_plus_one(ttt):
    """A game where the same player moves again (tic-tac-toe whose centre move keeps the
    turn, a rule no shipped game has but the contract allows): that transition's discount is
    +1 (the child's value is the same player's), every other one -1."""

    class MovesAgainOnTheCentre(type(ttt)):
        def step(self, state, action):
            child = super().step(state, action)
            again = (action == 4) & ~child.terminated
            mover = jnp.where(again, state.current_player, child.current_player)
            return child.replace(current_player=mover)

    env = MovesAgainOnTheCentre()
    fn = make_recurrent_fn(env, untrained_policy(env))
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 9))
    out, _ = fn((), None, jnp.arange(9, dtype=jnp.int32), states)
    np.testing.assert_array_equal(np.asarray(out.discount), np.where(np.arange(9) == 4, 1.0, -1.0))


@pytest.mark.parametrize(
    "text, winning", [("XX.OO.... X", 2), ("X.O.XO... X", 8), ("OO.XX.X.. O", 2)]
)
def test_search_finds_the_immediate_win_an_untrained_network_misses(ttt, text, winning):
    state = ttt.from_text(text)
    guide = untrained_policy(ttt)
    policy = SearchPolicy(ttt, guide, num_simulations=16)
    assert int(policy(jax.random.PRNGKey(0), state)) == winning
    probs = np.asarray(policy.probs(state))
    assert probs.argmax() == winning and np.all(probs[~np.asarray(state.legal_action_mask)] == 0)
    assert float(policy.value(state)) > 0.5  # the root value sees the win


def test_search_blocks_the_opponents_threat(ttt):
    """Two plies deep: O threatens the top row; every move but the block loses."""
    state = ttt.from_text("OO.X....X X")
    policy = SearchPolicy(ttt, untrained_policy(ttt), num_simulations=64)
    assert int(policy(jax.random.PRNGKey(0), state)) == 2


def test_search_plays_only_legal_moves_and_is_deterministic(key):
    env = jaxgames.make("reversi", size=6)
    policy = SearchPolicy(env, untrained_policy(env), num_simulations=4)
    states = jax.vmap(env.init)(jax.random.split(key, 64))
    act = jax.jit(jax.vmap(policy))
    step = jax.jit(jax.vmap(env.step))
    for i in range(12):  # a dozen plies of 64 games
        k = jax.random.split(jax.random.fold_in(key, i), 64)
        a = act(k, states)
        np.testing.assert_array_equal(
            np.asarray(a), np.asarray(act(k, states))
        )  # same key, same move
        live = np.asarray(states.legal_action_mask.any(-1))
        legal = np.asarray(jnp.take_along_axis(states.legal_action_mask, a[:, None], 1)[:, 0])
        assert legal[live].all()
        states = step(states, a)


def test_search_beats_its_own_guide(ttt, key):
    """An untrained network plays about as well as random; the same network guiding 32
    simulations (which reach the end of most tic-tac-toe games) scores far higher and loses
    less than half as often."""
    guide = untrained_policy(ttt)
    rand = make_opponent("random", ttt)
    plain = arena(guide, rand, ttt, 400, key)
    searched = arena(SearchPolicy(ttt, guide, num_simulations=32), rand, ttt, 400, key)
    print(plain, searched, sep="\n")
    assert searched.score > plain.score + 0.15
    assert searched.overall.losses < plain.overall.losses / 2
    assert searched.score > plain.score + 0.15


def test_search_batch_matches_the_single_state_policy(key):
    env = jaxgames.make("reversi", size=6)
    guide = untrained_policy(env)
    states = jax.vmap(env.init)(jax.random.split(key, 3))
    search = jax.jit(lambda k, s: search_batch(env, guide, k, s, SearchConfig(num_simulations=8)))
    out = search(key, states)
    assert out.action.shape == (3,) and out.action.dtype == jnp.int32
    assert out.action_weights.shape == (3, env.num_actions)
    single = SearchPolicy(env, guide, num_simulations=8)
    first = jax.tree_util.tree_map(lambda x: x[0], states)
    assert int(single(key, first)) == int(out.action[0])
    # its improved policy is the batch's first row (no Gumbel noise at gumbel_scale 0)
    expected = np.where(np.asarray(first.legal_action_mask), out.action_weights[0], 0)
    np.testing.assert_allclose(np.asarray(single.probs(first)), expected, atol=1e-6)


def test_value_scale_sets_how_far_search_values_move_the_prior(key):
    """The improved policy is softmax(prior logits + sigma(completed Q)) with sigma scaled by
    value_scale: at 0 it is the guide's prior over the legal moves, and a larger scale moves
    it further from the prior."""
    env = jaxgames.make("reversi", size=6)
    guide = untrained_policy(env)
    states = jax.vmap(env.init)(jax.random.split(key, 3))
    prior = jax.nn.softmax(guide_outputs(guide, states)[0], axis=-1)

    def weights(scale):  # a SearchPolicy plays with its own value_scale (mcts:N: keeps 0.1)
        player = SearchPolicy(env, guide, num_simulations=8, value_scale=scale)
        config = SearchConfig(num_simulations=8, value_scale=scale)
        assert SearchPolicy(env, guide, config).config == player.config
        return np.asarray(jax.vmap(player.probs)(states))

    w = {scale: weights(scale) for scale in (0.0, 0.1, 1.0)}
    np.testing.assert_allclose(w[0.0], np.asarray(prior), atol=1e-6)
    gap = [float(np.abs(w[s] - prior).sum()) for s in (0.1, 1.0)]
    assert 0 < gap[0] < gap[1]


def test_root_noise_mixes_a_dirichlet_over_the_legal_moves(key):
    """noisy_prior: a distribution over the legal moves only, equal to the prior at fraction 0,
    and on average (1 - eps) p + eps / n (a symmetric Dirichlet's mean is uniform); a prior
    collapsed onto one move keeps every legal move above eps-sized noise."""
    mask = jnp.array([[True, True, False, True], [True, False, False, True]])
    logits = jnp.where(mask, jnp.array([[30.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 2.0]]), MASK_MIN)
    prior = jax.nn.softmax(logits, -1)
    same = jax.nn.softmax(noisy_prior(key, logits, mask, 0.0, 10.0), -1)
    np.testing.assert_allclose(np.asarray(same), np.asarray(prior), atol=1e-6)
    keys = jax.random.split(key, 4000)
    noisy = jax.vmap(lambda k: jax.nn.softmax(noisy_prior(k, logits, mask, 0.25, 10.0), -1))(keys)
    assert not np.asarray(noisy)[:, ~np.asarray(mask)].any()
    np.testing.assert_allclose(np.asarray(noisy.sum(-1)), 1.0, rtol=1e-5)
    legal = np.asarray(mask.sum(-1, keepdims=True))
    expected = 0.75 * np.asarray(prior) + 0.25 * np.asarray(mask) / legal
    np.testing.assert_allclose(np.asarray(noisy.mean(0)), expected, atol=0.01)
    assert np.asarray(noisy)[:, 0, 1].min() > 1e-4  # the collapsed row: moves within reach


def test_bad_search_settings_are_named(ttt):
    with pytest.raises(ValueError, match="root_noise_alpha"):
        SearchConfig(root_noise=0.25, root_noise_alpha=0.0)
    with pytest.raises(TypeError, match="not both"):
        SearchPolicy(ttt, untrained_policy(ttt), SearchConfig(), num_simulations=4)
    with pytest.raises(ValueError, match="num_simulations"):
        SearchPolicy(ttt, untrained_policy(ttt), num_simulations=0)
    with pytest.raises(ValueError, match="max_num_considered_actions"):
        SearchPolicy(ttt, untrained_policy(ttt), max_num_considered_actions=0)
    with pytest.raises(ValueError, match="value_scale"):
        SearchPolicy(ttt, untrained_policy(ttt), value_scale=-0.5)


def test_q_network_prior_is_sharpened(ttt, key):
    """A Q-network's prior is Q / Q_PRIOR_TEMPERATURE (its plain softmax would be near uniform),
    its value the largest legal Q, as policy.value gives it."""
    cfg = dqn.default_config("tic_tac_toe", quick=True)
    algo = dqn.make_algorithm(cfg)
    policy = algo.agent.policy(algo.params(jax.jit(algo.init)(key)))
    state = ttt.init(key)
    q, _ = algo.agent.apply(policy.params, state.observation)
    prior, value = policy.search_outputs(state)
    np.testing.assert_allclose(
        np.asarray(prior), np.asarray(q) / dqn.Q_PRIOR_TEMPERATURE, rtol=1e-6
    )
    np.testing.assert_allclose(float(value), float(policy.value(state)), rtol=1e-6)
    # averaged over the symmetries (spec sym:<run>) it stays a Q-network's policy: the prior
    # is the averaged Q / temperature (at the empty board: each move's orbit, the corners',
    # the edges', the centre's)
    # (parameters moved off their initial values, whose Q is the same for every move)
    leaves, tree = jax.tree.flatten(policy.params)
    keys = jax.random.split(key, len(leaves))
    params = jax.tree.unflatten(
        tree, [x + 0.1 * jax.random.normal(k, x.shape) for x, k in zip(leaves, keys)]
    )
    averaged = dataclasses.replace(algo.agent, symmetries=ttt.symmetries).policy(params)
    assert type(averaged) is type(policy)
    q, _ = algo.agent.apply(params, state.observation)
    q_avg, _ = averaged.agent.apply(params, state.observation)
    prior_avg, _ = averaged.search_outputs(state)
    np.testing.assert_allclose(
        np.asarray(prior_avg), np.asarray(q_avg) / dqn.Q_PRIOR_TEMPERATURE, rtol=1e-6
    )
    corners = np.asarray(q_avg)[[0, 2, 6, 8]]
    np.testing.assert_allclose(corners, corners[0], rtol=1e-5)
    assert not np.allclose(np.asarray(q)[[0, 2, 6, 8]], np.asarray(q)[0], rtol=1e-3)


def test_mcts_opponent_spec(tmp_path, ttt):
    """``mcts:N:<run>`` validates like a run directory (game checked, no checkpoint restored),
    names malformed specs, and builds a SearchPolicy around the run's agent."""
    run = tmp_path / "ttt_run"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps(
            {"algorithm": "ppo", "config": ppo.default_config("tic_tac_toe", quick=True).to_dict()}
        )
    )
    assert check_spec(f"mcts:08:{run}", ttt) == f"mcts:8:{run}"
    # mcts:N/K: K root moves considered; the default (16) is left out of the normal form
    assert check_spec(f"mcts:8/04:{run}", ttt) == f"mcts:8/4:{run}"
    assert check_spec(f"mcts:8/16:{run}", ttt) == f"mcts:8:{run}"
    assert check_spec(f"mcts:8/16/0.1:{run}", ttt) == f"mcts:8:{run}"
    assert check_spec(f"mcts:8/16/1:{run}", ttt) == f"mcts:8/16/1.0:{run}"
    # C's whole range [0, 100], both ends included
    assert check_spec(f"mcts:8/4/0:{run}", ttt) == f"mcts:8/4/0.0:{run}"
    assert check_spec(f"mcts:8/4/100:{run}", ttt) == f"mcts:8/4/100.0:{run}"
    # '/w' after the numbers: the one-ply win check, kept in the normal form
    assert check_spec(f"mcts:8/w:{run}", ttt) == f"mcts:8/w:{run}"
    assert check_spec(f"mcts:8/16/0.1/w:{run}", ttt) == f"mcts:8/w:{run}"
    assert check_spec(f"mcts:8/4/1/w:{run}", ttt) == f"mcts:8/4/1.0/w:{run}"
    checked = make_opponent("mcts:8/2/0.5/w:pretrained:tic_tac_toe", ttt)
    c = checked.config
    assert (c.max_num_considered_actions, c.value_scale, c.win_check) == (2, 0.5, True)
    c = make_opponent("mcts:8/2/0.5:pretrained:tic_tac_toe", ttt).config
    assert (c.num_simulations, c.max_num_considered_actions, c.value_scale) == (8, 2, 0.5)
    c = make_opponent("mcts:8:pretrained:tic_tac_toe", ttt).config
    assert (c.max_num_considered_actions, c.value_scale) == (16, 0.1)
    assert not c.win_check
    for bad, match in [
        ("mcts:0:" + str(run), "N >= 1"),
        ("mcts:x:" + str(run), "N >= 1"),
        ("mcts:8/0:" + str(run), "K >= 1 root moves"),
        ("mcts:8/:" + str(run), "K >= 1 root moves"),
        ("mcts:/4:" + str(run), "N >= 1"),
        ("mcts:8/4/-1:" + str(run), r"C must be in \[0, 100\]"),
        ("mcts:8/4/100.5:" + str(run), r"C must be in \[0, 100\]"),
        ("mcts:8/4/x:" + str(run), "C >= 0 the scale"),
        ("mcts:8/4/1/2:" + str(run), "C >= 0 the scale"),
        ("mcts:8/w/4:" + str(run), "'/w' after them"),
        ("mcts:w:" + str(run), "N >= 1"),
        ("mcts:8/4/1/w/w:" + str(run), "'/w' after them"),
        ("mcts:8", "N >= 1"),
        ("mcts:8:random", "run directory to guide"),
        ("mcts:8:alphabeta:2", "run directory to guide"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_spec(bad, ttt)
    with pytest.raises(ValueError, match="was trained on"):
        check_spec(f"mcts:8:{run}", jaxgames.make("reversi", size=6))
    from jaxgames.runs.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="no checkpoints"):
        make_opponent(f"mcts:8:{run}", ttt)

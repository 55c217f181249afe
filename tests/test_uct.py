"""UCT (pure MCTS with random rollouts): legal moves in every game, visit bookkeeping, tactics
in tic-tac-toe, and a clear win over the random player."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.evaluation.match import arena
from jaxgames.evaluation.uct import uct_policy, uct_search


def live_states(env, key, n, plies):
    """n states after up to ``plies`` random plies, each stopped before its game ends."""

    def one(k):
        def body(t, s):
            a = jaxgames.random_action(jax.random.fold_in(k, t), s.legal_action_mask)
            nxt = env.step(s, a)
            keep = (t < jax.random.randint(k, (), 0, plies + 1)) & ~(nxt.terminated | nxt.truncated)
            return jax.tree_util.tree_map(lambda x, y: jnp.where(keep, x, y), nxt, s)

        return jax.lax.fori_loop(0, plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(key, n))


@pytest.fixture(scope="module")
def ttt_search(ttt):
    """400 simulations, compiled once for batches of 5 tic-tac-toe states."""
    return jax.jit(jax.vmap(uct_search(ttt, 400)))


@pytest.mark.parametrize("game", jaxgames.registered_games())
def test_legal_moves_and_visit_counts_every_game(game, ttt_search):
    env, n = jaxgames.make(game), 5
    states = live_states(env, jax.random.PRNGKey(0), n, 12)
    if game == "tic_tac_toe":
        sims, search = 400, ttt_search
    else:
        sims, search = 12, jax.jit(jax.vmap(uct_search(env, 12)))
    out = search(jax.random.split(jax.random.PRNGKey(1), n), states)
    mask = np.asarray(states.legal_action_mask)
    acts, visits = np.asarray(out.action), np.asarray(out.visits)
    assert acts.dtype == np.int32 and mask[np.arange(n), acts].all()
    assert (visits.sum(1) == sims).all()  # every simulation passes through one root move
    assert (visits[~mask] == 0).all()
    assert (visits[np.arange(n), acts] == visits.max(1)).all()  # the most visited move
    values = np.asarray(out.values)
    assert ((values >= 0) & (values <= 1)).all()


#: (moves played, the one correct reply): X wins at once / O must block
TACTICS = [
    ([0, 3, 1, 4], 2),  # X: a1 b1 vs O: a2 b2 -> X completes the top row
    ([4, 0, 8, 2], 1),  # X: centre, corner; O: two corners -> X blocks the top row
    ([0, 4, 1], 2),  # O must block the top row
    ([4, 0, 5], 3),  # O must block the middle row
    ([0, 3, 1, 4, 8], 5),  # O completes the middle row rather than block the top row
]


def test_finds_immediate_win_and_blocks_immediate_loss(ttt, ttt_search):
    step = jax.jit(ttt.step)
    states = []
    for moves, _ in TACTICS:
        s = ttt.init(jax.random.PRNGKey(0))
        for a in moves:
            s = step(s, a)
        states.append(s)
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    want = np.array([best for _, best in TACTICS])
    for seed in range(3):
        keys = jax.random.split(jax.random.PRNGKey(seed), len(TACTICS))
        out = ttt_search(keys, batch)
        np.testing.assert_array_equal(np.asarray(out.action), want)
        np.testing.assert_array_equal(np.asarray(out.visits).sum(1), 400)


def test_deterministic_per_key_and_key_dependent(ttt, ttt_search):
    s = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 5), ttt.init(jax.random.PRNGKey(0)))
    keys = jax.random.split(jax.random.PRNGKey(5), 5)
    a, b = ttt_search(keys, s), ttt_search(keys, s)
    np.testing.assert_array_equal(np.asarray(a.visits), np.asarray(b.visits))
    assert len({tuple(v) for v in np.asarray(a.visits)}) > 1  # different keys, different trees


def test_beats_random_at_tic_tac_toe(ttt):
    result = arena(uct_policy(ttt, 100), jaxgames.random_policy, ttt, 48, jax.random.PRNGKey(0))
    assert result.overall.win_rate > 0.8 and result.overall.ci("score")[0] > 0.75, str(result)


def test_bad_arguments(ttt):
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="num_simulations"):
            uct_policy(ttt, bad)
    with pytest.raises(ValueError, match="exploration"):
        uct_policy(ttt, 10, exploration=-1.0)

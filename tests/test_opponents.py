"""Opponents: legality, alpha-beta == greedy / full-width minimax, perfect play."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.baselines.value_iteration import board_code, value_iteration
from jaxgames.evaluation.match import arena
from jaxgames.evaluation.opponents import greedy_policy
from jaxgames.specs import MAX_SIMULATIONS, MAX_SOLVE_EMPTIES, make_opponent, parse_spec


def random_states(env, key, n, max_plies):
    """n states after a uniformly random number (0..max_plies) of random plies; finished games
    are kept where they ended (callers filter on ``terminated``)."""
    k_len, k_play = jax.random.split(key)
    lengths = jax.random.randint(k_len, (n,), 0, max_plies + 1)

    def one(k, length):
        def body(t, s):
            a = jaxgames.random_action(jax.random.fold_in(k, t), s.legal_action_mask)
            return jax.tree_util.tree_map(
                lambda x, y: jnp.where(t < length, x, y), env.step(s, a), s
            )

        return jax.lax.fori_loop(0, max_plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(k_play, n), lengths)


def batch_act(policy, key, states):
    n = states.current_player.shape[0]
    return np.asarray(jax.jit(jax.vmap(policy))(jax.random.split(key, n), states))


@pytest.fixture(scope="module")
def ttt_states(ttt):
    s = random_states(ttt, jax.random.PRNGKey(1), 96, 7)
    live = ~np.asarray(s.terminated)
    return jax.tree_util.tree_map(lambda x: x[live], s)


@pytest.mark.parametrize(
    "spec", ["random", "greedy", "minimax:2", "alphabeta:1", "alphabeta:3", "perfect"]
)
def test_opponents_play_legal_moves(ttt, ttt_states, spec):
    acts = batch_act(make_opponent(spec, ttt), jax.random.PRNGKey(2), ttt_states)
    mask = np.asarray(ttt_states.legal_action_mask)
    assert acts.dtype == np.int32
    assert mask[np.arange(len(acts)), acts].all(), spec


def test_alphabeta_depth1_equals_greedy(ttt, ttt_states):
    key = jax.random.PRNGKey(3)
    greedy = batch_act(make_opponent("greedy", ttt), key, ttt_states)
    ab1 = batch_act(make_opponent("alphabeta:1", ttt), key, ttt_states)
    np.testing.assert_array_equal(greedy, ab1)
    # and the choice really depends on the key (random tie-breaking)
    other = batch_act(make_opponent("greedy", ttt), jax.random.PRNGKey(4), ttt_states)
    assert (other != greedy).any()


@pytest.mark.parametrize("chunk", [2, 3, 4])
def test_greedy_in_chunks_equals_full_width(ttt, ttt_states, chunk):
    """Greedy stepping only the legal children ``chunk`` at a time plays the move (same key)
    that stepping every action at once plays, on positions with 2 to 9 legal moves: more than
    two chunks, the last one partly filled."""
    key = jax.random.PRNGKey(14)
    full = batch_act(greedy_policy(ttt, full_width=True), key, ttt_states)
    part = batch_act(greedy_policy(ttt, chunk=chunk, full_width=False), key, ttt_states)
    np.testing.assert_array_equal(part, full)


@pytest.mark.parametrize("depth", [2, 3])
def test_alphabeta_equals_full_width_minimax(ttt, ttt_states, depth):
    key = jax.random.PRNGKey(5)
    a = batch_act(make_opponent(f"alphabeta:{depth}", ttt), key, ttt_states)
    b = batch_act(make_opponent(f"minimax:{depth}", ttt), key, ttt_states)
    np.testing.assert_array_equal(a, b)


def test_deep_alphabeta_plays_optimally(ttt, ttt_states, run_bound):
    """Full-depth alpha-beta only picks moves that value iteration says are optimal."""
    acts = batch_act(make_opponent("alphabeta:9", ttt), jax.random.PRNGKey(6), ttt_states)
    table = np.asarray(value_iteration().mover_q_table())
    q = table[np.asarray(board_code(ttt_states.board))]
    chosen = q[np.arange(len(acts)), acts]
    assert np.allclose(chosen, q.max(-1)), (chosen, q.max(-1))


def test_greedy_wins_then_blocks(ttt):
    pol = jax.jit(jax.vmap(make_opponent("greedy", ttt), in_axes=(0, None)))
    keys = jax.random.split(jax.random.PRNGKey(7), 900)
    # X can win at c1 (2); O threatens c2 (5) too: winning comes first
    win = ttt.from_text("XX.OO.... X")
    assert (np.asarray(pol(keys, win)) == 2).all()
    # O cannot win; it must block X at c1 (2)
    block = ttt.from_text("XX.O..... O")
    assert (np.asarray(pol(keys, block)) == 2).all()
    # nothing to win or block: uniformly random over the 9 squares
    counts = np.bincount(np.asarray(pol(keys, ttt.init(None))), minlength=9)
    assert counts.min() > 60, counts


@pytest.mark.parametrize("spec", ["alphabeta:3", "minimax:3"])
def test_searchers_take_the_quickest_win(ttt, spec):
    """A win scores more the sooner it comes: where X can win at once or force a win two plies
    later (a double threat), a depth-3 search wins at once whatever the key. In ``XX..O..O.``
    only c1 (2) wins now and a2 (3) would threaten c1 and a3; in ``X..XO...O`` only a3 (6) wins
    now and b1 (1) would threaten a3 and c1."""
    pol = jax.jit(jax.vmap(make_opponent(spec, ttt), in_axes=(0, None)))
    keys = jax.random.split(jax.random.PRNGKey(8), 32)
    for text, win in [("XX..O..O. X", 2), ("X..XO...O X", 6)]:
        assert (np.asarray(pol(keys, ttt.from_text(text))) == win).all(), text


def test_perfect_never_loses(ttt):
    perfect = make_opponent("perfect", ttt)
    for spec in ["random", "greedy"]:  # (same pairings and sizes as the Elo test: compiled once)
        r = arena(make_opponent(spec, ttt), perfect, ttt, 600, jax.random.PRNGKey(9)).swapped()
        assert r.overall.losses == 0, (spec, str(r))
        assert r.overall.wins > 0, spec
    self_play = arena(perfect, perfect, ttt, 600, jax.random.PRNGKey(10))
    assert self_play.overall.draws == 600


def test_make_opponent_errors(ttt, tmp_path):
    with pytest.raises(ValueError, match="valid: random, greedy"):
        make_opponent("grandmaster", ttt)
    with pytest.raises(ValueError, match="integer depth"):
        make_opponent("alphabeta:two", ttt)
    with pytest.raises(ValueError, match="takes no argument"):
        make_opponent("random:3", ttt)
    assert make_opponent("alphabeta:02", ttt) is make_opponent("alphabeta:2", ttt)
    for typo in ("alphabeta:1_2", "alphabeta:+2", "uct: 5", "alphabeta:²"):  # int() takes these
        with pytest.raises(ValueError, match="integer"):
            make_opponent(typo, ttt)
    with pytest.raises(ValueError, match=">= 1"):
        make_opponent("minimax:0", ttt)
    with pytest.raises(ValueError, match="unknown opponent"):
        make_opponent(str(tmp_path / "no_such_run"), ttt)
    with pytest.raises(ValueError, match="at most"):  # bounded by what the machine can search
        make_opponent("alphabeta:99999999999", ttt)
    with pytest.raises(ValueError, match="leaves"):
        make_opponent("minimax:8", jaxgames.make("reversi"))


@pytest.mark.parametrize(
    "at_max, past",
    [
        ("minimax:8", "minimax:9"),
        ("alphabeta:12", "alphabeta:13"),
        ("engine:8:20", "engine:8:21"),
        ("uct:100000", "uct:100001"),
        (f"mcts:{MAX_SIMULATIONS}/{MAX_SIMULATIONS}:runs/x", f"mcts:{MAX_SIMULATIONS + 1}:runs/x"),
        (f"solve:{MAX_SOLVE_EMPTIES}:random", f"solve:{MAX_SOLVE_EMPTIES + 1}:random"),
    ],
)
def test_every_integer_argument_takes_its_maximum(at_max, past):
    """Each integer argument's stated maximum parses (and is its own normal form); the next
    integer is refused as more than the machine can search."""
    assert str(parse_spec(at_max)) == at_max
    with pytest.raises(ValueError, match="at most"):
        parse_spec(past)


# ---------------------------------------------------------------- other games (once merged)
def _other_game_states(name, n):
    if name not in jaxgames.registered_games():
        pytest.skip(f"{name} is not registered yet")
    env = jaxgames.make(name)
    states = random_states(env, jax.random.PRNGKey(11), n, 12)
    live = ~np.asarray(states.terminated | states.truncated)
    return env, jax.tree_util.tree_map(lambda x: x[live], states)


@pytest.mark.parametrize("name", ["reversi", "animal_shogi"])
def test_greedy_equals_alphabeta1_on_other_games(name):
    env, states = _other_game_states(name, 6)
    mask = np.asarray(states.legal_action_mask)
    key = jax.random.PRNGKey(12)
    greedy = batch_act(make_opponent("greedy", env), key, states)
    ab1 = batch_act(make_opponent("alphabeta:1", env), key, states)
    np.testing.assert_array_equal(greedy, ab1)
    assert mask[np.arange(len(greedy)), greedy].all()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reversi", "animal_shogi"])
def test_alphabeta2_equals_minimax2_on_other_games(name):
    env, states = _other_game_states(name, 6)
    mask = np.asarray(states.legal_action_mask)
    key = jax.random.PRNGKey(12)
    ab2 = batch_act(make_opponent("alphabeta:2", env), key, states)
    mm2 = batch_act(make_opponent("minimax:2", env), key, states)
    np.testing.assert_array_equal(ab2, mm2)
    assert mask[np.arange(len(ab2)), ab2].all()


@pytest.mark.parametrize("name", ["reversi", "animal_shogi"])
def test_greedy_beats_random_on_other_games(name):
    if name not in jaxgames.registered_games():
        pytest.skip(f"{name} is not registered yet")
    env = jaxgames.make(name)
    r = arena(
        make_opponent("greedy", env), make_opponent("random", env), env, 64, jax.random.PRNGKey(13)
    )
    assert r.overall.score > 0.6, str(r)


def test_tic_tac_toe_heuristic(ttt):
    h = lambda text: float(ttt.heuristic(ttt.from_text(text)))  # noqa: E731
    assert h("XX.OO.... X") == 1.0  # X can complete the top row
    assert h("XX.O..... O") == 0.0  # O has no two-in-a-row (X's threat is not O's)
    assert h("X.X.O.... O") == 0.0
    assert h("XX.OO.X.. O") == 1.0  # O can complete the middle row
    assert h("XOX.O.X.. O") == 1.0  # b3 completes O's middle column
    assert h("XOXXOO.X. O") == 0.0  # every O line is blocked
    assert h("......... X") == 0.0

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.analysis import perft
from jaxgames.games import tic_tac_toe as T
from jaxgames.games.tic_tac_toe import LINES


def play(env, moves, state=None):
    state = env.init(jax.random.PRNGKey(0)) if state is None else state
    for m in moves:
        state = env.step_checked(state, env.text_to_action(state, m) if isinstance(m, str) else m)
    return state


def filler_moves(line, other):
    """A legal move order where the first mover completes ``line`` on its 3rd mark."""
    seq = []
    for a, b in zip(line, other):
        seq += [int(a), int(b)]
    return seq[:5]


@pytest.mark.parametrize("line", range(8))
@pytest.mark.parametrize("winner", [0, 1])
def test_every_line_wins_for_either_player(ttt, line, winner):
    squares = [int(s) for s in LINES[line]]
    rest = [s for s in range(9) if s not in squares]
    # pick opponent squares that never complete a line of their own before the winner does
    other = next(
        (
            list(c)
            for c in itertools.combinations(rest, 3)
            if not any(set(map(int, line)) <= set(c) for line in LINES)
        ),
    )
    if winner == 0:
        moves = filler_moves(squares, other)
    else:  # X plays a harmless first move, then O completes the line
        first = other[0]
        moves = [first] + filler_moves(squares, other[1:] + [s for s in rest if s not in other][:1])
    state = play(ttt, moves)
    assert bool(state.terminated)
    expected = [1.0, -1.0] if winner == 0 else [-1.0, 1.0]
    np.testing.assert_array_equal(state.rewards, expected)
    assert not bool(jnp.any(state.legal_action_mask))


def test_full_board_draw(ttt):
    # X O X / X O O / O X X
    state = play(ttt, ["a1", "b1", "c1", "b2", "a2", "c2", "b3", "a3", "c3"])
    assert ttt.to_text(state).split()[0] == "XOXXOOOXX"
    assert bool(state.terminated) and int(state.step_count) == 9
    np.testing.assert_array_equal(state.rewards, [0.0, 0.0])


def test_win_on_the_last_square_is_a_win_not_a_draw(ttt):
    # X O X / X O O / . X O : X completes file a with the ninth mark
    state = ttt.from_text("XOXXOO.XO X")
    state = ttt.step_checked(state, ttt.text_to_action(state, "a3"))
    assert bool(state.terminated)
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])


def test_game_tree_facts(ttt):
    """255,168 games (X 131,184 / O 77,904 / draws 46,080) and 5,478 reachable positions."""
    res = perft(ttt, 9)
    assert sum(res.finished) == 255_168
    np.testing.assert_array_equal(res.by_winner.sum(0), [131_184, 77_904, 46_080])
    assert res.nodes[:4] == [9, 72, 504, 3024]
    assert res.finished[:5] == [0, 0, 0, 0, 1440]  # earliest wins come on ply 5


def test_reachable_positions(ttt):
    """BFS over distinct positions with the batched env: 5,478 including the empty board."""
    expand = jax.jit(jax.vmap(jax.vmap(ttt.step, in_axes=(None, 0)), in_axes=(0, None)))
    states_of = jax.jit(
        jax.vmap(lambda b: T.make_state(T.TicTacToeSpec(), b, (b >= 0).sum() % 2, (b >= 0).sum()))
    )
    width = 2048  # more than any ply's live positions: every ply in one shape, one compile
    fresh = np.asarray(ttt.init(jax.random.PRNGKey(0)).board)[None]
    seen = {tuple(fresh[0])}
    while len(fresh):
        assert len(fresh) <= width
        padded = np.concatenate([fresh, np.repeat(fresh[:1], width - len(fresh), 0)])
        frontier = states_of(jnp.asarray(padded, jnp.int32))
        kids = expand(frontier, jnp.arange(9))
        legal = np.asarray(frontier.legal_action_mask).reshape(-1)
        boards = np.asarray(kids.board).reshape(-1, 9)[legal]
        live = ~np.asarray(kids.terminated).reshape(-1)[legal]
        new = {tuple(b) for b in boards} - seen
        seen |= new
        fresh = np.unique(boards[live], axis=0)
        fresh = np.array([b for b in fresh if tuple(b) in new]).reshape(-1, 9)
    assert len(seen) == 5_478


def test_uniform_random_play_outcome_split(ttt):
    """Random vs random: X wins ~58.5%, O ~28.8%, draw ~12.7% (exact: 0.5849 / 0.2881 / 0.1270)."""
    n = 40_000

    def game(key):
        def body(state, k):
            return ttt.step(
                state, jaxgames.random_action(k, state.legal_action_mask)
            ), state.rewards

        final, _ = jax.lax.scan(body, ttt.init(key), jax.random.split(key, 9))
        # the last reward sits on the step that ended the game; recompute from the final board
        from jaxgames.games.tic_tac_toe import winner_of

        return winner_of(final.board)

    winners = np.asarray(jax.jit(jax.vmap(game))(jax.random.split(jax.random.PRNGKey(7), n)))
    freq = np.array([(winners == 0).mean(), (winners == 1).mean(), (winners == -1).mean()])
    np.testing.assert_allclose(freq, [0.5849, 0.2881, 0.1270], atol=0.012)


def test_text_notation(ttt):
    start = ttt.init(jax.random.PRNGKey(0))
    assert ttt.to_text(start) == "......... X"
    state = play(ttt, ["b2", "a1"])
    assert ttt.to_text(state) == "O...X.... X"
    assert ttt.action_to_text(state, 8) == "c3" and ttt.text_to_action(state, " C3 ") == 8
    parsed = ttt.from_text("XXX.OO... O")
    assert bool(parsed.terminated) and int(parsed.current_player) == 1


@pytest.mark.parametrize(
    "text,match",
    [
        ("XXX", "expected 9 board characters"),
        ("XX.O..... O X", "expected 9 board characters"),
        ("XX.O.... O", "has 8 characters"),
        ("XX.Q..... O", r"unknown board character\(s\) \['Q'\]"),
        ("XX.O..... Z", "side to move 'Z'"),
        ("XXX...... O", "3 X and 0 O"),
        # the count check's two boundaries: one X more than X-first play allows, one O too many
        ("XX....... O", "2 X and 0 O"),
        ("O........ X", "0 X and 1 O"),
        ("XX.O..... X", "it is O to move"),
        ("XXXOOO... X", "stopped at the first line"),
        ("XXXOO.... O end extra", "malformed position"),  # nothing may follow 'end'
    ],
)
def test_bad_position_text(ttt, text, match):
    with pytest.raises(ValueError, match=match):
        ttt.from_text(text)


@pytest.mark.parametrize(
    "move,match",
    [
        ("d1", "off the 3x3 board"),
        ("a4", "off the 3x3 board"),  # the rank just past the last
        ("c4", "off the 3x3 board"),
        ("b", "malformed square"),
        ("22", "malformed square"),
        ("a1", "taken"),
    ],
)
def test_bad_move_text(ttt, move, match):
    state = play(ttt, ["a1"])
    with pytest.raises(ValueError, match=match):
        ttt.text_to_action(state, move)


def test_move_text_after_the_game_is_over(ttt):
    state = ttt.from_text("XXX.OO... O")
    with pytest.raises(ValueError, match="game is over"):
        ttt.text_to_action(state, "a3")
    with pytest.raises(jaxgames.IllegalActionError, match="game is over"):
        ttt.step_checked(state, 6)

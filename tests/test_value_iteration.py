"""Value iteration for tic-tac-toe: reachable positions, game value, known positions."""

import itertools

import numpy as np
import pytest

import jaxgames
from jaxgames.baselines.value_iteration import (
    ARTICLE_CPP,
    enumerate_positions,
    perfect_policy,
    tic_tac_toe_oracle,
    value_iteration,
)
from jaxgames.evaluation.accuracy import move_accuracy

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def independent_legal_positions():
    """All boards that can occur in a game, by counting rules only (no env.step)."""
    out = set()
    for cells in itertools.product((-1, 0, 1), repeat=9):
        nx, no = cells.count(0), cells.count(1)
        xw = any(all(cells[i] == 0 for i in line) for line in LINES)
        ow = any(all(cells[i] == 1 for i in line) for line in LINES)
        if nx not in (no, no + 1) or (xw and ow) or (xw and nx != no + 1) or (ow and nx != no):
            continue
        out.add(sum((c + 1) * 3**i for i, c in enumerate(cells)))
    return out


def test_reachable_positions():
    pos = enumerate_positions()
    assert len(pos.codes) == 5478
    assert set(pos.codes.tolist()) == independent_legal_positions()
    # 958 terminal positions: X wins 626, O wins 316, draws 16 (the UCI tic-tac-toe endgame set)
    term = pos.terminal
    assert term.sum() == 958
    b = pos.boards[term]
    xw = np.array([any((row[list(line)] == 0).all() for line in LINES) for row in b])
    ow = np.array([any((row[list(line)] == 1).all() for line in LINES) for row in b])
    assert (xw.sum(), ow.sum(), (~xw & ~ow).sum()) == (626, 316, 16)
    assert (pos.child[pos.legal] >= 0).all() and (pos.child[~pos.legal] == -1).all()


def test_game_value_is_a_draw_and_known_positions():
    vt = value_iteration()
    assert vt.iterations <= 10
    assert vt.value("......... X") == 0.0
    assert vt.value("XX.OO.... X") == 1.0  # X completes the top row
    assert vt.value("....XO... X") == 1.0  # O's edge reply to the centre loses
    assert vt.value("X.......O X") == 1.0  # O's opposite-corner reply to a corner loses
    assert vt.value("X...O.... X") == 0.0  # centre reply to a corner holds the draw
    assert vt.value("XO..X.... O") == -1.0  # X will fork after O blocks
    assert vt.value("XO..X.... O", player=0) == 1.0
    # every decided terminal position is worth -1 to the player to move (who just lost)
    q = vt.q
    assert np.isneginf(q[:, vt.positions.terminal]).all()


def test_cpp_article_variant():
    vt = value_iteration(**ARTICLE_CPP)
    # perfect play ends in a draw on X's 5th mark: 9 transitions, discount 0.8 per ply
    assert vt.value("......... X", player=0) == pytest.approx(0.3 * 0.8**8, rel=1e-5)
    assert vt.value("XX.OO.... X") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="gamma"):
        value_iteration(gamma=1.5)


def test_tic_tac_toe_oracle_judges_moves(capsys):
    """Value iteration as the move-accuracy oracle: the perfect player keeps the value with
    every move; random play blunders, each blunder a move whose brute-force minimax value for
    the mover is below the position's; the report counts its distinct games."""
    import jax

    from jaxgames import cli
    from jaxgames.baselines.value_iteration import perfect_policy, tic_tac_toe_oracle
    from jaxgames.core import random_action
    from jaxgames.evaluation.accuracy import move_accuracy, play_recorded
    from jaxgames.games import make

    env, oracle = make("tic_tac_toe"), tic_tac_toe_oracle()
    rand = lambda key, state: random_action(key, state.legal_action_mask)  # noqa: E731
    good = move_accuracy(perfect_policy(), rand, env, games=8, opening_plies=2, oracle=oracle)
    assert good["overall"]["share"] == 1.0 and good["overall"]["blunders"] == 0
    assert 1 <= good["distinct_games"] <= good["games"] == 16
    starts = jax.tree.map(lambda x: x[None], env.init(jax.random.PRNGKey(0)))
    rec = play_recorded(rand, perfect_policy(), env, starts, jax.random.PRNGKey(3), 9,
                        oracle.positions_of)  # fmt: skip
    v = oracle.judge(rec["positions"], rec["actions"].astype(np.int64), rec["ply"])

    def negamax(board, mover):  # the mover's value by brute force: 1 win, 0 draw, -1 loss
        if _winner(board) is not None:
            return -1
        moves = [i for i in range(9) if board[i] == -1]
        return max((-negamax(board[:i] + (mover,) + board[i + 1 :], 1 - mover) for i in moves),
                   default=0)  # fmt: skip

    from jaxgames.baselines.value_iteration import decode

    for code, a, before, after in zip(rec["positions"][:, 0], rec["actions"], v["before"],
                                      v["after"]):  # fmt: skip
        board = tuple(int(x) for x in np.asarray(decode(np.int32(code))))
        mover = sum(x != -1 for x in board) % 2
        assert before == negamax(board, mover)
        child = board[:a] + (mover,) + board[a + 1 :]
        assert after == (1 if _winner(child) is not None else -negamax(child, 1 - mover))
    assert cli.main(["accuracy", "random", "--game", "tic_tac_toe", "--games", "4"]) == 0
    assert "8 games (4 openings x 2 colours, " in capsys.readouterr().out


def test_perfect_self_play_moves_are_all_judged_from_drawn_positions():
    """Perfect against perfect from the start: both games (A as X, then as O) are draws, so A
    neither won nor lost one, and all of A's 9 moves (5 as X, 4 as O) start from a drawn
    position: judged (not left out as from a lost one), every one keeping the draw."""
    env = jaxgames.make("tic_tac_toe")
    out = move_accuracy(
        perfect_policy(), perfect_policy(), env, games=1, opening_plies=0,
        oracle=tic_tac_toe_oracle(),
    )  # fmt: skip
    assert (out["games"], out["a_won"], out["a_lost"]) == (2, 0, 0)
    o = out["overall"]
    assert (o["moves"], o["from_lost"], o["share"], o["blunders"]) == (9, 0, 1.0, 0)
    assert o["by_value"]["draw"]["moves"] == 9 and o["by_value"]["win"]["moves"] == 0
    assert out["as_first"]["moves"] == 5 and out["as_second"]["moves"] == 4


def _winner(board):
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    for a, b, c in lines:
        if board[a] != -1 and board[a] == board[b] == board[c]:
            return board[a]
    return None

"""Game records: text round trip, replay validation, and errors that name the line."""

import jax
import pytest

import jaxgames
from jaxgames import records


def play(env, moves):
    state = env.init(jax.random.PRNGKey(0))
    for mv in moves:
        state = env.step_checked(state, env.text_to_action(state, mv))
    return state


X_WINS = ["a1", "b1", "a2", "b2", "a3"]  # X completes the a-file


def test_round_trip_text_and_file(ttt, tmp_path):
    final = play(ttt, X_WINS)
    rec = records.new_record(ttt, X_WINS, ("human", "random"), final_state=final, seed="7")
    assert rec.result == "1-0" and rec.game == "tic_tac_toe" and rec.date.endswith("Z")
    text = records.to_text(rec)
    assert text.splitlines()[-5:] == X_WINS  # one move per line, in notation
    back = records.parse(text)
    assert back == rec
    path = tmp_path / "game.txt"
    records.save(str(path), rec)
    loaded = records.load(str(path))
    assert loaded == rec and loaded.extra == {"seed": "7"}
    env, states = records.replay(loaded)
    assert env.name == "tic_tac_toe" and len(states) == 6
    assert env.to_text(states[-1]) == ttt.to_text(final)
    assert records.result_of(states[-1]) == "1-0" and records.result_of(states[0]) == "*"


def test_unfinished_game_and_start_position(ttt):
    start = "X...O.... X"
    rec = records.GameRecord(game="tic_tac_toe", start=start, moves=["c3"])
    env, states = records.replay(records.parse(records.to_text(rec)))
    assert env.to_text(states[0]) == start
    assert env.to_text(states[1]) == "X...O...X O"
    assert records.result_of(states[-1]) == "*"


def test_draw_result(ttt):
    moves = ["a1", "b2", "c1", "b1", "b3", "c2", "a2", "a3", "c3"]
    final = play(ttt, moves)
    rec = records.new_record(ttt, moves, ("a", "b"), final_state=final)
    assert rec.result == "1/2-1/2" and records.winner_of(rec.result) == -1
    records.replay(records.parse(records.to_text(rec)))


def test_an_agents_illegal_action_is_a_move_that_loses(ttt):
    """``illegal:N`` (an agent's illegal choice, as the terminal and the web board record it)
    replays as that action: the game ends against its mover; a legal N is refused."""
    rec = records.GameRecord(game="tic_tac_toe", moves=["a1", "illegal:0"], result="1-0")
    env, states = records.replay(records.parse(records.to_text(rec)))
    assert len(states) == 3 and records.result_of(states[-1]) == "1-0"
    far = records.GameRecord(game="tic_tac_toe", moves=["a1", "illegal:999999999999"])
    assert records.result_of(records.replay(far)[1][-1]) == "1-0"
    with pytest.raises(records.RecordError, match="move 2 'illegal:4': action 4 is legal"):
        records.replay(records.GameRecord(game="tic_tac_toe", moves=["a1", "illegal:4"]))
    with pytest.raises(records.RecordError, match="the game is already over"):
        records.replay(records.GameRecord(game="tic_tac_toe", moves=["illegal:9", "a1"]))


HEADER = (
    "# a comment\ngame: tic_tac_toe\noptions: {}\nplayer0: human\nplayer1: random\nresult: *\n\n"
)


@pytest.mark.parametrize(
    "text,line,fragment",
    [
        (HEADER + "b2\na1\nb2\n", 10, "move 3 'b2'"),  # square taken
        (HEADER + "b2\n\nzz\n", 10, "move 2 'zz'"),  # malformed, after a blank line
        (HEADER + "b2\nd7\n", 9, "off the 3x3 board"),
        (HEADER + "a1\nb1\na2\nb2\na3\nc3\n", 13, "already over"),  # move after the end
        (HEADER + "b2 a1\n", 8, "one move per line"),
        (HEADER.replace("result: *", "result: 0-1") + "a1\nb1\na2\nb2\na3\n", 6, "does not match"),
        (HEADER.replace("result: *", "result: X wins"), 6, "unknown result"),
        (HEADER.replace("options: {}", "options: {size: 8"), 3, "JSON"),
        (HEADER.replace("options: {}", 'options: {"size": 8}'), 3, "unknown option"),
        (HEADER.replace("game: tic_tac_toe", "game: chess"), 2, "unknown game"),
        (HEADER.replace("player0: human", "player0 human"), 4, "header line"),
        (HEADER.replace("game: tic_tac_toe\n", ""), 1, "no 'game"),
        (HEADER.replace("result: *", "start: XXX...... O"), 6, "bad start position"),
        (HEADER.replace("player1: random", "player1: \x1b[2Jx"), 5, "control character"),
    ],
)
def test_corrupt_records_name_the_line(tmp_path, text, line, fragment):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(records.RecordError) as err:
        records.load(str(path))
    msg = str(err.value)
    assert msg.startswith(f"{path}:{line}: "), msg
    assert fragment in msg, msg
    assert isinstance(err.value, ValueError)


def test_a_record_from_a_decided_position_has_its_result(tmp_path):
    """A record starting where the game is already decided (X has a line; a full reversi
    board) reads back with that result, and a file with a byte-order mark is read."""
    won = HEADER.replace("result: *", "start: XXXOO.... O\nresult: 1-0")
    path = tmp_path / "won.txt"
    path.write_bytes(b"\xef\xbb\xbf" + won.encode())
    rec = records.load(str(path))
    assert rec.game == "tic_tac_toe" and records.result_of(records.replay(rec)[1][-1]) == "1-0"
    with pytest.raises(records.RecordError, match="does not match"):
        path.write_text(won.replace("result: 1-0", "result: 0-1"))
        records.load(str(path))
    # a draw, as older records of no moves from a decided start say: read with its result
    path.write_text(won.replace("result: 1-0", "result: 1/2-1/2"))
    assert records.result_of(records.replay(records.load(str(path)))[1][-1]) == "1-0"
    with pytest.raises(records.RecordError, match="does not match"):  # with moves: checked
        path.write_text(HEADER.replace("result: *", "result: 1/2-1/2") + "a1\nb1\na2\nb2\na3\n")
        records.load(str(path))
    # from a start, with moves (X's c1 completes the top row): checked too
    with pytest.raises(records.RecordError, match="does not match"):
        path.write_text(HEADER.replace("result: *", "start: XX.OO.... X\nresult: 1/2-1/2") + "c1\n")
        records.load(str(path))


def test_load_without_validation_keeps_illegal_moves(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text(HEADER + "b2\nb2\n")
    rec = records.load(str(path), validate=False)
    assert rec.moves == ["b2", "b2"] and rec.lines["moves"] == [8, 9]


@pytest.mark.parametrize("name,opts", jaxgames.game_variants())
def test_round_trip_every_game(name, opts):
    env = jaxgames.make(name, **opts)
    init, step = records.jitted(env)  # the same compiled step as records.replay
    state, moves, key = init(0), [], jax.random.PRNGKey(1)
    for _ in range(8):  # a few random legal moves
        if bool(state.terminated) or bool(state.truncated):
            break
        key, k = jax.random.split(key)
        a = int(jaxgames.random_action(k, state.legal_action_mask))
        moves.append(env.action_to_text(state, a))
        state = step(state, a)
    rec = records.new_record(env, moves, ("human", "random"), final_state=state)
    env2, states = records.replay(records.parse(records.to_text(rec)))
    assert env2.config == env.config
    assert env2.to_text(states[-1]) == env.to_text(state)

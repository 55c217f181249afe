"""Reversi transcripts: move strings and GGF, read and written, round trips on random games of
every size, the classic openings, and malformed input named in one-line errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames import records, transcripts
from jaxgames.games import shared_env
from jaxgames.records import RecordError


def random_game(size: int, seed: int, plies: int | None = None) -> records.GameRecord:
    """A record of uniformly random legal moves on a ``size`` board (to the end, or ``plies``)."""
    env = shared_env("reversi", size=size)  # the env transcripts use: one compilation per size
    init, step = records.jitted(env)
    rng = np.random.default_rng(seed)
    state, moves = jax.device_get(init(0)), []
    while not bool(state.terminated) and (plies is None or len(moves) < plies):
        action = int(rng.choice(np.flatnonzero(np.asarray(state.legal_action_mask))))
        moves.append(env.action_to_text(state, action))
        state = jax.device_get(step(state, action))
    return records.new_record(env, moves, ("alice", "bob"), final_state=state, date="")


@pytest.fixture(scope="module")
def games():
    """Finished random games on 4x4 to 10x10 (4x4 games are full of passes)."""
    return [random_game(size, seed) for size in (4, 6, 8, 10) for seed in range(2)]


def test_random_games_round_trip_through_move_strings(games):
    assert any("pass" in g.moves for g in games)  # implied passes are put back
    for game in games:
        text = transcripts.to_move_string(game)
        assert "pass" not in text
        back = transcripts.from_move_string(text, size=game.options["size"])
        assert back.moves == game.moves and back.result == game.result != "*"
        assert transcripts.from_move_string(text.upper(), size=game.options["size"]) == back


def test_random_games_round_trip_through_ggf(games):
    for game in games:
        text = transcripts.to_ggf(game)
        n = game.options["size"]
        assert f"TY[{n}]BO[{n} " in text and text.startswith("(;GM[Othello]")
        assert transcripts.from_ggf(text) == game
    # several games in one text, one per line as GGS writes them
    both = transcripts.ggf_games("\n".join(transcripts.to_ggf(g) for g in games[:2]))
    assert both == games[:2]


def test_a_game_that_stops_before_a_forced_pass_is_not_ended(games):
    """A move string cut where the side to move must pass but the other can move: no passes
    are added after its last move (they would end the game by an illegal pass), and it
    replays; the passes of a game neither side can continue are still added."""
    cuts = 0
    for game in games:
        for i, mv in enumerate(game.moves[:-1]):
            if mv == "pass" and game.moves[i + 1] != "pass":
                text = "".join(m for m in game.moves[:i] if m != "pass")
                rec = transcripts.from_move_string(text, game.options["size"])
                assert rec.moves == game.moves[:i] and rec.result == "*", (text, rec.moves)
                records.replay(rec)
                cuts += 1
    assert cuts >= 2  # the random games of the fixture (seeded) hold two such cuts
    for game in games:  # a finished game's final passes (both sides blocked) come back
        text = "".join(m for m in game.moves if m != "pass")
        assert transcripts.from_move_string(text, game.options["size"]).moves == game.moves


def test_unfinished_game_and_own_start_round_trip():
    game = random_game(8, 5, plies=11)
    assert game.result == "*"
    assert transcripts.from_move_string(transcripts.to_move_string(game)).moves == game.moves
    # a game from a later position (a GGF random start): BO holds it
    env, states = records.replay(game, shared_env("reversi", size=8))
    here = states[-1]
    first_legal = env.action_to_text(here, int(np.flatnonzero(here.legal_action_mask)[0]))
    later = records.new_record(
        env, [first_legal], ("a", "b"), start=env.to_text(here), date="2026-11-21T10:40:00Z"
    )
    assert "BO[8 " + env.to_text(here)[:8].replace("X", "*") in transcripts.to_ggf(later)
    text = transcripts.to_ggf(later)
    assert "DT[2026.11.21_10:40:00.UTC]" in text
    assert transcripts.from_ggf(text) == later
    with pytest.raises(ValueError, match="starts from the standard position"):
        transcripts.to_move_string(later)


def test_classic_openings_from_the_standard_start():
    # black's four first moves in our coordinates are othello's (white on d4 and e5)
    env = shared_env("reversi", size=8)
    first = env.init(None)
    legal = [env.action_to_text(first, a) for a in np.flatnonzero(first.legal_action_mask)]
    assert sorted(legal) == ["c4", "d3", "e6", "f5"]
    # the tiger opening, letter case and spaces ignored
    record = transcripts.from_move_string("f5d6c3d3c4")
    assert record.moves == ["f5", "d6", "c3", "d3", "c4"] and record.result == "*"
    assert transcripts.from_move_string(" F5 D6 c3D3c4 ") == record
    _, states = records.replay(record, env)
    ranks = ["--------", "--------", "--XO----", "--XXX---", "---OXX--", "---O----"]
    assert env.to_text(states[-1]) == "".join(ranks) + "-" * 16 + " O"  # worked out by hand


def test_ggf_from_a_server_with_times_evaluations_and_extra_properties():
    text = (
        "(;GM[Othello]PC[GGS/os]DT[2003.12.15_13:24:03.UTC]PB[alice]PW[bob]RB[2197.01]"
        "RW[2199.72]TI[05:00//02:00]TY[8]RE[+0.000]"
        "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"
        "B[F5//0.01]W[d6/1.5/0.02] B[C3]W[d3//0.01];)"
    )
    record = transcripts.from_ggf(text)
    assert record.moves == ["f5", "d6", "c3", "d3"] and record.players == ("alice", "bob")
    assert record.date == "2003-12-15T13:24:03Z" and record.result == "*"
    assert record.extra == {
        "ggf-pc": "GGS/os",
        "ggf-rb": "2197.01",
        "ggf-rw": "2199.72",
        "ggf-ti": "05:00//02:00",
    }
    assert transcripts.from_ggf(transcripts.to_ggf(record)) == record


@pytest.mark.parametrize(
    "text, message",
    [
        ("f5d6zz", r"malformed move string at character 5 \('zz'\)"),
        ("f5a1", r"move 2 'a1': illegal move 'a1': it flips no discs"),
        ("f5f5", r"move 2 'f5': illegal move 'f5': the square is occupied"),
        ("f5i9", r"move 2 'i9': square 'i9' is off the 8x8 board"),
    ],
)
def test_bad_move_strings_name_the_move(text, message):
    with pytest.raises(RecordError, match=message):
        transcripts.from_move_string(text)


START = "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"


@pytest.mark.parametrize(
    "text, message",
    [
        ("hello", "expected GGF games"),
        ("(;GM[Chess]B[e4];)", r"GM\[Chess\] is not GM\[Othello\]"),
        ("(;GM[Othello]TY[8a]B[f5];)", r"unsupported game type TY\[8a\]"),
        ("(;GM[Othello]TY[7]B[f5];)", "invalid reversi size 7"),
        ("(;GM[Othello]BO[8 ---- *]B[f5];)", r"malformed BO\[8 ---- \*\]"),
        ("(;GM[Othello]TY[6]" + START + ";)", "is 8x8 but TY says 6"),
        ("(;GM[Othello]" + START + "W[f5];)", "move 1 'f5': played by white, but black is to move"),
        ("(;GM[Othello]" + START + "B[f5]W[a1];)", "move 2 'a1': illegal move 'a1'"),
        (
            "(;GM[Othello]" + START + "B[f5]W[PA];)",
            "illegal move 'pass'",
        ),
        ("(;GM[Othello]" + START + "B[f5] junk;)", "malformed GGF at 'junk'"),
        ("(;GM[Othello]PB[a]PB[b];)", "property PB given twice"),
    ],
)
def test_bad_ggf_is_one_clear_error(text, message):
    with pytest.raises(RecordError, match=message):
        transcripts.from_ggf(text, source="g.ggf")


def test_ggf_result_must_match_a_finished_game():
    game = random_game(4, 0)
    text = transcripts.to_ggf(game)
    margin = text.split("RE[")[1].split("]")[0]
    flipped = ("-" + margin[1:]) if margin[0] == "+" else ("+" + margin[1:])
    if float(margin) != 0:
        with pytest.raises(RecordError, match="does not match the moves"):
            transcripts.from_ggf(text.replace(f"RE[{margin}]", f"RE[{flipped}]"))


@pytest.mark.parametrize(
    "moves, board, margin",
    [
        ("c4b4a3d2c1b1a2d4a1", "XXX-XXXOXXX--OOO", "+8.00"),  # 9 - 4, + 3 empties
        ("d3d4c4b4a4d2d1b1a2", "-O-XOOOO-OOOXOOO", "-12.00"),  # 2 - 11, - 3 empties
    ],
)
def test_ggf_margin_gives_the_empty_squares_to_the_winner(moves, board, margin):
    """GGF's RE is black's disc margin with the empty squares counted for the winner (as GGS
    scores): 4x4 games that end with both sides blocked and squares left empty."""
    rec = transcripts.from_move_string(moves, size=4)
    assert rec.moves[-2:] == ["pass", "pass"]
    env, states = records.replay(rec, shared_env("reversi", size=4))
    assert env.to_text(states[-1]).split()[0] == board
    assert f"RE[{margin}]" in transcripts.to_ggf(rec)


def test_only_reversi_has_transcripts():
    env = jaxgames.make("animal_shogi")
    record = records.new_record(env, [], ("a", "b"))
    with pytest.raises(ValueError, match="for reversi games, not 'animal_shogi'"):
        transcripts.to_move_string(record)
    with pytest.raises(ValueError, match="for reversi games"):
        transcripts.to_ggf(record)


def test_foreign_files_read_with_plain_headers(tmp_path):
    """GGF as the othello servers wrote it: Latin-1 names, line breaks or escapes inside a
    value (kept on one line, as plain text), several games (named, with the way out); and a
    final position given as the board reads back with its result."""
    game = random_game(8, 2)
    text = transcripts.to_ggf(game)
    for name, raw in (
        ("latin1.ggf", text.replace("PB[", "PB[St\xe9phane ").encode("latin-1")),
        ("bom.ggf", b"\xef\xbb\xbf" + text.replace("PB[", "PB[\x1b[2J\nx ").encode()),
    ):
        (tmp_path / name).write_bytes(raw)
        rec = transcripts.load(str(tmp_path / name))
        assert (
            rec.moves == game.moves and "\n" not in rec.players[0] and "\x1b" not in rec.players[0]
        )
    assert transcripts.load(str(tmp_path / "latin1.ggf")).players[0].startswith("Stéphane ")
    (tmp_path / "two.ggf").write_text(text + "\n" + text + "\n")
    with pytest.raises(RecordError, match="holds 2 games; a record is one game: split the file"):
        transcripts.load(str(tmp_path / "two.ggf"))
    full = "(;GM[Othello]BO[4 **** **** **** **OO O];)"
    assert transcripts.from_ggf(full).result == "1-0"


def test_load_reads_every_format(tmp_path):
    game = random_game(8, 1)
    files = {
        "game.txt": records.to_text(game),
        "game.ggf": transcripts.to_ggf(game),
        "moves.txt": transcripts.to_move_string(game) + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        assert transcripts.load(str(tmp_path / name)).moves == game.moves
    (tmp_path / "bad.txt").write_text("f5d6a1\n")
    with pytest.raises(RecordError, match=r"bad.txt: move 3 'a1'"):
        transcripts.load(str(tmp_path / "bad.txt"))

"""The NBoard protocol both ways (jaxgames.nboard): jaxgames answering recorded NBoard sessions,
the client reading an engine's recorded answers (Edax's format) through a stand-in engine
program, its errors, and jaxgames engine processes playing full games through the bridge."""

import io
import json
import os
import re
import shlex
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_reversi import RefReversi

import jaxgames
from jaxgames import cli, transcripts
from jaxgames.core import external_error, is_over
from jaxgames.games import grid
from jaxgames.nboard import EngineSession, nboard_policy, parse_command
from jaxgames.records import replay
from jaxgames.specs import check_spec, make_opponent, parse_spec, runs_a_program
from jaxgames.terminal import one_line

DATA = os.path.join(os.path.dirname(__file__), "data", "nboard")
FAKE = os.path.join(DATA, "fake_engine.py")
#: the NBoard protocol's sample position: after these moves, black to move
SAMPLE = "f5f6d3c5e6f7e7f4"


def _fake(transcript: str, settings: str = "") -> str:
    """The spec of the stand-in engine playing back ``transcript``."""
    cmd = shlex.join([sys.executable, FAKE, os.path.join(DATA, transcript)])
    return f"nboard:{settings}{cmd}"


def _engine_cmd(spec: str) -> str:
    return shlex.join(
        [sys.executable, "-m", "jaxgames.cli", "engine", "--protocol", "nboard", spec]
    )


def _sample_state():
    env = jaxgames.make("reversi", size=8)
    _, states = replay(transcripts.from_move_string(SAMPLE), env)
    return env, states[-1]


def _reference(moves: str) -> RefReversi:
    game = RefReversi(8)
    for m in re.findall(r"[a-h][1-8]", moves):
        game.play(grid.parse_square(m, 8, 8))
    return game


# ----------------------------------------------------------------------------- engine side
def test_engine_answers_a_recorded_nboard_session():
    """jaxgames' answers to the NBoard GUI's commands match the recorded session (the time
    each move took aside), and each move is legal by the independent reference rules."""
    lines = open(os.path.join(DATA, "engine_greedy.txt")).read().splitlines()
    err = io.StringIO()
    session = EngineSession(lambda env: make_opponent("greedy", env), "jaxgames greedy", err=err)
    got, want = [], [line[2:] for line in lines if line.startswith("< ")]
    for line in lines:
        if line.startswith("> "):
            for reply in session.handle(line[2:]):
                got.append(re.sub(r"^(=== [^/]+/[^/]+/)[0-9.]+$", r"\1T", reply))
    assert got == want
    # the one bad move of the session is a warning on stderr, and the position kept
    assert err.getvalue().splitlines() == [
        "warning: move 'z9': square 'z9' is off the 8x8 board (a1..h8); the position is unchanged"
    ]
    played = [w.split()[1].split("/")[0].lower() for w in want if w.startswith("===")]
    first = _reference(SAMPLE)
    assert grid.parse_square(played[0], 8, 8) in first.legal_actions()
    assert grid.parse_square(played[1], 8, 8) in _reference(SAMPLE + "d6").legal_actions()


def test_engine_rejects_what_is_illegal_and_keeps_the_position():
    err = io.StringIO()
    session = EngineSession(lambda env: make_opponent("random", env), "r", err=err)
    session.handle("set game (;GM[Othello]TY[8]B[a1];)")
    session.handle("move a1")
    assert session.state.step_count == 0
    assert len(err.getvalue().splitlines()) == 2
    assert "set game" in err.getvalue() and "move 'a1': illegal here" in err.getvalue()
    # a date past what a timestamp holds is kept as text: the position is taken
    board = "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]"
    session.handle(f"set game (;GM[Othello]DT[99999999999999999999]TY[8]{board}B[d3];)")
    assert session.state.step_count == 1
    # the side to move must pass, the other can move: the engine passes (the game goes on)
    rows = "******** *OO**O** *O**O*** *O****O* *O*OOO** OOOOO*O* -OOO*OO* --OOOOO*"
    session.handle(f"set game (;GM[Othello]TY[8]BO[8 {rows} O];)")
    assert "=== PA" in " ".join(session.handle("go")) and not is_over(session.state)
    # a board the player cannot play: a trained 8x8 agent asked on 6x6
    session = EngineSession(lambda env: make_opponent("pretrained:reversi8", env), "a", err=err)
    session.handle("set game (;GM[Othello]TY[6]BO[6 ------ ------ --O*-- --*O-- ------ ------ *];)")
    (status,) = session.handle("go")
    assert status.startswith("status ") and "reversi" in status


class FixedPlayer:
    """A network-like player with known answers: probabilities proportional to action + 1 over
    the legal moves (the highest square most probable), a constant value of 0.5."""

    def __init__(self, env):
        self.n = env.num_actions

    def probs(self, state):
        w = jnp.where(state.legal_action_mask, jnp.arange(1, self.n + 1, dtype=jnp.float32), 0)
        return w / w.sum()

    def value(self, state):
        return jnp.float32(0.5)

    def __call__(self, key, state):
        return jnp.argmax(self.probs(state)).astype(jnp.int32)


def test_engine_hints_are_the_players_most_probable_moves():
    """'hint 3' lists the 3 most probable moves, most probable first: at the start d3 (19),
    c4 (26), f5 (37), e6 (44) weigh 20, 27, 38, 45 of 130; 'hint 9' lists all 4."""
    session = EngineSession(FixedPlayer, "fixed", err=io.StringIO())
    search = [line.split() for line in session.handle("hint 3") if line.startswith("search ")]
    assert [(w[1], w[-1]) for w in search] == [
        ("E6", "p=0.346"),  # 45 / 130
        ("F5", "p=0.292"),  # 38 / 130
        ("C4", "p=0.208"),  # 27 / 130
    ]
    assert len([x for x in session.handle("hint 9") if x.startswith("search ")]) == 4


def test_engine_evaluations_are_scaled_to_the_board():
    """An NBoard evaluation is a disc margin: the value 0.5 times the board's squares, 32.00
    on 8x8 and 18.00 on 6x6."""
    session = EngineSession(FixedPlayer, "fixed", err=io.StringIO())
    (move,) = [line for line in session.handle("go") if line.startswith("===")]
    assert re.fullmatch(r"=== [A-H][1-8]/32\.00/[0-9.]+", move), move
    session.handle("set game (;GM[Othello]TY[6]BO[6 ------ ------ --O*-- --*O-- ------ ------ *];)")
    (move,) = [line for line in session.handle("go") if line.startswith("===")]
    assert re.fullmatch(r"=== [A-F][1-6]/18\.00/[0-9.]+", move), move


def test_engine_plays_bare_moves_with_two_digit_ranks():
    """On a 10x10 board an NBoard 1.1 bare move 'e10' is played like 'move e10' (black on e8,
    white on e9: e10 flips e9)."""
    err = io.StringIO()
    session = EngineSession(FixedPlayer, "fixed", err=err)
    rows = ["-" * 10] * 10
    rows[4], rows[5], rows[7], rows[8] = "----*O----", "----O*----", "----*-----", "----O-----"
    session.handle(f"set game (;GM[Othello]TY[10]BO[10 {' '.join(rows)} *];)")
    assert session.env.size == 10, err.getvalue()
    before = int(session.state.step_count)
    session.handle("e10")
    assert int(session.state.step_count) == before + 1, err.getvalue()
    board = session.env.to_text(session.state).split()[0]
    assert board[9 * 10 + 4] == board[8 * 10 + 4] == "X" and err.getvalue() == ""


# ----------------------------------------------------------------------------- player side
def test_client_plays_the_recorded_edax_answer():
    """The client sends the recorded lines (the stand-in engine exits otherwise) and plays
    Edax's answer d6, whose eval and time it reads past."""
    env, state = _sample_state()
    policy = make_opponent(_fake("edax_go.txt", "depth=6:"), env)
    action = int(jax.jit(policy)(jax.random.PRNGKey(0), state))
    assert env.action_to_text(state, action) == "d6"
    assert "< === d6 -1.00 0.0" in policy.process.transcript
    # a finished game and a forced pass never reach the engine
    mask = np.zeros(65, bool)
    assert policy._host_move(np.zeros((8, 8, 2)), 0, mask) == 0
    mask[64] = True
    assert policy._host_move(np.zeros((8, 8, 2)), 0, mask) == 64
    policy.process.close()


def test_an_engine_writing_latin1_is_read():
    """An engine whose output is not UTF-8 (its name in Latin-1) is read with a replacement
    character, not a reader-thread crash that then looks like an engine not answering."""
    env, state = _sample_state()
    policy = make_opponent(_fake("edax_latin1.txt", "depth=6:time=20:"), env)
    action = int(jax.jit(policy)(jax.random.PRNGKey(0), state))
    assert env.action_to_text(state, action) == "d6"
    assert "< set myname \ufffddax6" in policy.process.transcript
    policy.process.close()


@pytest.mark.parametrize(
    "transcript, message",
    [
        ("illegal_move.txt", r"played an illegal move 'A1' in position BO\[8 .*\]; legal: "),
        ("dies.txt", r"exited \(exit code 7\): fake engine: dying as told"),
    ],
)
def test_client_errors_are_one_line(transcript, message, capsys):
    env, state = _sample_state()
    policy = nboard_policy(_fake(transcript).partition(":")[2], env)
    with pytest.raises(Exception) as caught:
        jax.jit(policy)(jax.random.PRNGKey(0), state).block_until_ready()
    text = external_error(caught.value)
    assert text is not None and "\n" not in text
    assert one_line(caught.value) == text  # play's and the web board's error lines
    # the command is cut in the middle on long paths: its end (the engine's arguments) stays
    quoted = re.fullmatch(r"nboard engine '(.*)' " + message + ".*", text)
    assert quoted and len(quoted[1]) <= 80 and quoted[1].endswith(transcript), text
    if "illegal" in text:  # the legal moves named are those of the independent reference
        legal = [grid.square_name(a, 8) for a in _reference(SAMPLE).legal_actions()]
        assert text.endswith("legal: " + ", ".join(legal))
    assert "Traceback" not in capsys.readouterr().err  # JAX's log of the callback is dropped
    policy.process.close()


def test_which_specs_start_a_program():
    """runs_a_program: an nboard: engine, alone or inside a wrapper; nothing else."""
    for spec in ("nboard:sh -c true", "solve:4:nboard:time=1:sh", " nboard:depth=2:edax"):
        assert runs_a_program(spec), spec
    for spec in ("random", "engine:3", "mcts:8:pretrained:reversi8", "solve:4:random", "x:"):
        assert not runs_a_program(spec), spec


def test_spec_errors(tmp_path, capsys):
    env = jaxgames.make("reversi", size=8)
    assert str(parse_spec("nboard:depth=4:time=2:edax -q")) == "nboard:depth=4:time=2:edax -q"
    assert parse_command("depth=4:time=2:edax -q") == ({"depth": 4.0, "time": 2.0}, ["edax", "-q"])
    assert parse_command("edax -l 10:20") == ({}, ["edax", "-l", "10:20"])
    for bad, why in [
        ("nboard:", "needs the engine's command line"),
        ("nboard:depth=0:edax", "depth must be an integer >= 1"),
        ("nboard:depth=2.5:edax", "depth must be an integer >= 1"),
        ("nboard:depth=2:depth=3:edax", "given twice"),
        ("nboard:time=-1:cat", "'time=-1': depth= takes an integer >= 1, time= seconds > 0"),
        ("nboard:depth=x:edax", "'depth=x': depth= takes"),
        ("nboard:depth=3", "command line is missing after 'depth=3'"),
        ("nboard:time=1000000000:cat", "at most 86,400"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_spec(bad)
    with pytest.raises(ValueError, match="'no-such-engine-xyz' not found on PATH"):
        check_spec("nboard:no-such-engine-xyz", env)
    with pytest.raises(ValueError, match="play reversi, not 'tic_tac_toe'"):
        check_spec(f"nboard:{sys.executable}", jaxgames.make("tic_tac_toe"))
    # on the command line: one error line before any game
    assert cli.main(["eval", "--game", "reversi", "--a", "nboard:no-such-engine-xyz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not found on PATH" in err
    # an illegal move inside a jitted match: one error line, no traceback
    args = ["eval", "--game", "reversi", "--a", _fake("illegal_move.txt"), "--b", "random"]
    assert cli.main([*args, "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: nboard engine") and err.count("\n") == 1


# ----------------------------------------------------------------------------- both ways
def test_engine_processes_play_full_games_through_the_bridge(tmp_path, capsys):
    """Two ``jaxgames engine`` processes (random, greedy) play full 8x8 games against each
    other through the client, every move cross-checked; then one is rated on the ladder."""
    a, b = f"nboard:{_engine_cmd('random')}", f"nboard:time=60:{_engine_cmd('greedy')}"
    out = str(tmp_path / "eval.json")
    args = ["eval", "--game", "reversi", "--a", a, "--b", b, "--games", "4", "--json", out]
    assert cli.main(args) == 0
    result = json.load(open(out))
    assert result["overall"]["games"] == 4
    assert result["mean_plies"] >= 58  # full games: most of the 60 squares are filled
    capsys.readouterr()
    rate = ["rate", a, "--game", "reversi", "--rungs", "random,greedy", "--games-per-rung", "2"]
    assert cli.main(rate) == 0
    assert "Elo" in capsys.readouterr().out


def test_engine_process_survives_bytes_that_are_not_utf8():
    """A Latin-1 player name from the GUI, read by a process that decodes stdin strictly (a
    desktop's UTF-8 locale): the session goes on."""
    cmd = shlex.split(_engine_cmd("random"))
    game = b"set game (;GM[Othello]PB[J\xf6rg]TY[8]B[d3];)\nping 7\nquit\n"
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    proc = subprocess.run(cmd, input=game, capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-300:]
    assert b"pong 7" in proc.stdout


def test_engine_command_errors_are_one_line(capsys):
    for args, why in [
        (["--protocol", "uci", "random"], "--protocol 'uci': jaxgames speaks nboard"),
        (["pretrained:tic_tac_toe"], "plays tic_tac_toe; NBoard engines play reversi"),
        (["pretrained:nope"], "unknown pretrained agent 'nope'"),
    ]:
        assert cli.main(["engine", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and why in err and err.count("\n") == 1

"""The terminal game, driven through a pseudo-terminal like a person would (pexpect), plus
in-process checks of the session logic with string streams."""

import io
import os
import re
import signal
import sys
import time

import pytest

import jaxgames
from jaxgames import cli, records, terminal
from jaxgames.cli import play as play_command

pexpect = pytest.importorskip("pexpect")
# pexpect forks this (JAX-threaded) process but execs at once, so the fork warning is moot
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def play_main(argv, stdin=None, stdout=None):
    """``jaxgames play|replay ...`` in process, on the given streams."""
    args = cli.build_parser().parse_args(argv)
    return args.func(args, stdin=stdin, stdout=stdout)


PROMPT = r"\r\n(\d+)\. ([XO])> "
GAME_OVER = r"new game\? .*> "


def _default_sigint():
    """In the child before exec: Ctrl-C as a user's shell would deliver it. A child inherits
    the test process's signal mask and ignored signals, which may block or ignore SIGINT
    after the rest of the suite has run."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(*args, cwd):
    env = dict(
        os.environ,
        PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
        JAX_PLATFORMS="cpu",
    )
    child = pexpect.spawn(
        sys.executable,
        ["-m", "jaxgames.cli", *(args if args and args[0] == "replay" else ("play", *args))],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=90,
        dimensions=(60, 200),
        preexec_fn=_default_sigint,
    )
    child.logfile_read = io.StringIO()  # the whole transcript, to check for tracebacks
    return child


def transcript(child):
    return child.logfile_read.getvalue()


def legal_moves(before):
    """The moves on the last 'legal: ...' line of the screen before the prompt."""
    found = re.findall(r"legal: ([^\r\n]*)", before)
    assert found, before
    return found[-1].split()


def rows(text):
    """The board rows (rank number, then cells) of a tic-tac-toe diagram."""
    return re.findall(r"^([123] .*?)\s*$", text.replace("\r", ""), re.M)


def finish(child, status=0):
    child.expect(pexpect.EOF)
    child.close()
    out = transcript(child)
    assert "Traceback" not in out, out
    assert child.exitstatus == status, out
    return out


def test_full_game_against_random_with_undo_and_tally(tmp_path):
    child = spawn(
        "--game", "tic_tac_toe", "--agent", "random", "--seed", "3", "--legal", cwd=tmp_path
    )
    child.expect("you play X, agent random plays O")
    child.expect(PROMPT)
    assert child.match.group(1, 2) == ("1", "X")
    first = legal_moves(child.before)[0]
    child.sendline(first)
    child.expect(r"agent random \(O\) plays (\w+)")
    reply = child.match.group(1)
    child.expect(PROMPT)
    assert child.match.group(1, 2) == ("3", "X")

    child.sendline("undo")  # takes back the agent's reply and our move
    child.expect(f"took back: {first} {reply}")
    child.expect(PROMPT)
    assert child.match.group(1, 2) == ("1", "X")
    assert len(legal_moves(child.before)) == 9

    screen = child.before
    for _ in range(5):  # play the first legal move until the game ends
        child.sendline(legal_moves(screen)[0])
        i = child.expect([PROMPT, GAME_OVER])
        screen = child.before
        if i == 1:
            break
    assert i == 1
    over = screen
    assert re.search(
        r"game over: (X wins \(you\)|O wins \(agent random\)|a draw), (1-0|0-1|1/2-1/2)", over
    ), over
    assert re.search(
        r"session \(1 game\): X won \d, O won \d, drawn \d \| you won \d, agent random won \d", over
    )
    child.sendline("s")  # a new game with swapped colours: the agent now opens as X
    child.expect(r"agent random \(X\) plays \w+")
    child.expect(PROMPT)
    assert child.match.group(1, 2) == ("2", "O")
    child.sendline("quit")
    child.expect("bye")
    finish(child)


def test_bad_input_gets_one_line_and_the_prompt_again(tmp_path):
    child = spawn("--game", "tic_tac_toe", "--agent", "random", "--color", "second", cwd=tmp_path)
    child.expect(r"agent random \(X\) plays (\w+)")
    taken = child.match.group(1)
    for line, answer in [
        ("foo", r"unknown command 'foo'.*type 'help'"),
        ("z9", r"square 'z9' is off the 3x3 board"),
        ("b", r"malformed square 'b'"),
        (taken, r"illegal move '" + taken + r"': the square is taken"),
        ("pass", r"malformed square 'pass'"),
        ("save", r"usage: save FILE"),
        ("save /nonexistent/dir/g.txt", r"error: save .*does not exist"),
        ("undo", r"nothing to undo"),
        ("help", r"undo +take back"),
    ]:
        child.expect(PROMPT)
        assert child.match.group(1, 2) == ("2", "O")
        child.sendline(line)
        child.expect(answer)
    child.expect(PROMPT)
    child.sendeof()  # Ctrl-D ends the session cleanly
    child.expect("bye")
    out = finish(child)
    assert out.count("agent random (X) plays") == 1  # bad input never passed the turn


def test_ctrl_c_exits_cleanly(tmp_path):
    child = spawn("--agent", "human", cwd=tmp_path)
    child.expect(PROMPT)
    time.sleep(0.5)  # let it reach input(): on a loaded machine the prompt can come out first
    child.sendintr()
    child.expect("interrupted, bye")
    finish(child, status=130)


def test_save_load_round_trip_and_replay(tmp_path):
    child = spawn(
        "--game", "tic_tac_toe", "--agent", "random", "--seed", "5", "--legal", cwd=tmp_path
    )
    played = []
    child.expect(PROMPT)
    for _ in range(2):
        move = legal_moves(child.before)[-1]
        child.sendline(move)
        child.expect(r"agent random \(O\) plays (\w+)")
        played += [move, child.match.group(1)]
        child.expect(PROMPT)
    board = rows(child.before)[-3:]  # the board printed after the agent's last reply
    child.sendline("save game.txt")
    child.expect("saved 4 moves to game.txt")
    child.expect(PROMPT)
    child.sendline("quit")
    finish(child)

    rec = records.load(str(tmp_path / "game.txt"))
    assert rec.moves == played and rec.players == ("human", "random") and rec.result == "*"
    env, states = records.replay(rec)
    assert len(states) == 5

    child = spawn(
        "replay", "game.txt", "--legal", cwd=tmp_path
    )  # interactive: step, jump, back, quit
    child.expect("X = human, O = random")
    child.expect(r"move 0/4> ")
    child.sendline("")
    child.expect(rf"last move: 1\. {played[0]} \(X\).*move 1/4> ")
    child.sendline("4")
    child.expect(r"move 4/4> ")
    assert rows(child.before) == board  # the same board as in play
    child.sendline("nonsense")
    child.expect("unknown command 'nonsense'")
    child.sendline("b")
    child.expect(r"move 3/4> ")
    child.sendline("q")
    finish(child)

    out = io.StringIO()  # the same in one go, in process
    assert play_main(["replay", str(tmp_path / "game.txt"), "--auto"], stdout=out) == 0
    assert (
        out.getvalue().count("to move") == 5 and f"last move: 4. {played[3]} (O)" in out.getvalue()
    )

    out = io.StringIO()  # continue the saved game
    assert (
        play_main(
            ["play", "--load", str(tmp_path / "game.txt"), "--legal"],
            stdin=io.StringIO("undo\nquit\n"),
            stdout=out,
        )
        == 0
    )
    assert "5. X> " in out.getvalue() and f"took back: {played[2]} {played[3]}" in out.getvalue()
    # saved again, it is still a game from the standard position (no start: line)
    assert play_main(
        ["play", "--load", str(tmp_path / "game.txt")],
        stdin=io.StringIO(f"save {tmp_path / 'again.txt'}\nquit\n"),
        stdout=io.StringIO(),
    ) == 0  # fmt: skip
    again = records.load(str(tmp_path / "again.txt"))
    assert again.start is None and again.moves == played


def test_load_continues_with_the_records_agent_and_side(tmp_path):
    """``play --load`` takes the agent and the person's side from the record (the agent's
    move stays the agent's when saved again); --agent / --color given choose otherwise."""
    first, again, other = (str(tmp_path / f) for f in ("first.txt", "again.txt", "other.txt"))
    argv = ["play", "--game", "tic_tac_toe", "--agent", "alphabeta:1", "--color", "second"]
    assert play_main(argv, stdin=io.StringIO(f"save {first}\nquit\n"), stdout=io.StringIO()) == 0
    rec = records.load(first)
    assert rec.players == ("alphabeta:1", "human") and len(rec.moves) == 1  # X's opening
    out = io.StringIO()
    assert (
        play_main(["play", "--load", first], stdin=io.StringIO(f"save {again}\nquit\n"), stdout=out)
        == 0
    )
    assert "agent alphabeta:1 plays X" in out.getvalue(), out.getvalue()
    back = records.load(again)
    assert back.players == rec.players and back.moves == rec.moves  # the person is to move
    argv = ["play", "--load", first, "--agent", "random", "--color", "first"]
    assert play_main(argv, stdin=io.StringIO(f"save {other}\nquit\n"), stdout=io.StringIO()) == 0
    mine = records.load(other)
    assert mine.players == ("human", "random") and len(mine.moves) == 2  # random played O


def test_replay_takes_only_plain_move_numbers(tmp_path):
    """A superscript digit is an unknown command in replay, not the end of the session."""
    path = str(tmp_path / "g.txt")
    records.save(path, records.GameRecord(game="tic_tac_toe", moves=["b2", "a1"]))
    out = io.StringIO()
    assert play_main(["replay", path], stdin=io.StringIO("\u00b2\n2\nq\n"), stdout=out) == 0
    assert "unknown command '\u00b2'" in out.getvalue() and "move 2/2> " in out.getvalue()


def test_corrupt_record_is_one_line_error(tmp_path, capsys):
    path = tmp_path / "bad.txt"
    path.write_text("game: tic_tac_toe\n\nb2\na1\nb2\n")
    assert play_main(["replay", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {path}:5: move 3 'b2': illegal move 'b2': the square is "
        "taken; legal: 1 (b1), 2 (c1), 3 (a2), 5 (c2), 6 (a3), 7 (b3), 8 (c3)"
    )


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--game", "chess"], "unknown game 'chess'"),
        (["--size", "8"], "unknown option"),
        (["--agent", "alphabeta:x"], "alphabeta"),
        (["--color", "purple"], "unknown colour 'purple'"),
        (["--load", "missing.txt"], "No such file"),
        (["--game-option", "size"], "NAME=VALUE"),
    ],
)
def test_startup_errors_are_one_line(args, msg, capsys):
    assert play_main(["play", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and msg in err and err.count("\n") == 1, err


# ---------------------------------------------------------------------------- in process
def session(lines, env=None, **kw):
    out = io.StringIO()
    game = terminal.TerminalGame(
        env or jaxgames.make("tic_tac_toe"),
        stdin=io.StringIO("".join(f"{x}\n" for x in lines)),
        stdout=out,
        **kw,
    )
    return game, game.run(), out.getvalue()


def test_two_humans_undo_one_move_and_tally():
    lines = ["a1", "b1", "a2", "undo", "a2", "b2", "a3", "y", "quit"]
    game, rc, out = session(lines, agent="human")
    assert rc == 0 and "Traceback" not in out
    assert "took back: a2" in out
    assert "game over: X wins, 1-0" in out
    assert "session (1 game): X won 1, O won 0, drawn 0" in out and "you won" not in out
    assert game.tally.games == [(0, None)]
    assert "no agent to ask" in session(["hint"], agent="human")[2]


def test_undo_after_game_over_reopens_it_and_uncounts():
    lines = ["a1", "b1", "a2", "b2", "a3", "undo", "c3", "n"]
    game, rc, out = session(lines, agent="human")
    assert "took back: a3" in out and game.tally.games == []
    assert game.moves == ["a1", "b1", "a2", "b2", "c3"]


def test_hint_uses_value_when_the_policy_has_one(monkeypatch):
    def policy(key, state):
        return jaxgames.random_action(key, state.legal_action_mask)

    class WithValue:
        def __call__(self, key, state):
            return policy(key, state)

        def value(self, state):
            return 0.25 * (state.current_player + 1)

    monkeypatch.setattr(
        terminal, "make_opponent", lambda spec, env: WithValue() if spec == "valued" else policy
    )
    _, _, out = session(["hint"], agent="random", hint="valued")
    assert re.search(r"hint \(valued\): [abc][123], value \+0\.25 for X", out), out
    _, _, out = session(["hint"], agent="random")
    assert re.search(r"hint \(random\): [abc][123]\n", out), out


def test_unknown_agent_spec_is_a_value_error():
    with pytest.raises(ValueError, match="nonsense"):
        terminal.make_opponent("nonsense", jaxgames.make("tic_tac_toe"))


@pytest.mark.parametrize(
    "name,opts,lines,expect",
    [
        (
            "reversi",
            {"size": 6},
            ["c2", "legal", "b4", "numbers", "undo", "quit"],
            ["discs: black (X) 4, white (O) 1", "took back: b4", "legal: "],
        ),
        (
            "animal_shogi",
            {},
            ["b3b2", "b1b2", "legal", "undo", "b1b2", "quit"],
            ["sente in hand: C", "gote in hand: c", "took back: b1b2"],
        ),
    ],
)
def test_other_games_two_humans(name, opts, lines, expect):
    if name not in jaxgames.registered_games():
        pytest.skip(f"{name} not merged yet")
    game, rc, out = session(lines, env=jaxgames.make(name, **opts), agent="human")
    assert rc == 0 and "error" not in out, out
    for fragment in expect:
        assert fragment in out, out


def test_subcommands_plug_into_another_parser(tmp_path):
    import argparse

    path = tmp_path / "g.txt"
    path.write_text(
        "game: tic_tac_toe\nplayer0: human\nplayer1: random\nresult: 1-0\n\na1\nb1\na2\nb2\na3\n"
    )
    parser = argparse.ArgumentParser(prog="jaxgames")
    play_command.add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["replay", str(path), "--auto", "--svg", str(tmp_path / "svg")])
    out = io.StringIO()
    assert args.func(args, stdout=out) == 0
    assert "result: 1-0" in out.getvalue() and out.getvalue().count("to move") == 5
    assert sorted(p.name for p in (tmp_path / "svg").iterdir()) == [
        f"move_{i:03d}.svg" for i in range(6)
    ]
    args = parser.parse_args(["play", "--agent", "human", "--color", "white"])
    assert (args.game, args.agent, args.color) == ("tic_tac_toe", "human", "white")

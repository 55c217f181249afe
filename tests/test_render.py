"""Rendering: text boards with coordinates and marks, SVG that parses and has the right pieces.

Renderers read only the game's own board view (``env.board_view(state)``), so reversi and animal
shogi diagrams are tested here through a stub env holding a game's view of a fixed position and
a fixed legal-move list (and on the real games, every registered one)."""

import re
import types
import xml.etree.ElementTree as ET

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames import render
from jaxgames.games import animal_shogi as A

SVG_NS = "{http://www.w3.org/2000/svg}"


class NotationEnv:
    """Just enough of the Env API for the renderers: a fixed notation and legal move list, no
    board view (a game the renderers cannot draw)."""

    def __init__(self, name, notation, legal=()):
        self.name, self.notation, self.legal = name, notation, list(legal)

    def to_text(self, state):
        return self.notation

    def legal_actions(self, state):
        return list(range(len(self.legal)))

    def action_to_text(self, state, action):
        return self.legal[action]


class ViewEnv(NotationEnv):
    """A stub env showing the real game's board view of ``position`` (a state of that game),
    with the game's side names and flip, and a fixed legal move list."""

    def __init__(self, name, position, legal=(), **options):
        env = jaxgames.make(name, **options)
        super().__init__(name, env.to_text(position), legal)
        self.side_names, self.flip_for_second = env.side_names, env.flip_for_second
        self.view = env.board_view(position)

    def board_view(self, state):
        return self.view


def shogi_position(text):
    """An animal shogi state from SFEN-like text without the legality checks of
    ``env.from_text`` (so that a test can show any pieces, e.g. three chicks)."""
    rows, side, hands, number = text.split()
    board = []
    for rank in rows.split("/"):
        for ch in rank:
            board += [A.EMPTY] * int(ch) if ch.isdigit() else [A.PIECE_CHARS.index(ch)]
    hand = np.zeros((2, 3), np.int32)
    if hands != "-":
        for count, letter in re.findall(r"(\d*)(\D)", hands):
            hand[0 if letter.isupper() else 1, A.HAND_CHARS.index(letter.upper())] = int(count or 1)
    spec = A.AnimalShogiSpec()
    return A.make_state(spec, np.array(board), hand, "bw".index(side), int(number) - 1)


def stub_state(player=0, over=False, n_legal=0):
    return types.SimpleNamespace(
        current_player=np.int32(player),
        terminated=np.bool_(over),
        truncated=np.bool_(False),
        legal_action_mask=np.ones(n_legal, bool),
    )


def pieces(svg_text):
    root = ET.fromstring(svg_text)  # valid XML or this raises
    assert root.tag == SVG_NS + "svg"
    return [g for g in root.iter(SVG_NS + "g") if g.get("class") == "piece"]


def by_class(svg_text, cls):
    return [e for e in ET.fromstring(svg_text).iter() if e.get("class") == cls]


def ttt_after(env, moves):
    state = env.init(jax.random.PRNGKey(0))
    for mv in moves:
        state = env.step_checked(state, env.text_to_action(state, mv))
    return state


def test_tic_tac_toe_text_board(ttt):
    state = ttt_after(ttt, ["b2", "a1", "c3"])
    out = render.text(state, ttt, history=["b2", "a1", "c3"])
    lines = out.splitlines()
    assert lines[0].split() == ["a", "b", "c"]  # file letters
    assert [ln.split()[0] for ln in lines[1:4]] == ["1", "2", "3"]  # rank numbers
    assert lines[1].split()[1:] == ["O", ".", "."]
    assert "[X]" in lines[3]  # the last move c3 is highlighted
    assert "last move: 3. c3 (X)" in out and lines[-1] == "O to move"
    assert "*" not in out and "legal" not in out
    # O's illegal action ends the game with O still the side to move: the move is O's
    lost = ttt.step(state, 0)
    assert "last move: 4. illegal:0 (O)" in render.text(
        lost, ttt, history=[*"b2 a1 c3".split(), "illegal:0"]
    )


def test_tic_tac_toe_text_marks_and_numbers(ttt):
    state = ttt_after(ttt, ["b2", "a1"])
    out = render.text(state, ttt, history=["b2", "a1"], legal=True, numbers=True)
    assert out.count("*") == 7
    assert "legal: b1 c1 a2 c2 a3 b3 c3" in out
    assert "[O2]" in out and "X1" in out


def test_tic_tac_toe_svg_counts_pieces_and_marks(ttt):
    state = ttt_after(ttt, ["b2", "a1", "c3"])
    svg = render.svg(state, ttt, history=["b2", "a1", "c3"], legal=True, numbers=True)
    ps = pieces(svg)
    assert len(ps) == 3
    assert sorted(g.get("data-owner") for g in ps) == ["0", "0", "1"]
    assert len(by_class(svg, "legal")) == 6
    assert len(by_class(svg, "last-move")) == 1
    assert sorted(t.text for t in by_class(svg, "number")) == ["1", "2", "3"]
    assert sorted(t.text for t in by_class(svg, "coord")) == sorted("abc123")
    finished = ttt_after(ttt, ["a1", "b1", "a2", "b2", "a3"])
    assert len(pieces(render.svg(finished, ttt))) == 5
    assert "game over" in render.text(finished, ttt)


def test_reversi_notation_rendering():
    notation = "-" * 19 + "X" + "-" * 7 + "XX" + "-" * 6 + "XO" + "-" * 27 + " O"
    env = ViewEnv("reversi", jaxgames.make("reversi").from_text(notation), ["c3", "e3", "c5"])
    state = stub_state(1, n_legal=3)
    out = render.text(state, env, history=["d3"], legal=True, numbers=True)
    lines = out.splitlines()
    assert lines[0].split() == list("abcdefgh")
    assert [ln.split()[0] for ln in lines[1:9]] == [str(i) for i in range(1, 9)]
    assert "[X1]" in lines[3] and lines[3].count("*") == 2  # d3 highlighted, c3 and e3 marked
    assert "discs: black (X) 4, white (O) 1" in out
    assert out.splitlines()[-1] == "white to move"
    svg = render.svg(state, env, history=["d3"], legal=True)
    ps = pieces(svg)
    assert len(ps) == 5 and sum(g.get("data-owner") == "0" for g in ps) == 4
    assert len(by_class(svg, "legal")) == 3


def test_animal_shogi_notation_rendering():
    env = ViewEnv("animal_shogi", shogi_position("gle/1C1/3/ELG w 2Cc 3"), ["b1b2", "c*a2"])
    state = stub_state(1, n_legal=2)
    out = render.text(state, env, history=["b3b2", "b2b1", "C*b2"], legal=True)
    lines = out.splitlines()
    assert lines[0] == "gote in hand: c"
    assert lines[1].split() == ["a", "b", "c"]
    assert lines[2].split() == ["1", "g", "l", "e"]
    assert "[C]" in lines[3]  # the drop on b2 is the last move
    assert "sente in hand: 2C" in out and out.splitlines()[-1] == "gote to move"
    svg = render.svg(state, env, history=["C*b2"])
    ps = pieces(svg)
    assert len(ps) == 7
    assert sum(g.get("data-owner") == "1" for g in ps) == 3
    assert {g.get("data-piece") for g in ps} == {"giraffe", "lion", "elephant", "chick"}
    hands = [g for g in ET.fromstring(svg).iter(SVG_NS + "g") if g.get("class") == "hand-piece"]
    assert sorted(g.get("data-owner") for g in hands) == ["0", "0", "1"]


def test_move_squares():
    assert render.move_squares("d3") == [(2, 3)]
    assert render.move_squares("b3b2") == [(2, 1), (1, 1)]
    assert render.move_squares("C*b2") == [(1, 1)]
    assert render.move_squares("pass") == [] and render.move_squares(None) == []
    assert render.move_numbers(["b3b2", "c1c2", "b2b1"]) == {(1, 1): 1, (1, 2): 2, (0, 1): 3}


def test_unknown_game_and_bad_notation():
    state = stub_state()
    env = NotationEnv("go", "whatever")
    assert render.text(state, env).splitlines()[0] == "whatever"  # falls back to the notation
    with pytest.raises(ValueError, match="no board renderer for game 'go'"):
        render.svg(state, env)
    with pytest.raises(ValueError, match="cannot render reversi"):  # cells not a rectangle
        render.BoardView("reversi", ((None, None, None), (None,)), 0)


def test_png(ttt, tmp_path):
    pytest.importorskip("matplotlib")
    state = ttt_after(ttt, ["b2"])
    path = tmp_path / "b.png"
    data = render.png(state, ttt, str(path), legal=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and path.read_bytes() == data


@pytest.mark.parametrize(
    "name,opts,n_pieces", [("reversi", {"size": 6}, 4), ("animal_shogi", {}, 8)]
)
def test_real_games(name, opts, n_pieces):
    if name not in jaxgames.registered_games():
        pytest.skip(f"{name} not merged yet")
    env = jaxgames.make(name, **opts)
    state = env.init(jax.random.PRNGKey(0))
    assert len(pieces(render.svg(state, env, legal=True))) == n_pieces
    out = render.text(state, env, legal=True)
    assert "a" in out.splitlines()[0 if name == "reversi" else 1].split()
    assert out.splitlines()[-1] == f"{render.side_names(env)[0]} to move"
    assert "legal: " in out


@pytest.mark.parametrize(
    "name,opts",
    [
        pytest.param(n, o, id=n + "".join(f"-{v}" for v in o.values()))
        for n, o in jaxgames.game_variants()
    ],
)
def test_every_registered_game_draws_its_view(name, opts):
    """Every game has a board view, and the renderers draw exactly its pieces (a new game is
    covered as soon as it is registered)."""
    env = jaxgames.make(name, **opts)
    state, key, history = env.init(jax.random.PRNGKey(0)), jax.random.PRNGKey(1), []
    for _ in range(6):
        if bool(state.terminated) or bool(state.truncated):
            break
        key, k = jax.random.split(key)
        a = int(jaxgames.random_action(k, state.legal_action_mask))
        history.append(env.action_to_text(state, a))
        state = env.step(state, a)
    view = env.board_view(state)
    svg = render.svg(state, env, history=history, legal=True, numbers=True)
    assert len(pieces(svg)) == view.pieces()
    in_hand = 0 if view.hands is None else len(view.hands[0]) + len(view.hands[1])
    assert len(by_class(svg, "hand-piece")) == in_hand
    assert len(by_class(svg, "last-move")) == (1 if render.move_squares(history[-1]) else 0)
    out = render.text(state, env, history=history, flip=render.default_flip(env, 1))
    assert out.splitlines()[-1] in ("game over", *(f"{n} to move" for n in env.side_names))
    assert f"last move: {len(history)}. {history[-1]}" in out


def test_render_has_no_per_game_code():
    """Games own their presentation: render.py names no game."""
    source = open(render.__file__).read()
    for name in jaxgames.registered_games():
        assert f'"{name}"' not in source and f"'{name}'" not in source


def test_flip_turns_the_board_round(ttt):
    env = ViewEnv("animal_shogi", shogi_position("gle/1c1/1C1/ELG b C 1"))
    out = render.text(stub_state(), env, flip=True).splitlines()
    assert out[0] == "sente in hand: C" and out[1].split() == ["c", "b", "a"]
    assert out[2].split() == ["4", "G", "L", "E"] and out[5].split() == ["1", "e", "l", "g"]
    assert out[6] == "gote in hand: -"
    assert (
        render.default_flip(env, 1)
        and not render.default_flip(env, 0)
        and not render.default_flip(ttt, 1)
    )
    plain, flipped = (ET.fromstring(render.svg(stub_state(), env, flip=f)) for f in (False, True))
    lion = [
        g
        for g in flipped.iter(SVG_NS + "g")
        if g.get("data-piece") == "lion" and g.get("data-owner") == "0"
    ]
    assert (
        len(lion) == 1 and float(lion[0].find(SVG_NS + "rect").get("y")) < 100
    )  # sente's lion at the top
    assert len(pieces(render.svg(stub_state(), env, flip=True))) == 8


def test_svg_game_panels(ttt):
    from jaxgames import records

    moves = ["a1", "b1", "a2", "b2", "a3"]
    env, states = records.replay(records.GameRecord(game="tic_tac_toe", moves=moves))
    root = ET.fromstring(render.svg_game(states, env, moves, every=2, columns=2))
    panels = [e for e in root.iter(SVG_NS + "svg") if e.get("class") == "panel"]
    # every second position and the final one: after 0, 2, 4 and 5 moves
    assert [sum(g.get("class") == "piece" for g in p.iter(SVG_NS + "g")) for p in panels] == [
        0,
        2,
        4,
        5,
    ]
    assert [t.text for t in root.iter(SVG_NS + "text") if t.get("class") == "caption"] == [
        "start",
        "2. b1",
        "4. b2",
        "5. a3",
    ]
    with pytest.raises(ValueError, match="one state per move"):
        render.svg_game(states[:-1], env, moves)


def test_click_targets_name_every_square_and_piece_in_hand():
    """``targets=True`` (the browser board's clicks): one target per square named like the
    notation, one per piece in hand with its drop letter and owner, drawn last (on top) and
    unpainted; without it, none."""
    env = ViewEnv("animal_shogi", shogi_position("gle/1C1/3/ELG w 2Cc 3"), ["b1b2"])
    state = stub_state(1, n_legal=1)
    svg = render.svg(state, env, targets=True)
    root = ET.fromstring(svg)
    assert list(root)[-1].get("class") == "targets"
    hits = by_class(svg, "target")
    squares = [g.get("data-square") for g in hits if g.get("data-square")]
    assert sorted(squares) == sorted(f"{f}{r}" for f in "abc" for r in "1234")
    drops = sorted((g.get("data-drop"), g.get("data-owner")) for g in hits if g.get("data-drop"))
    assert drops == [("C", "0"), ("C", "0"), ("C", "1")]
    assert {r.get("fill") for g in hits for r in g} == {"none"}
    # the target of b2 lies where the board draws b2's piece (the sente chick), flipped too
    for flip in (False, True):
        svg = render.svg(state, env, targets=True, flip=flip)
        (b2,) = [g for g in by_class(svg, "target") if g.get("data-square") == "b2"]
        rect = b2[0]
        x, y = float(rect.get("x")), float(rect.get("y"))
        chicks = [
            g for g in pieces(svg) if g.get("data-piece") == "chick" and g.get("data-owner") == "0"
        ]
        (tile,) = [t for g in chicks for t in g if t.tag == SVG_NS + "rect"]
        cx = float(tile.get("x")) + float(tile.get("width")) / 2
        cy = float(tile.get("y")) + float(tile.get("height")) / 2
        assert x < cx < x + float(rect.get("width")) and y < cy < y + float(rect.get("height"))
    assert not by_class(render.svg(state, env), "target")

"""Notebook display and animation: a state draws itself (``_repr_svg_`` for one game,
``_repr_html_`` for a batch, nothing while traced), a game record plays as an animated SVG whose
frames are exactly the per-position drawings, and ``jaxgames render`` writes them."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import jax
import pytest

import jaxgames
from jaxgames import cli, records, render
from jaxgames.games import game_variants

SVG_NS = "{http://www.w3.org/2000/svg}"
MOVES = ["b2", "a1", "b1", "c1", "b3"]  # X wins on the b file


@pytest.fixture(scope="module")
def game():
    record = records.GameRecord(game="tic_tac_toe", moves=MOVES, result="1-0")
    env, states = records.replay(record)
    return record, env, states


def frames(svg_text):
    root = ET.fromstring(svg_text)
    return [g for g in root.iter(SVG_NS + "g") if "frame" in g.get("class", "").split()]


def test_animation_frames_are_the_position_drawings(game):
    record, env, states = game
    anim = render.svg_animation(states, env, MOVES, seconds=0.5, hold=4)
    got = frames(anim)
    assert len(got) == len(states)
    assert [g.get("data-ply") for g in got] == [str(i) for i in range(len(states))]
    assert [g.get("data-move") for g in got] == [""] + MOVES
    assert ["last" in g.get("class").split() for g in got] == [False] * len(MOVES) + [True]
    for i, st in enumerate(states):  # one drawing code: each frame is render.svg's body
        body = "\n".join(render.svg(st, env, history=MOVES[:i]).splitlines()[2:-1])
        assert f">\n{body}\n</g>" in anim
    # one 0.5 s step per move, the last position held 4 steps: a (5 + 4) * 0.5 = 4.5 s loop,
    # each frame starting its cycle 0.5 s after the one before
    assert "4.500s step-end infinite" in anim and "@keyframes" in anim
    delays = [float(g.get("style").split(":")[1].rstrip("s")) for g in got]
    assert [round(b - a, 3) for a, b in zip(delays, delays[1:])] == [0.5] * len(MOVES)
    # class names are per drawing, so animations inlined side by side keep their own styles
    other = render.svg_animation(states[:3], env, MOVES[:2])
    assert got[0].get("class").split()[0] != frames(other)[0].get("class").split()[0]
    # a game with no moves is one still frame
    assert len(frames(render.svg_animation(states[:1], env, []))) == 1
    with pytest.raises(ValueError, match="one state per move"):
        render.svg_animation(states[:-1], env, MOVES)
    with pytest.raises(ValueError, match="seconds > 0"):
        render.svg_animation(states, env, MOVES, seconds=0)


def test_a_state_draws_itself_in_a_notebook(ttt):
    state = ttt.step(ttt.init(jax.random.PRNGKey(0)), 4)
    assert state._repr_svg_() == render.svg(state, ttt, legal=True)
    assert state._repr_html_() is None
    # the methods leave the pytree alone: same leaves, still jit/vmap-able
    assert len(jax.tree_util.tree_leaves(state)) == len(dataclasses.fields(state))
    assert int(jax.jit(ttt.step)(state, 0).step_count) == 2


def test_a_batch_shows_its_shape_and_first_boards(ttt):
    big = jax.vmap(ttt.init)(jax.random.split(jax.random.PRNGKey(0), 20))
    assert big._repr_svg_() is None
    assert "the first 8" in big._repr_html_() and big._repr_html_().count("<svg") == 8
    batch = jax.tree_util.tree_map(lambda x: x[:6].reshape(2, 3, *x.shape[1:]), big)
    html = batch._repr_html_()
    assert "a batch of shape (2, 3) (6 games of tic_tac_toe)" in html and html.count("<svg") == 6


def test_a_traced_state_shows_nothing(ttt):
    seen = []

    def show(state):
        seen.append((state._repr_svg_(), state._repr_html_()))
        return state

    jax.jit(show)(ttt.init(jax.random.PRNGKey(0)))
    jax.vmap(show)(jax.vmap(ttt.init)(jax.random.split(jax.random.PRNGKey(0), 2)))
    assert seen == [(None, None), (None, None)]


@pytest.mark.parametrize("name, options", game_variants())
def test_every_game_state_finds_its_env(name, options):
    """(Each game's drawing is tested in test_render; the notebook test draws reversi states.)"""
    env = jaxgames.make(name, **options)
    state = env.init(jax.random.PRNGKey(0))
    assert state.display_env().config == env.config
    assert state.display_env() is state.display_env()  # built once


def test_a_record_plays_as_an_animation(game):
    record, env, states = game
    assert record._repr_svg_() == render.svg_animation(states, env, MOVES)
    bad = records.GameRecord(game="tic_tac_toe", moves=["b2", "b2"])
    assert bad._repr_svg_() is None


def test_render_command(game, tmp_path, capsys):
    record, env, states = game
    path = tmp_path / "game.txt"
    records.save(str(path), record)
    assert cli.main(["render", str(path), "--move", "1"]) == 0
    assert "last move: 1. b2 (X)" in capsys.readouterr().out
    out = {k: tmp_path / f"{k}.svg" for k in ("animate", "svg", "grid")}
    args = [f"--{k}={v}" for k, v in out.items()]
    assert cli.main(["render", str(path), *args, "--every", "3", "--seconds", "0.3"]) == 0
    assert len(frames(out["animate"].read_text())) == len(states)
    assert "2.400s step-end" in out["animate"].read_text()  # (5 moves + 3 held) * 0.3 s
    assert out["svg"].read_text() == render.svg(states[-1], env, history=MOVES)
    assert out["grid"].read_text() == render.svg_game(states, env, MOVES, every=3)
    for bad, message in [
        (["--move", "9"], "--move 9 is outside the game's moves 0..5"),
        (["--every", "0"], "invalid --every=0"),
        (["--animate", str(tmp_path / "no" / "a.svg")], "does not exist"),
    ]:
        assert cli.main(["render", str(path), *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert cli.main(["render", str(tmp_path / "missing.txt")]) == 2
    assert capsys.readouterr().err.startswith("error: ")

"""Property tests of every game's text notation (seeded random fuzzing, so every run checks
the same cases):

* every state reached by random play - finished games included - round-trips exactly
  through ``to_text``/``from_text`` (the text, and the state fields the text records);
* ``from_text`` and ``text_to_action`` of random strings, of one-character mutations of valid
  texts and of non-strings raise nothing but ``ValueError``; what they accept reads back to
  the same text;
* the specific defects: a side to move ``XO``, Unicode digits, a reversi game over by two
  passes with empty squares left, an animal shogi draw by repetition.
"""

from __future__ import annotations

import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.core import random_policy

VARIANTS = [
    ("tic_tac_toe", {}),
    ("reversi", {"size": 4}),
    ("reversi", {"size": 6}),
    ("animal_shogi", {"max_steps": 40}),
]
IDS = [f"{name}{opts.get('size', opts.get('max_steps', ''))}" for name, opts in VARIANTS]

#: fields every game's text records, compared after a round trip
COMMON = ("current_player", "legal_action_mask", "terminated", "truncated")
#: plus these, per game (reversi's passes - step_count, passed - are not in its text)
RECORDED = {
    "tic_tac_toe": ("board", "step_count"),
    "reversi": ("mover", "opponent"),
    "animal_shogi": ("board", "hand", "step_count", "winner"),
}


def play_random_games(env, n_games: int, plies: int, seed: int, live_per_game: int = 2) -> list:
    """States (host copies) of ``n_games`` random games of up to ``plies`` plies: each game's
    last state (finished, unless ``plies`` cut it short) and ``live_per_game`` random earlier
    ones."""

    def game(key):
        def ply(state, k):
            nxt = env.step(state, random_policy(k, state))
            return nxt, nxt

        start = env.init(key)
        _, states = jax.lax.scan(ply, start, jax.random.split(key, plies))
        return jax.tree_util.tree_map(lambda s, x: jnp.concatenate([s[None], x]), start, states)

    keys = jax.random.split(jax.random.PRNGKey(seed), n_games)
    batch = jax.device_get(jax.jit(jax.vmap(game))(keys))  # [games, plies + 1]
    leaves, treedef = jax.tree_util.tree_flatten(batch)
    over = np.asarray(batch.terminated | batch.truncated)  # [games, plies + 1]
    rng = np.random.default_rng(seed)
    picks = []
    for g in range(n_games):
        ended = np.flatnonzero(over[g])
        last = int(ended[0]) if ended.size else plies  # later states repeat the finished one
        picks.append((g, last))
        if last:
            picks += [(g, int(t)) for t in rng.integers(0, last, live_per_game)]
    return [jax.tree_util.tree_unflatten(treedef, [x[g, t] for x in leaves]) for g, t in picks]


def assert_round_trip(env, state) -> None:
    text = env.to_text(state)
    back = env.from_text(text)
    assert env.to_text(back) == text
    for field in COMMON + RECORDED[env.name]:
        got, want = np.asarray(getattr(back, field)), np.asarray(getattr(state, field))
        assert np.array_equal(got, want), (text, field, got, want)


@pytest.fixture(scope="module", params=VARIANTS, ids=IDS)
def reached(request):
    """(env, states reached by random play: every game's end and some positions before it)."""
    name, options = request.param
    env = jaxgames.make(name, **options)
    plies = {"tic_tac_toe": 9, "reversi": 2 * options.get("size", 0) ** 2, "animal_shogi": 44}
    return env, play_random_games(env, 64, plies[name], seed=7)


def test_reached_states_round_trip(reached):
    env, states = reached
    assert any(bool(s.terminated) or bool(s.truncated) for s in states)
    for s in states:
        assert_round_trip(env, s)


def test_reversi_game_over_by_passes_round_trips():
    """Two passes end a game with empty squares left: it reads back finished, not with
    ``pass`` legal (3% of random 6x6 games used to)."""
    env = jaxgames.make("reversi", size=4)
    states = play_random_games(env, 64, 32, seed=1, live_per_game=0)
    boards = [env.to_text(s).split()[0] for s in states]
    over = [s for s, b in zip(states, boards) if bool(s.terminated) and set(b) == set("-XO")]
    assert over, "no game ended by two passes"
    for s in over:
        text = env.to_text(s)
        assert text.endswith(" end")
        back = env.from_text(text)
        assert bool(back.terminated) and not bool(back.legal_action_mask.any())
        assert_round_trip(env, s)
    # without the marker the same board is a live position, as before
    assert not bool(env.from_text(env.to_text(over[0])[: -len(" end")]).terminated)


def test_animal_shogi_repetition_draw_round_trips():
    env = jaxgames.make("animal_shogi")
    step = jax.jit(env.step)
    state = env.init(jax.random.PRNGKey(0))
    for move in ["c4c3", "a1a2", "c3c4", "a2a1"] * 2:
        state = jax.device_get(step(state, env.text_to_action(state, move)))
    assert bool(state.terminated) and int(state.winner) == -1  # the start, a third time
    assert env.to_text(state) == "gle/1c1/1C1/ELG b - 9 end"
    assert_round_trip(env, state)
    assert not bool(env.from_text("gle/1c1/1C1/ELG b - 9").terminated)


def test_illegal_move_end_round_trips(ttt):
    """A game ended by an illegal move (the board does not show it) keeps ``end``."""
    state = ttt.step(ttt.init(jax.random.PRNGKey(0)), 4)
    state = ttt.step(state, 4)  # O plays on the taken centre: O loses
    text = ttt.to_text(state)
    assert text == "....X.... O end" and bool(ttt.from_text(text).terminated)


# ------------------------------------------------------------------------------- fuzzing
ALPHABET = "XO.-xo 123456789/bwglecLGECHh+*-end\t٣３²"


def mutations(text: str, rng: random.Random, n: int) -> list[str]:
    """``n`` one-character mutations (replace, insert or delete) of ``text``."""
    out = []
    for _ in range(n):
        i = rng.randrange(len(text) + 1)
        c = rng.choice(ALPHABET + "".join(chr(rng.randrange(32, 0x3000)) for _ in range(3)))
        kind = rng.randrange(3)
        if kind == 0 and i < len(text):
            out.append(text[:i] + c + text[i + 1 :])
        elif kind == 1:
            out.append(text[:i] + c + text[i:])
        else:
            out.append(text[:i] + text[i + 1 :])
    return out


def only_value_errors(fn, arg):
    """``fn(arg)``, or ``None`` if it raised ``ValueError`` (any other exception fails)."""
    try:
        return fn(arg)
    except ValueError:
        return None


def test_from_text_raises_only_value_errors(reached):
    env, states = reached
    rng = random.Random(1)
    texts = [env.to_text(s) for s in rng.sample(states, min(len(states), 8))]
    cases = [m for t in texts for m in mutations(t, rng, 20)]
    cases += ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(40))) for _ in range(40)]
    for text in cases:
        state = only_value_errors(env.from_text, text)
        if state is not None:  # accepted: it reads back to its own text
            assert env.to_text(env.from_text(env.to_text(state))) == env.to_text(state)
    for bad in (None, 5, 3.0, b"X........ X", ["X"], {"a": 1}):
        with pytest.raises(ValueError, match="must be a string"):
            env.from_text(bad)


def test_text_to_action_raises_only_value_errors(reached):
    env, states = reached
    rng = random.Random(2)
    for state in rng.sample(states, min(len(states), 6)):
        legal = env.legal_actions(state)
        moves = [env.action_to_text(state, a) for a in legal] or ["a1", "pass", "b3b2"]
        for text in [m for mv in moves[:3] for m in mutations(mv, rng, 10)]:
            action = only_value_errors(lambda t: env.text_to_action(state, t), text)
            if action is not None:
                assert action in legal
        for bad in (None, 4, b"a1"):
            with pytest.raises(ValueError, match="must be a string"):
                env.text_to_action(state, bad)


# ------------------------------------------------------------------------------- the defects
@pytest.mark.parametrize("text", ["X........ XO", "X........ OX", "......... XX"])
def test_tic_tac_toe_side_to_move_is_one_letter(ttt, text):
    with pytest.raises(ValueError, match="side to move"):
        ttt.from_text(text)


@pytest.mark.parametrize("digit", ["٣", "３", "²", "߃"])
def test_unicode_digits_are_not_digits(ttt, digit):
    state = ttt.init(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="malformed square"):
        ttt.text_to_action(state, f"b{digit}")
    shogi = jaxgames.make("animal_shogi")
    start = shogi.init(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="move number"):
        shogi.from_text(f"gle/1c1/1C1/ELG b - {digit}")
    with pytest.raises(ValueError):
        shogi.text_to_action(start, f"b{digit}b2")
    with pytest.raises(ValueError, match="hands"):
        shogi.from_text(f"gle/1c1/1C1/ELG b {digit}C 1")
    reversi = jaxgames.make("reversi", size=4)
    with pytest.raises(ValueError, match="malformed square"):
        reversi.text_to_action(reversi.init(jax.random.PRNGKey(0)), f"a{digit}")


def test_leading_zeros_and_unicode_spaces_are_rejected(ttt):
    state = ttt.init(jax.random.PRNGKey(0))
    with pytest.raises(ValueError):
        ttt.text_to_action(state, "b02")
    with pytest.raises(ValueError):
        ttt.from_text("X........\u3000O")
    with pytest.raises(ValueError, match="move number"):
        jaxgames.make("animal_shogi").from_text("gle/1c1/1C1/ELG b - 01")
    assert ttt.text_to_action(state, " B2\t") == 4  # case and ASCII spacing are fine


def test_out_of_range_actions_are_never_wrapped(ttt):
    """``np.int64(2**40)`` used to wrap to action 0 and be played."""
    state = ttt.init(jax.random.PRNGKey(0))
    for bad in (np.int64(2**40), 2**40, 2**70, -1, np.uint32(2**32 - 1), np.int64(-(2**40))):
        with pytest.raises(jaxgames.IllegalActionError, match="out of range"):
            ttt.step_checked(state, bad)
        with pytest.raises(ValueError, match="out of range"):
            ttt.action_to_text(state, bad)
        out = ttt.step(state, bad)  # the illegal-action rule: the mover loses
        assert bool(out.terminated) and out.rewards.tolist() == [-1.0, 1.0]
        assert int(out.board[0]) == -1  # nothing was played on square 0
    # not actions at all: step and step_checked refuse the same values (step used to play True
    # and 1.0 as action 1, broadcast a (1, 1) array over the state, fail on None)
    not_actions = (2.5, 1.0, True, np.bool_(False), None, "4", [4], np.array([1, 2]))
    not_actions += (np.array([[4]]), jnp.float32(4.0), jnp.array([4]), jnp.bool_(True))
    for bad in not_actions:
        with pytest.raises(jaxgames.IllegalActionError, match="integer"):
            ttt.step_checked(state, bad)
        with pytest.raises(jaxgames.IllegalActionError, match="integer"):
            ttt.step(state, bad)
    # inside jit: dtype and shape are checked while tracing, the range on the value's own dtype
    wide = jax.jit(ttt.step)(state, jnp.asarray(np.uint32(2**32 - 1)))
    assert bool(wide.terminated) and wide.rewards.tolist() == [-1.0, 1.0]
    for bad in (jnp.float32(3.5), jnp.float32(4.0), jnp.array([4]), jnp.array([[4]])):
        with pytest.raises(jaxgames.IllegalActionError, match="integer"):
            jax.jit(ttt.step)(state, bad)
    assert not bool(jax.jit(ttt.step)(state, jnp.int32(4)).terminated)
    assert not bool(ttt.step(state, np.int8(4)).terminated)
    # a Python int past int32 as a jitted argument: jax.jit's own OverflowError (documented)
    with pytest.raises(OverflowError):
        jax.jit(ttt.step)(state, 2**32)

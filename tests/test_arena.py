"""Arena: Wilson intervals, known random-play rates, colour symmetry, openings."""

import jax
import pytest

from jaxgames.evaluation.arena import Record, arena, wilson_interval
from jaxgames.specs import make_opponent


@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
    ],
)
def test_wilson_known_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_wilson_errors_and_empty():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        Record(1, 1, 1).ci("elo")


def test_random_vs_random_known_rates(ttt):
    """Random tic-tac-toe: X wins 58.49%, O 28.81%, draws 12.70% (exact enumeration)."""
    rnd = make_opponent("random", ttt)
    r = arena(rnd, rnd, ttt, 4000, jax.random.PRNGKey(0))
    assert r.overall.games == 4000 and r.as_first.games == r.as_second.games == 2000
    lo, hi = r.overall.ci("score")
    assert lo < 0.5 < hi, str(r)
    lo, hi = r.as_first.ci("win")
    assert lo < 0.5849 < hi, str(r)
    lo, hi = r.as_second.ci("win")
    assert lo < 0.2881 < hi, str(r)
    assert 5 <= r.plies.min() and r.plies.max() <= 9


def test_swapping_players_mirrors_results(ttt):
    rnd, greedy = make_opponent("random", ttt), make_opponent("greedy", ttt)
    key = jax.random.PRNGKey(1)
    ab = arena(greedy, rnd, ttt, 600, key)
    ba = arena(rnd, greedy, ttt, 600, key)
    assert ab.swapped().overall == ba.overall
    assert ab.swapped().as_first == ba.as_first and ab.swapped().as_second == ba.as_second
    assert ab.overall.score > 0.75  # greedy crushes random
    assert ab.to_dict()["overall"]["games"] == 600


def test_random_openings(ttt):
    perfect = make_opponent("perfect", ttt)
    # every first move is a draw under perfect play
    r1 = arena(perfect, perfect, ttt, 600, jax.random.PRNGKey(2), opening_plies=1)
    assert r1.overall.draws == 600
    # two random plies can lose the game for O (e.g. X corner, O adjacent edge): decisive games
    # appear
    r2 = arena(perfect, perfect, ttt, 600, jax.random.PRNGKey(3), opening_plies=2)
    assert r2.overall.wins + r2.overall.losses > 0
    assert r2.overall.score == pytest.approx(0.5, abs=0.1)


def test_arena_rejects_bad_input(ttt):
    rnd = make_opponent("random", ttt)
    with pytest.raises(ValueError, match="n_games"):
        arena(rnd, rnd, ttt, 0, jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="opening_plies"):
        arena(rnd, rnd, ttt, 10, jax.random.PRNGKey(0), opening_plies=-1)


def test_unhashable_policy_objects(ttt):
    class Unhashable:  # e.g. a dataclass policy: __eq__ without __hash__
        __hash__ = None

        def __eq__(self, other):
            return isinstance(other, Unhashable)

        def __call__(self, key, state):
            return make_opponent("random", ttt)(key, state)

    r = arena(Unhashable(), make_opponent("perfect", ttt), ttt, 64, jax.random.PRNGKey(4))
    assert r.overall.wins == 0 and r.overall.games == 64


def test_snapshot_keeps_each_games_first_matching_state_and_changes_no_game(ttt):
    """play_games(snapshot=...) plays the same games as without it and returns, per game, the
    first state where the predicate holds (or the final state of a game where it never does)."""
    import jax.numpy as jnp
    import numpy as np

    from jaxgames.evaluation.arena import arena_layout, play_games

    rand = make_opponent("random", ttt)
    a_player, ids = arena_layout(64)
    key = jax.random.PRNGKey(7)
    play = jax.jit(lambda k: play_games(rand, rand, ttt, a_player, k, 2, None, ids))
    total, plies = play(key)
    seventh = jax.jit(
        lambda k: play_games(
            rand, rand, ttt, a_player, k, 2, None, ids, snapshot=lambda s: s.step_count >= 7
        )
    )
    total_s, plies_s, snaps = seventh(key)
    assert np.array_equal(total, total_s) and np.array_equal(plies, plies_s)
    plies, at = np.asarray(plies), np.asarray(snaps.step_count)
    assert np.all(at == np.minimum(plies, 7))  # a game over before ply 7 keeps its last state
    assert np.all(np.asarray(snaps.terminated) == (plies <= 7))
    assert 0 < np.sum(plies < 7) < 64 and np.sum(plies > 7) > 0  # both kinds occur
    marks = np.asarray(
        jnp.sum(snaps.observation != 0, axis=tuple(range(1, snaps.observation.ndim)))
    )
    assert np.all(marks[plies >= 7] == 7)  # seven marks on the board at ply 7

"""Match play: the arena (known random-play rates, colour symmetry, random openings), opening
sets, play_match from openings (both colours, the arena's loop), the paired loop's fallback,
score margins from Env.score, final states and snapshots."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import t as student_t

import jaxgames
from jaxgames.core import random_policy
from jaxgames.evaluation.match import (
    MAX_GAMES,
    MatchResult,
    arena,
    arena_layout,
    check_games,
    play_from,
    play_games,
    play_match,
)
from jaxgames.evaluation.openings import (
    FewOpenings,
    num_games,
    openings,
    openings_digest,
    position_keys,
)
from jaxgames.specs import make_opponent

N_OPEN = 8  # one opening-set size everywhere, so that compiled matches are shared


def first_legal(key, state):
    return jnp.argmax(state.legal_action_mask).astype(jnp.int32)


@pytest.fixture(scope="module")
def r4():
    return jaxgames.make("reversi", size=4)


# --------------------------------------------------------------------------- arena
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
    assert r.margin is None and r.states is None and "margin" not in str(r)


def test_swapping_players_mirrors_results(ttt):
    rnd, greedy = make_opponent("random", ttt), make_opponent("greedy", ttt)
    key = jax.random.PRNGKey(1)
    ab = arena(greedy, rnd, ttt, 600, key)
    ba = arena(rnd, greedy, ttt, 600, key)
    assert ab.swapped().overall == ba.overall
    assert ab.swapped().as_first == ba.as_first and ab.swapped().as_second == ba.as_second
    assert ab.overall.score > 0.75  # greedy crushes random
    assert ab.to_dict()["overall"]["games"] == 600
    # game k of each half shares its random numbers: the pair index is the opening
    assert np.array_equal(ab.opening, np.tile(np.arange(300), 2))


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
    with pytest.raises(ValueError, match="n_games=10000001: at most 10,000,000 games"):
        arena(rnd, rnd, ttt, MAX_GAMES + 1, jax.random.PRNGKey(0))  # refused before playing
    with pytest.raises(ValueError, match="openings=5000001: at most 5,000,000 openings"):
        check_games(MAX_GAMES // 2 + 1, None, "openings", games_each=2)
    with pytest.raises(ValueError, match="batch=0"):
        arena(rnd, rnd, ttt, 10, jax.random.PRNGKey(0), batch=0)
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
    first state where the predicate holds (or the final state of a game where it never does);
    the arena keeps the same snapshots, and its final states when asked."""
    rand = make_opponent("random", ttt)
    a_player, ids = arena_layout(64)
    key = jax.random.PRNGKey(7)
    play = jax.jit(lambda k: play_games(rand, rand, ttt, a_player, k, 2, None, ids))
    total, plies = play(key)
    at_seven = lambda s: s.step_count >= 7  # noqa: E731
    seventh = jax.jit(
        lambda k: play_games(rand, rand, ttt, a_player, k, 2, None, ids, snapshot=at_seven)
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
    r = arena(rand, rand, ttt, 64, key, 2, final_states=True, snapshot=at_seven)
    assert np.array_equal(r.plies, plies) and np.array_equal(r.states.step_count, plies)
    assert np.array_equal(r.snapshots.step_count, at) and np.all(r.states.terminated)


# --------------------------------------------------------------------------- openings
def test_openings_distinct_unfinished_deterministic(ttt, r4):
    for env, plies in ((ttt, 3), (r4, 2)):
        s = openings(env, 12, plies, seed=0)
        assert num_games(s) == 12
        assert len(set(position_keys(s))) == 12
        assert not np.any(s.terminated | s.truncated)
        assert np.all(s.step_count == plies)
        assert openings_digest(openings(env, 12, plies, seed=0)) == openings_digest(s)
        assert openings_digest(openings(env, 12, plies, seed=1)) != openings_digest(s)
        head = openings(env, 5, plies, seed=0)  # a prefix of the longer set
        assert position_keys(head) == position_keys(s)[:5]
    # 7 plies deep, many random playouts of tic-tac-toe are won at ply 5 or 7: none is kept
    s = openings(ttt, 60, 7, seed=0)
    assert not np.any(s.terminated | s.truncated) and np.all(s.step_count == 7)
    # tic-tac-toe has 72 positions after 2 plies: the rest are repeats, with a warning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = openings(ttt, 80, 2, seed=0)
    assert any("72 distinct" in str(x.message) for x in w)
    assert len(set(position_keys(s))) == 72 and num_games(s) == 80
    with pytest.raises(FewOpenings, match="only 72 distinct .* not 80") as e:
        openings(ttt, 80, 2, seed=0, repeat=False)
    assert e.value.distinct == 72
    with pytest.raises(ValueError):
        openings(ttt, 0, 2)


# --------------------------------------------------------------------------- play_match
def test_each_opening_is_played_with_both_colours(ttt):
    s = openings(ttt, N_OPEN, 3, seed=0)
    m = play_match(first_legal, first_legal, ttt, s, jax.random.PRNGKey(0))
    n = N_OPEN
    assert np.array_equal(m.opening, np.tile(np.arange(n), 2))
    assert np.array_equal(m.a_player, np.repeat([0, 1], n))
    assert m.as_first.games == m.as_second.games == n and m.margin is None
    # the same deterministic policy on both sides: each opening's two games are one game seen
    # from the two colours
    assert np.array_equal(m.outcomes[:n], -m.outcomes[n:])
    assert np.array_equal(m.plies[:n], m.plies[n:])
    assert np.all(m.plies >= 3)
    assert np.array_equal(m.unit_points(), np.ones(n))  # one win and one loss, or two draws
    with pytest.raises(ValueError, match="finished"):
        done = openings(ttt, 2, 3).replace(terminated=np.array([True, False]))
        play_match(first_legal, first_legal, ttt, done, jax.random.PRNGKey(0))


def test_play_match_is_the_arena_loop(ttt):
    """From n copies of the start position, play_match plays exactly the arena's 2n games."""
    key = jax.random.PRNGKey(4)
    start = jax.tree_util.tree_map(lambda x: np.stack([np.asarray(x)] * N_OPEN), ttt.init(key))
    m = play_match(random_policy, first_legal, ttt, start, jax.random.split(key)[1])
    a = arena(random_policy, first_legal, ttt, 2 * N_OPEN, key)
    assert np.array_equal(m.outcomes, a.outcomes) and np.array_equal(m.opening, a.opening)
    assert np.array_equal(m.a_player, a.a_player) and np.array_equal(m.plies, a.plies)
    assert (m.as_first, m.as_second, m.overall) == (a.as_first, a.as_second, a.overall)


def test_paired_loop_falls_back_when_a_pair_is_out_of_step(ttt):
    """play_from(paired=True) on pairs with the same side to move in both games (it must
    evaluate both policies on every game) plays the games that play_match plays from each
    half's states."""
    s = openings(ttt, N_OPEN, 3, seed=3)
    start = jax.tree_util.tree_map(lambda x: np.stack([np.asarray(x)] * N_OPEN), ttt.init(None))
    clash = jax.tree_util.tree_map(lambda x, y: np.concatenate([x, y]), s, start)
    a_player = jnp.repeat(jnp.array([0, 1], jnp.int32), N_OPEN)  # O to move in game i, X in i+n
    key = jax.random.PRNGKey(5)
    final, total = jax.jit(
        lambda st, k: play_from(random_policy, first_legal, ttt, st, a_player, k, paired=True)
    )(clash, key)
    m1 = play_match(random_policy, first_legal, ttt, s, key)  # game i: from s[i], A = player 0
    m2 = play_match(random_policy, first_legal, ttt, start, key)  # game n + i: start, A = 1
    total = np.asarray(total)
    mine = total[np.arange(2 * N_OPEN), a_player] - total[np.arange(2 * N_OPEN), 1 - a_player]
    assert np.array_equal(np.sign(mine[:N_OPEN]), m1.outcomes[:N_OPEN])
    assert np.array_equal(np.sign(mine[N_OPEN:]), m2.outcomes[N_OPEN:])
    assert np.array_equal(final.step_count[:N_OPEN], m1.plies[:N_OPEN])
    assert np.array_equal(final.step_count[N_OPEN:], m2.plies[N_OPEN:])


def test_games_in_batches_are_the_games_played_at_once(r4):
    """arena and play_match in batches (pieces of unequal length) play the
    games they play all at once: outcomes, plies, fingerprints, snapshots and final states in
    the same order; play_match keeps both games of an opening in one batch."""
    key = jax.random.PRNGKey(11)
    late = lambda s: s.step_count >= 6  # noqa: E731
    opts = dict(final_states=True, snapshot=late, fingerprint=True)
    whole = arena(random_policy, first_legal, r4, 2 * N_OPEN + 1, key, 1, **opts)
    s = openings(r4, N_OPEN, 2)
    paired = play_match(random_policy, first_legal, r4, s, key, **opts)
    for batch in (6, 2 * N_OPEN + 1):  # pieces of 6, 6, 5 games and of 3, 3, 2 openings
        part = arena(random_policy, first_legal, r4, 2 * N_OPEN + 1, key, 1, batch=batch, **opts)
        part_paired = play_match(random_policy, first_legal, r4, s, key, batch=batch, **opts)
        for a, b in ((whole, part), (paired, part_paired)):
            assert a.keys == b.keys and np.array_equal(a.outcomes, b.outcomes)
            assert np.array_equal(a.plies, b.plies) and np.array_equal(a.margin, b.margin)
            for x, y in zip(
                jax.tree.leaves((a.states, a.snapshots)), jax.tree.leaves((b.states, b.snapshots))
            ):
                assert np.array_equal(x, y)
    assert len(set(whole.keys)) > N_OPEN  # the random player makes the games differ
    # a game's final state keeps its last move's rewards (+1 to the winner), however long the
    # loop ran on after it
    last = whole.states.rewards[np.arange(2 * N_OPEN + 1), whole.a_player]
    assert np.array_equal(np.sign(last), whole.outcomes) and np.any(last != 0)


def test_reversi_margin_is_the_final_score_from_as_side(r4):
    """A game with a score gets A's final margin (Env.score of the final state at A's player
    id): in reversi the disc majority decides the game; the final states come when asked."""
    m = play_match(
        random_policy, first_legal, r4, openings(r4, N_OPEN, 2), jax.random.PRNGKey(0),
        final_states=True,
    )  # fmt: skip
    assert np.array_equal(np.sign(m.margin), m.outcomes)
    want = np.asarray(r4.score(m.states))[np.arange(2 * N_OPEN), m.a_player]
    assert np.array_equal(m.margin, want) and np.all(m.states.terminated)
    assert m.margin_stats()[0] == pytest.approx(float(np.mean(m.margin)))
    assert np.array_equal(m.swapped().margin, -m.margin)
    assert "A's margin" in str(m) and m.to_dict()["margin"]["mean"] == m.margin_stats()[0]


def test_margin_interval_by_hand():
    """margin_stats' interval is Student's t over the openings' mean margins: openings 0, 1, 2
    with margins 2, 4 | -1, 1 | 6, 6 have means 3, 0, 6, their mean 3 and sample standard
    deviation (ddof 1) 3, so the 95% half-width is t_{0.975, 2} * 3 / sqrt(3)."""
    m = MatchResult(
        outcomes=np.array([1, 1, -1, 1, 1, 1], np.int8),
        a_player=np.tile(np.array([0, 1], np.int32), 3),
        opening=np.array([0, 0, 1, 1, 2, 2], np.int32),
        plies=np.full(6, 10, np.int32),
        margin=np.array([2, 4, -1, 1, 6, 6], np.float32),
    )
    half = student_t.ppf(0.975, 2) * 3.0 / np.sqrt(3.0)  # 4.303 * sqrt(3)
    assert m.margin_stats() == pytest.approx((3.0, 3.0 - half, 3.0 + half), rel=1e-9)

"""Reversi: perft, differential tests (pure-Python reference, pgx), rules, text, shapes."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_reversi import RefReversi, perft

import jaxgames
from jaxgames.games import reversi as R

PERFT_8 = [4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288]  # depths 1..9


@functools.lru_cache(maxsize=None)
def env_of(size: int) -> R.Reversi:
    return jaxgames.make("reversi", size=size)


@functools.lru_cache(maxsize=None)
def expand_fn(size: int):
    """jit: batch of states [C] -> all children [C, A] (illegal ones are junk, masked later)."""
    env = env_of(size)
    actions = jnp.arange(env.num_actions, dtype=jnp.int32)
    return jax.jit(jax.vmap(lambda s: jax.vmap(lambda a: env.step(s, a))(actions)))


def batched_perft(size: int, depth: int, chunk: int = 2048) -> list[int]:
    """Leaf counts for depths 1..depth, expanding the frontier with the batched env."""
    env = env_of(size)
    frontier = jax.tree_util.tree_map(
        lambda x: np.asarray(x)[None], env.init(jax.random.PRNGKey(0))
    )
    counts = []
    for d in range(1, depth + 1):
        masks = np.asarray(frontier.legal_action_mask)
        counts.append(int(masks.sum()))
        if d == depth:
            break
        parts = []
        for i in range(0, len(masks), chunk):
            part = jax.tree_util.tree_map(lambda x: x[i : i + chunk], frontier)
            n = len(part.legal_action_mask)
            padded = jax.tree_util.tree_map(
                lambda x: np.concatenate([x, np.repeat(x[:1], chunk - n, 0)]), part
            )
            kids = jax.tree_util.tree_map(np.asarray, expand_fn(size)(padded))
            legal = np.asarray(part.legal_action_mask)
            parts.append(jax.tree_util.tree_map(lambda x: x[:n][legal], kids))
        frontier = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *parts)
    return counts


# ------------------------------------------------------------------------------- perft
def test_perft_8x8_batched(run_bound):
    assert batched_perft(8, 9) == PERFT_8


def test_perft_6x6_batched_matches_reference():
    expected = [perft(RefReversi(6), d) for d in range(1, 7)]
    assert expected[:4] == [4, 12, 56, 244]  # same as 8x8 until the edges are reached
    assert batched_perft(6, 6) == expected


def test_perft_4x4_batched_matches_reference():
    assert batched_perft(4, 7) == [perft(RefReversi(4), d) for d in range(1, 8)]


# ------------------------------------------------------------------------------- random games
def unpack_np(words: np.ndarray, cells: int) -> np.ndarray:
    bits = (words[..., :, None].astype(np.uint64) >> np.arange(32, dtype=np.uint64)) & 1
    return bits.reshape(*words.shape[:-1], -1)[..., :cells].astype(bool)


@functools.lru_cache(maxsize=None)
def random_games(size: int, games: int = 48, seed: int = 0):
    """Play ``games`` random games to the end with the jitted, vmapped env; returns numpy
    trajectories: dict of [T+1, G, ...] arrays (state before each action) and actions [T, G]."""
    env = env_of(size)
    steps = 2 * size * size

    def run(key):
        k0, k1 = jax.random.split(key)
        state = jax.vmap(env.init)(jax.random.split(k0, games))

        def body(state, k):
            a = jax.vmap(jaxgames.random_action)(
                jax.random.split(k, games), state.legal_action_mask
            )
            nxt = jax.vmap(env.step)(state, a)
            return nxt, (state, a)

        last, (traj, actions) = jax.lax.scan(body, state, jax.random.split(k1, steps))
        return jax.tree_util.tree_map(
            lambda t, x: jnp.concatenate([t, x[None]]), traj, last
        ), actions

    traj, actions = jax.jit(run)(jax.random.PRNGKey(seed))
    traj = jax.tree_util.tree_map(np.asarray, traj)
    assert traj.terminated[-1].all(), "some random games did not finish"
    return traj, np.asarray(actions)


def colour_cells(traj, t, g, cells):
    """0 empty / 1 black / 2 white per square from the mover/opponent bitboards."""
    mover = unpack_np(traj.mover[t, g], cells)
    opp = unpack_np(traj.opponent[t, g], cells)
    black, white = (mover, opp) if traj.current_player[t, g] == 0 else (opp, mover)
    return np.where(black, 1, np.where(white, 2, 0))


@pytest.mark.parametrize("size", [6, 8])
def test_random_games_match_reference(size):
    traj, actions = random_games(size)
    cells = size * size
    n_passes = n_ends = 0
    for g in range(actions.shape[1]):
        ref = RefReversi(size)
        for t in range(actions.shape[0] + 1):
            where = f"game {g} ply {t}"
            assert colour_cells(traj, t, g, cells).tolist() == ref.cells(), where
            assert traj.current_player[t, g] == ref.player, where
            assert np.flatnonzero(traj.legal_action_mask[t, g]).tolist() == ref.legal_actions(), (
                where
            )
            assert bool(traj.terminated[t, g]) == ref.done, where
            assert traj.rewards[t, g].tolist() == list(ref.rewards), where
            if ref.done:
                n_ends += 1
                break
            n_passes += int(actions[t, g]) == cells
            ref.play(int(actions[t, g]))
    assert n_ends == actions.shape[1]
    assert n_passes > 0, "no pass happened: the differential test did not cover passes"


def test_random_games_match_pgx():
    pytest.importorskip("pgx")
    import pgx
    from pgx import othello as pgx_othello

    traj, actions = random_games(8)
    games = actions.shape[1]
    penv = pgx.make("othello")

    def run(key, actions):
        state = jax.vmap(penv.init)(jax.random.split(key, games))

        def body(state, a):
            return jax.vmap(penv.step)(state, a), state

        last, traj = jax.lax.scan(body, state, actions)
        traj = jax.tree_util.tree_map(lambda t, x: jnp.concatenate([t, x[None]]), traj, last)
        # absolute board: +1 black, -1 white (pgx keeps it from the mover's side)
        board = jax.vmap(jax.vmap(pgx_othello._get_abs_board))(traj)
        return traj, board

    ptraj, pboard = jax.tree_util.tree_map(
        np.asarray, jax.jit(run)(jax.random.PRNGKey(1), jnp.asarray(actions))
    )
    black_id = ptraj.current_player[0]  # pgx picks the first player's id at random
    obs = np.asarray(traj.observation)  # [T+1, G, 8, 8, 2], our property on the whole trajectory
    assert obs.shape == (actions.shape[0] + 1, games, 8, 8, 2) and obs.dtype == np.float32
    for g in range(games):
        for t in range(actions.shape[0] + 1):
            where = f"game {g} ply {t}"
            ours = colour_cells(traj, t, g, 64)
            assert np.array_equal(
                np.where(ours == 1, 1, np.where(ours == 2, -1, 0)), pboard[t, g]
            ), where
            assert traj.terminated[t, g] == ptraj.terminated[t, g], where
            if not traj.terminated[t, g]:  # pgx sets an all-True mask on finished games
                assert np.array_equal(
                    traj.legal_action_mask[t, g], ptraj.legal_action_mask[t, g]
                ), where
            assert np.array_equal(obs[t, g], ptraj.observation[t, g]), where
            p_rewards = ptraj.rewards[t, g][[black_id[g], 1 - black_id[g]]]
            assert traj.rewards[t, g].tolist() == p_rewards.tolist(), where
            if traj.terminated[t, g]:
                break


# ------------------------------------------------------------------------------- rules
def test_start_position_and_first_moves():
    env = env_of(8)
    s = env.init(jax.random.PRNGKey(0))
    assert env.to_text(s) == "-" * 27 + "OX" + "-" * 6 + "XO" + "-" * 27 + " X"
    assert env.describe_legal(s) == "19 (d3), 26 (c4), 37 (f5), 44 (e6)"
    s = env.step(s, env.text_to_action(s, "d3"))
    assert env.to_text(s) == "-" * 19 + "X" + "-" * 7 + "XX" + "-" * 6 + "XO" + "-" * 27 + " O"
    assert int(s.current_player) == 1 and int(s.step_count) == 1
    assert env.describe_legal(s) == "18 (c3), 20 (e3), 34 (c5)"


@pytest.mark.parametrize("size", [4, 6, 16])
def test_start_position_other_sizes(size):
    env = env_of(size)
    s = env.init(None)
    c = size // 2
    text = env.to_text(s)
    assert text[(c - 1) * size + c - 1] == "O" and text[c * size + c] == "O"
    assert text[(c - 1) * size + c] == "X" and text[c * size + c - 1] == "X"
    assert text.count("-") == size * size - 4
    assert len(env.legal_actions(s)) == 4


def test_forced_pass_then_play():
    env = env_of(4)
    # X to move cannot close a line from a1 or a2; O can play a2 (flipping b2)
    s = env.from_text("-XXX-XOXXXXXXXXX X")
    assert env.legal_actions(s) == [16]
    assert env.action_to_text(s, 16) == "pass"
    s = env.step(s, env.text_to_action(s, "pass"))
    assert bool(s.passed) and not bool(s.terminated) and int(s.current_player) == 1
    assert s.rewards.tolist() == [0.0, 0.0]
    assert env.legal_actions(s) == [4]
    s = env.step(s, 4)
    assert not bool(s.passed) and env.to_text(s) == "-XXXOOOXXXXXXXXX X"


def test_double_pass_ends_game_with_disc_count():
    env = env_of(4)
    # nobody can place on b1: both pass, then O wins 14-1
    s = env.from_text("X-OOOOOOOOOOOOOO X")
    assert env.legal_actions(s) == [16]
    s = env.step(s, 16)
    assert env.legal_actions(s) == [16] and not bool(s.terminated)
    s = env.step(s, 16)
    assert bool(s.terminated) and s.rewards.tolist() == [-1.0, 1.0]
    assert not s.legal_action_mask.any()
    assert int(s.step_count) == 2 + 15 - 4


@pytest.mark.parametrize(
    "text, rewards",
    [
        ("-XXOXOOOOXXOXOOX X", [1.0, -1.0]),
        ("-XOOOOXOXOOXOOXO X", [-1.0, 1.0]),
        ("-OXXOOXXOOOXOOXO X", [0.0, 0.0]),
    ],
)
def test_full_board_ends_immediately(text, rewards):
    env = env_of(4)
    s = env.from_text(text)
    assert env.legal_actions(s) == [0]
    s = env.step(s, 0)
    assert bool(s.terminated) and s.rewards.tolist() == rewards and not s.legal_action_mask.any()
    assert "-" not in env.to_text(s)


@pytest.mark.parametrize("size", [8, 16])
def test_the_longest_run_of_opponent_discs_is_flipped(size):
    """A move at the end of rank 1 closes a line from a1 over size - 2 opponent discs (14 on
    16x16: the longest run any board has), so the occluded fill must reach that far; hand-made
    position: X a1, O b1 onwards, the last file of rank 1 empty, the usual centre."""
    env = env_of(size)
    rows = [["-"] * size for _ in range(size)]
    rows[0] = ["X"] + ["O"] * (size - 2) + ["-"]
    h = size // 2
    rows[h - 1][h - 1], rows[h - 1][h], rows[h][h - 1], rows[h][h] = "O", "X", "X", "O"
    s = env.from_text("".join("".join(r) for r in rows) + " X")
    last = size - 1  # the last square of rank 1
    assert bool(s.legal_action_mask[last])
    s = jax.jit(env.step)(s, last)
    assert env.to_text(s)[:size] == "X" * size
    assert s.rewards.tolist() == [0.0, 0.0]


def test_wipeout_ends_immediately():
    env = env_of(6)
    s = env.from_text("--------------XO----XX-------------- X")
    s = env.step(s, env.text_to_action(s, "e3"))
    assert bool(s.terminated) and s.rewards.tolist() == [1.0, -1.0]
    assert "O" not in env.to_text(s)[:-2]


def test_illegal_action_in_jit_loses_and_finished_game_is_noop():
    env = env_of(8)
    s = env.init(None)
    bad = jax.jit(env.step)(s, 0)
    assert bool(bad.terminated) and bad.rewards.tolist() == [-1.0, 1.0]
    again = jax.jit(env.step)(bad, 19)
    assert again.rewards.tolist() == [0.0, 0.0] and bool(again.terminated)
    with pytest.raises(jaxgames.IllegalActionError, match="legal actions: 19 \\(d3\\)"):
        env.step_checked(s, 64)


# ------------------------------------------------------------------------------- text
def test_text_round_trip_on_random_positions():
    traj, actions = random_games(6)
    env = env_of(6)
    for t in range(0, actions.shape[0], 7):
        for g in range(0, actions.shape[1], 5):
            if traj.terminated[t, g]:
                continue
            s = jax.tree_util.tree_map(lambda x: x[t, g], traj)
            text = env.to_text(s)
            back = env.from_text(text)
            assert env.to_text(back) == text
            assert np.array_equal(back.legal_action_mask, s.legal_action_mask)
            assert np.array_equal(back.mover, s.mover) and np.array_equal(back.opponent, s.opponent)
            assert np.array_equal(back.observation, s.observation)


def test_move_text_errors():
    env = env_of(8)
    s = env.init(None)
    for square in ("z9", "a9", "h9"):  # h9, a9: the rank just past the last
        with pytest.raises(ValueError, match="off the 8x8 board"):
            env.text_to_action(s, square)
    with pytest.raises(ValueError, match="malformed square"):
        env.text_to_action(s, "hello")
    with pytest.raises(ValueError, match="occupied by O"):
        env.text_to_action(s, "d4")
    with pytest.raises(ValueError, match="flips no discs; legal: 19 \\(d3\\), 26 \\(c4\\)"):
        env.text_to_action(s, "a1")
    with pytest.raises(ValueError, match="'pass': a placement is available"):
        env.text_to_action(s, "pass")
    assert env.text_to_action(s, " C4 ") == 26
    assert [env.action_to_text(s, a) for a in (0, 19, 63, 64)] == ["a1", "d3", "h8", "pass"]
    with pytest.raises(ValueError, match="out of range"):
        env.action_to_text(s, 65)
    over = env.step(s, 0)
    with pytest.raises(ValueError, match="the game is over"):
        env.text_to_action(over, "d3")


def test_from_text_errors():
    env = env_of(4)
    with pytest.raises(ValueError, match="board has 4 characters, expected 16"):
        env.from_text("---- X")
    with pytest.raises(
        ValueError, match="expected 16 board characters, a space, and the side to move"
    ):
        env.from_text("-----XO--OX-----")
    with pytest.raises(ValueError, match="has 15 characters"):
        env.from_text("-" * 15 + " X")
    with pytest.raises(ValueError, match="unknown board character"):
        env.from_text("-----XO--OX---.- X")
    with pytest.raises(ValueError, match="side to move"):
        env.from_text("-----XO--OX----- B")
    with pytest.raises(ValueError, match="centre squares b2, c2, b3, c3 can never be empty"):
        env.from_text("-----X---OX----- X")
    with pytest.raises(ValueError, match="malformed position"):  # nothing may follow 'end'
        env.from_text("X" * 16 + " O end 1")


def test_from_text_finished_positions():
    env = env_of(4)
    s = env.from_text("XXXXXXXXXOOOOOOO O")
    assert bool(s.terminated) and not s.legal_action_mask.any()
    s = env.from_text("-----XX--XX----- O")
    assert bool(s.terminated)


def test_from_text_marked_over_result_only_when_nobody_can_place():
    """A position marked ``end`` takes the disc majority's result only when neither side can
    place (the game ended with two passes); by hand on 4x4: in ``XXXXXOOOXOOO-OOO O`` O to
    move cannot place on a4 (every line from it runs into X or the edge) but X can (a4 closes
    b3, c2 on d1), so marked over it ended otherwise (an illegal move): no result, although O
    leads 9 to 6. In ``X-OOOOOOOOOOOOOO X`` nobody can place on b1: O wins 14 to 1."""
    env = env_of(4)
    open_ = env.from_text("XXXXXOOOXOOO-OOO O")
    assert env.legal_actions(open_) == [16] and not bool(open_.terminated)
    over = env.from_text("XXXXXOOOXOOO-OOO O end")
    assert bool(over.terminated) and over.rewards.tolist() == [0.0, 0.0]
    passed_out = env.from_text("X-OOOOOOOOOOOOOO X end")
    assert bool(passed_out.terminated) and passed_out.rewards.tolist() == [-1.0, 1.0]


# ------------------------------------------------------------------------------- API
@pytest.mark.parametrize("bad", [3, 5, 2, 18, 0, "8", 8.0, True])
def test_bad_size(bad):
    with pytest.raises(
        ValueError, match=r"must be an even integer in 4\.\.16, one of \[4, 6, 8, 10, 12, 14, 16\]"
    ):
        jaxgames.make("reversi", size=bad)


def test_make_and_config():
    env = jaxgames.make("reversi")
    assert (
        env.size == 8
        and env.config == {"size": 8}
        and repr(env) == "jaxgames.make('reversi', size=8)"
    )
    assert env.num_actions == 65 and env.observation_shape == (8, 8, 2) and env.num_players == 2
    assert jaxgames.make("reversi", size=6).num_actions == 37


def test_shapes_dtypes_under_vmap_and_jit_equivalence():
    env = env_of(6)
    batch = 5
    keys = jax.random.split(jax.random.PRNGKey(0), batch)
    s = jax.vmap(env.init)(keys)
    assert s.mover.shape == (batch, 2) and s.mover.dtype == jnp.uint32
    assert s.legal_action_mask.shape == (batch, 37) and s.legal_action_mask.dtype == jnp.bool_
    assert s.observation.shape == (batch, 6, 6, 2) and s.observation.dtype == jnp.float32
    assert s.rewards.shape == (batch, 2) and s.rewards.dtype == jnp.float32
    assert s.current_player.dtype == jnp.int32 and s.step_count.dtype == jnp.int32
    assert s.terminated.dtype == jnp.bool_ and s.truncated.dtype == jnp.bool_
    h = jax.vmap(env.heuristic)(s)
    assert h.shape == (batch,) and h.dtype == jnp.float32
    jstep = jax.jit(jax.vmap(env.step))
    key = jax.random.PRNGKey(1)
    for _ in range(3):  # jit(vmap(step)) == the eager, unbatched step game by game
        key, k = jax.random.split(key)
        a = jax.vmap(jaxgames.random_action)(jax.random.split(k, batch), s.legal_action_mask)
        jitted = jstep(s, a)
        for i in range(batch):
            one = env.step(jax.tree_util.tree_map(lambda x: x[i], s), a[i])
            jax.tree_util.tree_map(lambda x, y: np.testing.assert_array_equal(x[i], y), jitted, one)
        s = jitted
    done = jax.tree_util.tree_map(lambda x: x[0], s).replace(passed=jnp.bool_(True))
    done = done.replace(legal_action_mask=jnp.zeros(37, bool).at[36].set(True))
    out = jaxgames.step_autoreset(env, done, 36, keys[0])  # pass after a pass ends the game
    assert bool(out.terminated) and env.to_text(out.state) == env.to_text(env.init(None))


def test_observation_is_movers_view():
    env = env_of(8)
    s = env.step(env.init(None), 19)  # white to move
    obs = np.asarray(s.observation)
    text = env.to_text(s)[:64]
    assert np.array_equal(obs[..., 0].reshape(-1), np.array([c == "O" for c in text]))
    assert np.array_equal(obs[..., 1].reshape(-1), np.array([c == "X" for c in text]))


def test_heuristic():
    env = env_of(8)
    s = env.init(None)
    assert float(env.heuristic(s)) == 0.0
    s1 = env.step(s, 19)  # black has 4 interior discs, white 1; white to move
    assert float(env.heuristic(s1)) == -3.0
    corner = env.from_text("X" + "-" * 26 + "OX------XO" + "-" * 27 + " X")
    assert float(env.heuristic(corner)) == 10.0
    xsq = env.from_text("-" * 9 + "X" + "-" * 17 + "OX------XO" + "-" * 27 + " O")
    assert float(env.heuristic(xsq)) == 3.0  # the mover (O) is glad X sits on b2
    env4 = env_of(4)
    over = env4.from_text("XXXXXXXXXXXOOOOO O")
    assert float(env4.heuristic(over)) == -1000.0 - 6.0
    # an illegal move ends the game against the mover, whatever the discs say
    ahead = env.from_text("-" * 27 + "XX------XO" + "-" * 27 + " X")  # X to move, 3 discs to 1
    lost = env.step(ahead, 0)
    assert bool(lost.terminated) and lost.rewards.tolist() == [-1.0, 1.0]
    assert float(env.heuristic(lost)) == -1000.0 + 2.0


def test_score_is_each_players_disc_margin():
    """Env.score: float32[2] by player id, own discs minus the opponent's as raw counts (empty
    squares count for nobody), whoever is to move, with any batch axes; the counts of the
    board's text on random positions and finished games. Games without a score say so."""
    env = env_of(4)
    assert env.has_score()
    for text, want in (
        ("XXXXXXXXXXOOOOOO X", [4.0, -4.0]),  # full board, 10 black (player 0) to 6
        ("XXXXXXXXXXOOOOOO O", [4.0, -4.0]),  # the same board, O to move
        ("-OO--XOO-XX--O-- X", [-2.0, 2.0]),  # 3 X, 5 O, empties
    ):
        score = env.score(env.from_text(text))
        assert score.dtype == jnp.float32 and np.array_equal(score, want), text
    traj, _ = random_games(6)
    env = env_of(6)
    scores = np.asarray(env.score(traj))  # batch axes [T + 1, G]
    assert scores.shape == traj.current_player.shape + (2,)
    finals = 0
    for t in range(0, scores.shape[0], 3):
        for g in range(0, scores.shape[1], 4):
            board = env.to_text(jax.tree_util.tree_map(lambda x, t=t, g=g: x[t, g], traj))
            x, o = board.split()[0].count("X"), board.split()[0].count("O")
            assert np.array_equal(scores[t, g], [x - o, o - x]), board
            finals += bool(traj.terminated[t, g])
    assert finals > 10  # finished games among them
    for name in ("tic_tac_toe", "animal_shogi"):
        other = jaxgames.make(name)
        assert not other.has_score()
        with pytest.raises(NotImplementedError, match="no score margin"):
            other.score(other.init(jax.random.PRNGKey(0)))


@pytest.mark.parametrize("size", [4, 6, pytest.param(16, marks=pytest.mark.slow)])
def test_boards_play_to_the_end(size):
    env = env_of(size)
    batch = 4

    def run(key):
        s = jax.vmap(env.init)(jax.random.split(key, batch))

        def body(s, k):
            a = jax.vmap(jaxgames.random_action)(jax.random.split(k, batch), s.legal_action_mask)
            return jax.vmap(env.step)(s, a), None

        s, _ = jax.lax.scan(body, s, jax.random.split(key, 2 * size * size))
        return s

    s = jax.jit(run)(jax.random.PRNGKey(size))
    assert s.terminated.all()
    assert (np.abs(np.asarray(s.rewards).sum(-1)) == 0).all()
    discs = [
        env.to_text(jax.tree_util.tree_map(lambda x: x[i], s)).count("-") for i in range(batch)
    ]
    assert all(0 <= d < size * size - 4 for d in discs)


def test_pure_functions_accept_a_batch_axis():
    """legal_moves/flips/unpack are elementwise over leading axes (no vmap needed)."""
    traj, _ = random_games(6)
    geo = env_of(6).geo
    mover, opp = traj.mover[10], traj.opponent[10]  # [G, W]
    moves = R.stack_words(
        R.legal_moves(geo, R.split_words(jnp.asarray(mover)), R.split_words(jnp.asarray(opp)))
    )
    assert np.array_equal(np.asarray(R.unpack(moves, 36)), traj.legal_action_mask[10, :, :36])


@pytest.mark.parametrize("size", [4, 6, 8, 10, 16])
def test_pack_is_the_inverse_of_unpack(size):
    from jaxgames.games.bitboard import num_words, pack, pack_mask, stack_words, unpack

    bits = np.random.default_rng(size).random((5, size * size)) < 0.5
    words = stack_words(pack(jnp.asarray(bits), num_words(size)))
    np.testing.assert_array_equal(np.asarray(words), np.stack([pack_mask(b) for b in bits]))
    np.testing.assert_array_equal(np.asarray(unpack(words, size * size)), bits)

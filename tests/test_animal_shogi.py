"""Animal shogi: rules on hand-written positions, perft and random games against an independent
pure-Python reference (tests/reference_animal_shogi.py) and, when installed, against pgx."""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.games import animal_shogi as A

sys.path.insert(0, os.path.dirname(__file__))
import reference_animal_shogi as ref  # noqa: E402

START = "gle/1c1/1C1/ELG b - 1"
#: TEXT[player][action] move text (pure Python), for fast comparisons
TEXT = [
    [A.action_text(a, p) if A.action_parts(a, p)[1] >= 0 else None for a in range(132)]
    for p in (0, 1)
]


@pytest.fixture(scope="module")
def env():
    return jaxgames.make("animal_shogi")


@pytest.fixture(scope="module")
def step(env):
    return jax.jit(env.step)


@pytest.fixture(scope="module")
def heur(env):
    return jax.jit(env.heuristic)


def play(env, step, state, *moves):
    for m in moves:
        state = step(state, env.text_to_action(state, m))
    return state


def legal_texts(state):
    p = int(state.current_player)
    return {TEXT[p][a] for a in np.flatnonzero(np.asarray(state.legal_action_mask))}


# ----------------------------------------------------------------------------- basics
def test_start_position(env, key, heur):
    s = env.init(key)
    assert env.to_text(s) == START
    assert legal_texts(s) == {"b3b2", "b4a3", "b4c3", "c4c3"}
    assert env.num_actions == 132 and env.observation_shape == (4, 3, 24)
    assert int(s.current_player) == 0 and not bool(s.terminated) and not bool(s.truncated)
    assert float(heur(s)) == 0.0
    assert repr(env) == "jaxgames.make('animal_shogi', max_steps=256)"


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "256", None])
def test_bad_max_steps(bad):
    with pytest.raises(ValueError, match="max_steps"):
        jaxgames.make("animal_shogi", max_steps=bad)


def test_shapes_dtypes_under_vmap_and_jit_equivalence(env, step):
    keys = jax.random.split(jax.random.PRNGKey(1), 5)
    s = jax.jit(jax.vmap(env.init))(keys)
    assert s.board.shape == (5, 12) and s.board.dtype == jnp.int32
    assert (
        s.hand.shape == (5, 2, 3)
        and s.history.shape == (5, 256, 2)
        and s.history.dtype == jnp.uint32
    )
    assert s.legal_action_mask.shape == (5, 132) and s.legal_action_mask.dtype == jnp.bool_
    assert s.observation.shape == (5, 4, 3, 24) and s.observation.dtype == jnp.float32
    assert s.rewards.shape == (5, 2) and s.rewards.dtype == jnp.float32
    assert jax.jit(jax.vmap(env.heuristic))(s).shape == (5,)
    actions = jnp.array([7, 11, 22, 94, 7], jnp.int32)
    batched = jax.jit(jax.vmap(env.step))(s, actions)
    single = step(env.init(keys[0]), jnp.int32(94))  # vmap(jit) == jit(vmap)
    for a, b in zip(jax.tree_util.tree_leaves(single), jax.tree_util.tree_leaves(batched)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b)[3])
    out = jax.jit(jax.vmap(lambda st, a, k: jaxgames.step_autoreset(env, st, a, k)))(
        s, actions, keys
    )
    assert out.state.step_count.shape == (5,)


def test_heuristic(env, step, key, heur):
    s = play(env, step, env.init(key), "b3b2")
    assert float(heur(s)) == -2.0  # gote to move: sente has a chick on board + one in hand
    s = env.from_text("l1h/1g1/1E1/1L1 b Ce 1")  # sente E3 C1; gote H5 G4 e3
    assert float(heur(s)) == 4.0 - 12.0
    lost = step(env.init(key), 0)  # an illegal action ends the game: the mover lost
    assert bool(lost.terminated) and float(heur(lost)) == -1000.0


def test_observation_mover_frame(env, step, key):
    s = play(env, step, env.init(key), "b3b2")  # sente captures: gote to move, sente has C in hand
    obs = np.asarray(s.observation)
    # gote's view is rotated: gote's lion (absolute b1) is on the mover's home rank, square b4
    assert obs[3, 1, 0] == 1 and obs[0, 1, 5] == 1  # own lion b4, opponent lion b1 (mover frame)
    assert obs[2, 1, 8] == 1  # sente's chick on absolute b2 -> mover-frame b3, opponent chick plane
    assert obs[..., 10].sum() == 12 - 7
    assert np.all(obs[..., 11:17] == 0)  # gote's hand is empty
    assert np.all(obs[..., 21] == 1) and np.all(obs[..., 22] == 0)  # opponent: one chick in hand
    assert np.all(obs[..., 23] == 0)
    np.testing.assert_array_equal(obs.sum(axis=-1)[..., None] >= 1, np.ones((4, 3, 1), bool))


# ----------------------------------------------------------------------------- rules
def test_promotion_and_capture_of_hen_returns_chick(env, step, heur):
    s = env.from_text("l2/1C1/3/L2 b - 1")
    s = play(env, step, s, "b2b1")
    assert env.to_text(s) == "lH1/3/3/L2 w - 2"
    # gote promotes too (moving down); the hen is captured by sente's lion and returns as a chick
    s = env.from_text("2l/3/1c1/L2 w - 2")
    s = play(env, step, s, "b3b4")
    assert env.to_text(s) == "2l/3/3/Lh1 b - 3"
    s = play(env, step, s, "a4b4")
    assert env.to_text(s) == "2l/3/3/1L1 w C 4"
    assert float(heur(s)) == -1.0


def test_drops_anywhere_and_far_rank_chick_is_frozen(env, step):
    s = env.from_text("l2/3/3/2L b C 1")
    drops = {t for t in legal_texts(s) if "*" in t}
    # every empty square, including the far rank (a chick dropped there can never move)
    empties = {f"C*{f}{r}" for f in "abc" for r in "1234"} - {"C*a1", "C*c4"}
    assert drops == empties
    s = play(env, step, s, "C*c1")
    assert env.to_text(s) == "l1C/3/3/2L w - 2"
    s = play(env, step, s, "a1a2")
    assert not any(t.startswith("c1") for t in legal_texts(s))  # the far-rank chick never moves
    assert "c4c3" in legal_texts(s)


def test_gote_two_chicks_on_a_file_and_drop_letters(env, step):
    s = env.from_text("l2/1c1/3/2L w c 2")
    assert "C*b3" in legal_texts(s)
    s = play(env, step, s, "c*b3")  # lowercase letters accepted
    assert env.to_text(s) == "l2/1c1/1c1/2L b - 3"


def test_self_check_is_illegal(env, step):
    # gote giraffe on b2 attacks a2, c2, b1, b3: sente's lion on b4 may not step to b3
    s = env.from_text("l2/1g1/3/1L1 b E 1")
    moves = legal_texts(s)
    assert "b4b3" not in moves and {"b4a3", "b4c3", "b4a4", "b4c4"} <= moves
    # in check from b3: only lion moves to unattacked squares (not a3/c3, which the giraffe
    # also attacks) and captures of the checker; no drops
    s = env.from_text("l2/3/1g1/1LE b C 1")
    moves = legal_texts(s)
    assert moves == {"b4a4", "b4b3", "c4b3"}
    with pytest.raises(ValueError, match="lion"):
        env.text_to_action(s, "C*c1")


def test_try_wins_and_attacked_try_is_illegal(env, step, heur):
    s = env.from_text("2l/L2/3/3 b - 1")
    assert "a2a1" in legal_texts(s) and "a2b1" not in legal_texts(s)  # b1 is attacked by c1's lion
    s = play(env, step, s, "a2a1")
    assert bool(s.terminated) and not bool(s.truncated) and int(s.winner) == 0
    np.testing.assert_array_equal(s.rewards, [1.0, -1.0])
    assert not s.legal_action_mask.any()
    assert float(heur(s)) == -1000.0  # gote to move, has lost
    # the finished try also parses as a terminal position
    t = env.from_text(env.to_text(s))
    assert bool(t.terminated) and int(t.winner) == 0
    # gote's try
    s = play(env, step, env.from_text("3/3/2l/L2 w - 2"), "c3c4")
    np.testing.assert_array_equal(s.rewards, [-1.0, 1.0])


def test_caught_lion_loses(env, step, heur):
    s = env.from_text("l2/2E/1E1/2L b G 1")
    s = play(env, step, s, "G*a2")
    assert bool(s.terminated) and int(s.winner) == 0
    np.testing.assert_array_equal(s.rewards, [1.0, -1.0])
    game = ref.Game("l2/2E/1E1/2L b G 1")
    game.play("G*a2")
    assert game.result == ("win", 0)
    # a position with no legal move parses as lost for the mover
    t = env.from_text(env.to_text(s))
    assert bool(t.terminated) and int(t.winner) == 0 and float(heur(t)) == -1000.0


def test_repetition_draw(env, step, key, heur):
    shuffle = ["c4c3", "a1a2", "c3c4", "a2a1"]
    s = play(env, step, env.init(key), *shuffle)
    assert env.to_text(s) == "gle/1c1/1C1/ELG b - 5" and int(s.repetitions) == 1
    assert float(s.observation[0, 0, 23]) == 1.0
    s = play(env, step, s, *shuffle[:3])
    assert not bool(s.terminated)
    s = play(env, step, s, shuffle[3])
    assert bool(s.terminated) and not bool(s.truncated) and int(s.repetitions) == 2
    np.testing.assert_array_equal(s.rewards, [0.0, 0.0])
    assert int(s.winner) == -1 and not s.legal_action_mask.any() and float(heur(s)) == 0.0


def test_repetition_needs_same_hands_and_side(env, step):
    # the same board with a different side to move is a different position
    s = env.from_text("l2/3/3/2L b - 1")
    s = play(env, step, s, "c4c3", "a1a2", "c3c4", "a2a1", "c4b4", "a1b1", "b4c4", "b1a1")
    assert int(s.repetitions) == 2 and bool(s.terminated)
    s = env.from_text("l2/3/3/2L b - 1")
    s = play(env, step, s, "c4b4", "a1b1", "b4c4", "b1a1")  # back, 2nd time
    assert int(s.repetitions) == 1


def test_cap_truncates(key):
    env = jaxgames.make("animal_shogi", max_steps=4)
    step = jax.jit(env.step)
    s = play(env, step, env.init(key), "c4c3", "a1a2", "c3c4")
    assert not bool(s.truncated)
    s = play(env, step, s, "a2a1")
    assert bool(s.truncated) and not bool(s.terminated) and int(s.step_count) == 4
    np.testing.assert_array_equal(s.rewards, [0.0, 0.0])
    assert not s.legal_action_mask.any()
    nxt = step(s, 7)  # finished games are no-ops
    assert int(nxt.step_count) == 4
    assert env.to_text(s) == "gle/1c1/1C1/ELG b - 5"
    t = env.from_text("gle/1c1/1C1/ELG b - 5")  # the capped game parses as truncated
    assert bool(t.truncated) and not bool(t.terminated) and not t.legal_action_mask.any()
    with pytest.raises(ValueError, match="cap"):
        env.from_text("gle/1c1/1C1/ELG b - 7")
    # a rule ending on the capped ply wins over the cap
    env2 = jaxgames.make("animal_shogi", max_steps=3)
    s = env2.from_text("2l/L2/3/3 w - 2")
    s = play(env2, jax.jit(env2.step), s, "c1c2", "a2a1")
    assert bool(s.terminated) and not bool(s.truncated) and int(s.winner) == 0


# ----------------------------------------------------------------------------- text
@pytest.mark.parametrize(
    "text, match",
    [
        ("gle/1c1/1C1/ELG b -", "4 space-separated"),
        ("gle/1c1/1C1 b - 1", "4 ranks"),
        ("gle/1c1/1C1/ELX b - 1", "unknown character 'X'"),
        ("gle/1c/1C1/ELG b - 1", "rank 2"),
        ("gle/1c11/1C1/ELG b - 1", "rank 2"),
        ("gle/1c1/1C1/ELG x - 1", "side to move"),
        ("gle/1c1/1C1/ELG b 2 1", "hands"),
        ("gle/3/1C1/ELG b H 1", "hen cannot be in hand"),
        ("gle/3/1C1/ELG b Z 1", "unknown hand piece"),
        ("gle/3/1C1/ELG b CC 1", "twice"),
        ("gle/1c1/1C1/ELG b - 0", "move number"),
        ("gle/1c1/1C1/ELG b - x", "move number"),
        ("gle/1c1/1C1/ELG b - 2", "sente moves on odd"),
        ("gge/1c1/1C1/ELG b - 1", "gote must have exactly one lion"),
        ("gle/1c1/1C1/ELG b C 1", "3 chicks"),
        ("2l/2G/3/L2 b - 1", "could capture the opponent's lion"),
        ("L1l/3/3/3 b - 1", "already has its lion on the far rank"),
    ],
)
def test_from_text_errors(env, text, match):
    with pytest.raises(ValueError, match=match):
        env.from_text(text)


def test_text_to_action_errors(env, step, key):
    s = env.init(key)
    for text, match in [
        ("b3", "malformed move"),
        ("d3b2", "off the"),
        ("b3b1", "not a one-step move"),
        ("a3a2", "no piece on a3"),
        ("b2b3", "no piece on b2"),
        ("b4b3", "own piece"),
        ("a4a3", "cannot move that way"),
        ("C*a3", "no C in hand"),
        ("L*a3", "only G, E or C"),
        ("b3b2+", "'\\+' only marks"),
    ]:
        with pytest.raises(ValueError, match=match):
            env.text_to_action(s, text)
    s = play(env, step, env.from_text("l2/1C1/3/L2 b - 1"), "b2b1+")  # '+' accepted on promotion
    assert env.to_text(s) == "lH1/3/3/L2 w - 2"
    with pytest.raises(ValueError, match="off the board"):
        env.action_to_text(env.init(key), 0)  # N from a1 (mover frame) leaves the board


def test_action_helpers_agree(env):
    for p in (0, 1):
        f, t, k = jax.vmap(A.decode_action, in_axes=(0, None))(jnp.arange(132), p)
        for a in range(132):
            assert A.action_parts(a, p) == (int(f[a]), int(t[a]), int(k[a]))
            fr, to, kind = A.action_parts(a, p)
            if kind >= 0:
                assert A.encode_drop(kind, to, p) == a
            elif to >= 0:
                assert A.encode_move(fr, to, p) == a


# ----------------------------------------------------------------------------- random games
def rollout(env, n_games, seed, length):
    """n_games random games in lockstep in one jitted scan; per-ply numpy trajectories."""

    def body(carry, _):
        s, key = carry
        key, k = jax.random.split(key)
        a = jaxgames.random_action(k, s.legal_action_mask)
        nxt = jax.vmap(env.step)(s, a)
        rec = dict(
            board=s.board,
            hand=s.hand,
            player=s.current_player,
            mask=s.legal_action_mask,
            action=a,
            done=s.terminated | s.truncated,
            n=s.step_count,
            term=nxt.terminated,
            trunc=nxt.truncated,
            winner=nxt.winner,
            rewards=nxt.rewards,
            reps=nxt.repetitions,
        )
        return (nxt, key), rec

    @jax.jit
    def run(key):
        s = jax.vmap(env.init)(jax.random.split(key, n_games))
        return jax.lax.scan(body, (s, key), None, length=length)[1]

    return jax.tree_util.tree_map(np.asarray, run(jax.random.PRNGKey(seed)))


def check_against_reference(traj, max_steps):
    """Replay every game in the reference; compare positions, legal sets and outcomes per ply."""
    stats = {"win": 0, "draw": 0, "truncated": 0, "plies": 0}
    n_games = traj["action"].shape[1]
    for g in range(n_games):
        game = ref.Game(max_steps=max_steps)
        for t in range(traj["action"].shape[0]):
            if traj["done"][t, g]:
                break
            p = int(traj["player"][t, g])
            assert p == game.turn
            text = A.position_text(traj["board"][t, g], traj["hand"][t, g], p, traj["n"][t, g])
            assert text == game.sfen(), (g, t)
            ours = {TEXT[p][a] for a in np.flatnonzero(traj["mask"][t, g])}
            assert ours == game.legal_moves(), (g, t, text)
            game.play(TEXT[p][int(traj["action"][t, g])])
            stats["plies"] += 1
            term, trunc, winner = traj["term"][t, g], traj["trunc"][t, g], int(traj["winner"][t, g])
            if game.result is None:
                assert not term and not trunc, (g, t)
            elif game.result[0] == "win":
                assert term and not trunc and winner == game.result[1], (g, t)
                assert list(traj["rewards"][t, g]) == ([1.0, -1.0] if winner == 0 else [-1.0, 1.0])
            elif game.result[0] == "draw":
                assert term and not trunc and winner == -1 and traj["reps"][t, g] == 2, (g, t)
            else:
                assert trunc and not term and winner == -1, (g, t)
            if game.result is not None:
                stats[game.result[0]] += 1
        else:
            assert game.result is not None, "scan too short"
    return stats


@pytest.mark.parametrize("max_steps, n_games, seed", [(256, 150, 0), (24, 150, 1)])
def test_random_games_match_reference(max_steps, n_games, seed):
    env = jaxgames.make("animal_shogi", max_steps=max_steps)
    traj = rollout(env, n_games, seed, max_steps)
    stats = check_against_reference(traj, max_steps)
    assert stats["win"] > 0 and stats["win"] + stats["draw"] + stats["truncated"] == n_games
    if max_steps == 24:
        assert stats["truncated"] > 0


@pytest.mark.slow
def test_a_thousand_random_games_match_reference(run_bound):
    env = jaxgames.make("animal_shogi")
    total = {}
    for seed in range(2):  # 1000 games, ~55k plies
        stats = check_against_reference(rollout(env, 500, 100 + seed, 256), 256)
        total = {k: total.get(k, 0) + v for k, v in stats.items()}
    assert total["draw"] > 0, total


def test_text_round_trips_on_random_positions(env):
    traj = rollout(env, 8, 3, 40)
    for t in range(0, 40, 3):
        for g in range(8):
            if traj["done"][t, g]:
                continue
            p = int(traj["player"][t, g])
            text = A.position_text(traj["board"][t, g], traj["hand"][t, g], p, traj["n"][t, g])
            s = env.from_text(text)
            assert env.to_text(s) == text
            np.testing.assert_array_equal(np.asarray(s.legal_action_mask), traj["mask"][t, g])
            for a in np.flatnonzero(traj["mask"][t, g]):
                assert env.text_to_action(s, env.action_to_text(s, int(a))) == a


# ----------------------------------------------------------------------------- perft
def env_perft(env, depth, chunk=512):
    """Leaf counts at depths 1..depth from the start, with the batched JAX env."""
    step = jax.jit(jax.vmap(env.step))
    states = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], env.init(jax.random.PRNGKey(0)))
    counts = []
    for d in range(depth):
        idx, act = np.nonzero(states.legal_action_mask)
        counts.append(len(idx))
        if d == depth - 1:
            break
        parts = []
        for i in range(0, len(idx), chunk):
            sel, a = idx[i : i + chunk], act[i : i + chunk]
            pad = chunk - len(sel)
            sel, a = np.pad(sel, (0, pad)), np.pad(a, (0, pad))
            batch = jax.tree_util.tree_map(lambda x: x[sel], states)
            out = step(batch, jnp.asarray(a, jnp.int32))
            parts.append(jax.tree_util.tree_map(lambda x: np.asarray(x)[: chunk - pad], out))
        states = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *parts)
    return counts


def test_perft_matches_reference(env):
    depth = 6
    ours = env_perft(env, depth)
    game = ref.Game()
    assert ours == [ref.perft(game, d) for d in range(1, depth + 1)]
    assert ours[:4] == [4, 13, 67, 398]


# ----------------------------------------------------------------------------- pgx
def test_against_pgx():
    """Lockstep random games against pgx v2: identical legal-action sets at every ply and
    identical wins/losses. Differences: pgx ends at 256 steps with ``terminated`` where we
    truncate, and its Zobrist bookkeeping misses some repeated positions (e.g. it XORs hand keys
    on non-captures), so a game's comparison stops at a repetition draw claimed by either."""
    pgx = pytest.importorskip("pgx")
    env = jaxgames.make("animal_shogi")
    penv = pgx.make("animal_shogi")
    # our (direction, mover square) -> pgx (direction, square); pgx square = (2 - col) * 4 + row,
    # pgx directions (dx, dy) = (-d_col, d_row); drops: ours G E C, pgx chick(0) elephant(1)
    # giraffe(2)
    pgx_dirs = list(zip([-1, -1, -1, 0, 0, 1, 1, 1], [-1, 0, 1, -1, 1, -1, 0, 1]))
    perm = np.zeros(132, np.int32)
    for a in range(132):
        if a < 96:
            d, s = divmod(a, 12)
            dr, dc = A.DIRECTIONS[d]
            r, c = divmod(s, 3)
            perm[a] = pgx_dirs.index((-dc, dr)) * 12 + (2 - c) * 4 + r
        else:
            k, t = divmod(a - 96, 12)
            r, c = divmod(t, 3)
            perm[a] = (8 + [2, 1, 0][k]) * 12 + (2 - c) * 4 + r
    assert sorted(perm) == list(range(132))
    perm = jnp.asarray(perm)
    n_games, length = 128, 256

    def body(carry, _):
        s, ps, key = carry
        key, k = jax.random.split(key)
        a = jaxgames.random_action(k, s.legal_action_mask)
        nxt = jax.vmap(env.step)(s, a)
        pnxt = jax.vmap(penv.step)(ps, perm[a])
        rec = dict(
            mask=s.legal_action_mask,
            pmask=ps.legal_action_mask[:, perm],
            done=s.terminated | s.truncated,
            term=nxt.terminated,
            trunc=nxt.truncated,
            winner=nxt.winner,
            reps=nxt.repetitions,
            pterm=pnxt.terminated,
            prew=pnxt.rewards,
            pfirst=ps.current_player ^ ps._turn,
            prep=pnxt._rep_history[:, 0],
        )
        return (nxt, pnxt, key), rec

    @jax.jit
    def run(key):
        keys = jax.random.split(key, n_games)
        return jax.lax.scan(
            body, (jax.vmap(env.init)(keys), jax.vmap(penv.init)(keys), key), None, length=length
        )[1]

    tr = jax.tree_util.tree_map(np.asarray, run(jax.random.PRNGKey(7)))
    compared = ended = 0
    for g in range(n_games):
        for t in range(length):
            if tr["done"][t, g]:
                break
            np.testing.assert_array_equal(
                tr["mask"][t, g], tr["pmask"][t, g], err_msg=f"game {g} ply {t}"
            )
            compared += 1
            if tr["reps"][t, g] >= 2 or tr["prep"][t, g] >= 2:
                break  # pgx's repetition hash misses some repeats: stop at a claimed draw
            first = tr["pfirst"][t, g]  # pgx player id of the side that moved first (our player 0)
            prew = tr["prew"][t, g][[first, 1 - first]]
            if tr["term"][t, g]:
                assert tr["pterm"][t, g]
                np.testing.assert_array_equal(
                    prew, [1.0, -1.0] if tr["winner"][t, g] == 0 else [-1.0, 1.0]
                )
                ended += 1
            elif tr["trunc"][t, g]:
                assert tr["pterm"][t, g] and not prew.any()  # pgx: terminated draw at 256
            else:
                assert not tr["pterm"][t, g], f"game {g} ply {t}"
    assert compared > 3000 and ended > 50

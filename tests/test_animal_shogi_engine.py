"""Animal shogi alpha-beta engine: legality, exact terminal play, and root values equal to an
independent brute-force negamax over the same evaluation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.evaluation import animal_shogi_engine as E
from jaxgames.games.animal_shogi.rules import GIRAFFE, LION


@pytest.fixture(scope="module")
def env():
    return jaxgames.make("animal_shogi")


def random_states(env, key, n, max_plies):
    """n live states after 0..max_plies uniformly random plies (both sides to move)."""
    k_len, k_play = jax.random.split(key)
    lengths = jax.random.randint(k_len, (n,), 0, max_plies + 1)

    def one(k, length):
        def body(t, s):
            a = jaxgames.random_action(jax.random.fold_in(k, t), s.legal_action_mask)
            nxt = env.step(s, a)
            keep = (t < length) & ~(nxt.terminated | nxt.truncated)
            return jax.tree_util.tree_map(lambda x, y: jnp.where(keep, x, y), nxt, s)

        return jax.lax.fori_loop(0, max_plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(k_play, n), lengths)


SHUFFLE = ["c4c3", "a1a2", "c3c4", "a2a1", "c4c3", "a1a2", "c3c4"]  # a2a1 next: 3rd occurrence


@pytest.fixture(scope="module")
def states(env):
    """48 live states: a repetition position first, then random ones."""
    s, step = env.init(jax.random.PRNGKey(0)), jax.jit(env.step)
    for m in SHUFFLE:
        s = step(s, env.text_to_action(s, m))
    rand = random_states(env, jax.random.PRNGKey(7), 47, 24)
    return jax.tree_util.tree_map(lambda x, y: jnp.concatenate([x[None], y]), s, rand)


@pytest.fixture(scope="module")
def policies(env):
    return {d: jax.jit(jax.vmap(E.animal_shogi_engine_policy(env, d))) for d in (3,)}


def flip_text(text):
    """The same position with colours swapped and the board turned (gote to move)."""
    rows, side, hands, number = text.split()
    board = "".join(c if c.isdigit() else c.swapcase() for c in rows[::-1])
    assert side == "b"
    return f"{board} w {hands.swapcase()} {int(number) + 1}"


def stack(states):
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


def test_legal_moves_both_sides_vmap_jit(env, states, policies):
    players = np.asarray(states.current_player)
    assert 0 < players.sum() < len(players)  # both sides to move are covered
    mask = np.asarray(states.legal_action_mask)
    keys = jax.random.split(jax.random.PRNGKey(1), len(players))
    for d, pol in policies.items():
        acts = np.asarray(pol(keys, states))
        assert acts.dtype == np.int32
        assert mask[np.arange(len(acts)), acts].all(), d
        # deterministic per key
        np.testing.assert_array_equal(acts, np.asarray(pol(keys, states)))
    # games of a batch do not interact: permuting the batch permutes the moves
    perm = np.random.default_rng(0).permutation(len(players))
    shuffled = jax.tree_util.tree_map(lambda x: x[perm], states)
    np.testing.assert_array_equal(np.asarray(pol(keys[perm], shuffled)), acts[perm])


#: positions with an immediate win for the mover, and one where some moves lose at once
POSITIONS = [
    "l2/2E/1E1/2L b G 1",  # G*a2 catches the lion
    "2l/L2/3/3 b - 1",  # a2a1 is a try
    "3/2g/1El/L2 b C 1",  # taking the giraffe (or moving the elephant) lets gote try
]


def test_takes_immediate_win_and_avoids_immediate_loss(env, states, policies):
    texts = POSITIONS + [flip_text(t) for t in POSITIONS]
    n = states.current_player.shape[0]  # the same batch size as `states`: no recompilation
    batch = stack([env.from_text(texts[i % len(texts)]) for i in range(n)])
    me = np.asarray(batch.current_player)
    step = jax.vmap(env.step)

    @jax.jit
    def mover_wins(s):
        """bool[B, 132]: the mover of s wins at once with this (legal) action."""
        children = jax.vmap(jax.vmap(env.step, in_axes=(None, 0)), in_axes=(0, None))(
            s, jnp.arange(132)
        )
        return s.legal_action_mask & (children.winner == s.current_player[:, None])

    can_win = np.asarray(mover_wins(batch)).any(1)
    np.testing.assert_array_equal(can_win, np.arange(n) % 3 != 2)
    # the third position is a real test: taking the giraffe lets gote try at once
    bait_b = env.text_to_action(env.from_text(POSITIONS[2]), "b3c2")
    bait_w = env.text_to_action(env.from_text(flip_text(POSITIONS[2])), "b2a3")
    baits = np.where(np.arange(n) % 6 == 2, bait_b, bait_w)
    rows = np.arange(n) % 3 == 2
    first_legal = np.argmax(np.asarray(batch.legal_action_mask), axis=1)
    lost = np.asarray(mover_wins(step(batch, jnp.asarray(np.where(rows, baits, first_legal)))))
    assert lost.any(1)[rows].all()

    keys = jax.random.split(jax.random.PRNGKey(2), n)
    for d, pol in policies.items():
        children = step(batch, pol(keys, batch))
        won = np.asarray(children.winner) == me
        assert won[can_win].all(), d
        if d >= 2:
            assert not np.asarray(mover_wins(children)).any(1)[~can_win].any(), d


# ------------------------------------------------------------------ brute-force reference
@jax.jit
def expand_all(view, own_hand, opp_hand, mover):
    """All 132 children of a mover-frame position, with what the reference needs of each:
    (Child, static value for the child's mover (a legal try: WIN), in check, quiet moves)."""
    actions = jnp.arange(132, dtype=jnp.int32)
    ch = jax.vmap(E.play, in_axes=(None, None, None, 0, None))(
        view, own_hand, opp_hand, actions, mover
    )
    has_try = jax.vmap(E._has_try)(ch.view, ch.legal)
    stand = jnp.where(has_try, E.WIN, jax.vmap(E.evaluate)(ch.view, ch.own_hand, ch.opp_hand))
    return ch, stand, jax.vmap(E._in_check)(ch.view), jax.vmap(E._quiet_moves)(ch.view, ch.legal)


def reference_values(env, state, depth, quiescence):
    """Root values by plain recursive negamax in Python (no pruning, no move ordering) over
    the module's move generator and evaluation: full width to ``depth``, then captures and
    promotions with stand-pat (all moves, no stand-pat, in check) until ply depth +
    quiescence. Returns {legal action: int}."""
    history = [tuple(k) for k in np.asarray(state.history)[: int(state.step_count) + 1]]
    step0, size = int(state.step_count), depth + quiescence

    def move_value(node, a, ply, path):
        """Value of move ``a`` for the mover of ``node`` = (position, its expand_all output)."""
        (_, _, _, mover), (ch, stand, check, quiet) = node
        key, k = tuple(ch.key[a]), ply + 1
        if ch.won[a]:
            return E.WIN - k
        if history.count(key) + path.count(key) >= 2 or step0 + k >= env.max_steps:
            return 0
        child = (ch.view[a], ch.own_hand[a], ch.opp_hand[a], 1 - mover)
        if k < depth:  # full width
            return -node_value(child, ch.legal[a], k, path + [key], E.NEG)
        if stand[a] == E.WIN:  # the child's mover has a legal try
            return -(E.WIN - k - 1)
        if k >= size:
            return -int(stand[a])
        if check[a]:  # quiescence in check: every evasion, no stand-pat
            return -node_value(child, ch.legal[a], k, path + [key], E.NEG)
        return -node_value(child, quiet[a], k, path + [key], int(stand[a]))

    def node_value(position, moves, ply, path, base):
        """max(base, the values of ``moves``) at a position (view, own hand, opp hand, mover)."""
        node = (position, jax.device_get(expand_all(*position)))
        return max([base] + [move_value(node, a, ply, path) for a in np.flatnonzero(moves)])

    p = int(state.current_player)
    hand = np.asarray(state.hand)
    root = (np.asarray(E.mover_view(state.board, p)), hand[p], hand[1 - p], p)
    node = (root, jax.device_get(expand_all(*root)))
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    return {int(a): move_value(node, a, 0, []) for a in legal}


@pytest.mark.parametrize("depth,n", [(2, 10), (3, 3)])
def test_root_values_equal_brute_force(env, states, policies, depth, n, run_bound):
    exact = np.asarray(jax.jit(jax.vmap(E.search(env, depth, exact_root=True)))(states))
    if depth in policies:
        keys = jax.random.split(jax.random.PRNGKey(3), states.current_player.shape[0])
        played = np.asarray(policies[depth](keys, states))
    for i in range(n):
        s = jax.tree_util.tree_map(lambda x: x[i], states)
        ref = reference_values(env, s, depth, E.QUIESCENCE)
        legal = np.flatnonzero(np.asarray(s.legal_action_mask))
        np.testing.assert_array_equal(exact[i, legal], [ref[a] for a in legal])
        if depth in policies:  # the pruned search of the policy plays one of the best moves
            assert ref[int(played[i])] == max(ref.values())
    # states[0]: going back to the start position a third time is a draw
    s0 = jax.tree_util.tree_map(lambda x: x[0], states)
    assert exact[0, env.text_to_action(s0, "a2a1")] == 0


def test_being_in_check_costs_the_mover_in_check_points(monkeypatch):
    """Hand-made views (squares 0..11, the opponent's pieces coded + 5): the mover's lion on b4
    with the opponent's giraffe on b3 (in check) scores E.IN_CHECK = 60 less than with that
    constant set to 0, all else equal; with the giraffe on a2 (no check) the constant plays no
    part."""
    no_hand = jnp.zeros(3, jnp.int32)

    def view(cells):
        return jnp.asarray([cells.get(sq, 0) for sq in range(12)], jnp.int32)

    checked = view({10: LION, 1: LION + 5, 7: GIRAFFE + 5})
    quiet = view({10: LION, 1: LION + 5, 3: GIRAFFE + 5})
    before = [int(E.evaluate(v, no_hand, no_hand)) for v in (checked, quiet)]
    monkeypatch.setattr(E, "IN_CHECK", 0)
    after = [int(E.evaluate(v, no_hand, no_hand)) for v in (checked, quiet)]
    assert before[0] - after[0] == -60 and before[1] == after[1]

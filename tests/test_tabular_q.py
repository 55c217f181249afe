"""Tabular Q-learning (vectorised) learns to beat random play."""

import jax
import numpy as np
import pytest

from jaxgames.baselines.tabular_q import TabularQConfig, learning_curve, make_train


def test_tabular_q_improves_over_random():
    # random vs random scores ~0.437 wins with colours mixed (0.585 as X, 0.288 as O)
    cfg = TabularQConfig(total_games=4000, num_envs=64, eval_points=2, eval_games=1000)
    out = jax.jit(make_train(cfg))(jax.random.PRNGKey(0))
    wins = np.asarray(out.evals["wins"]) / 1000
    games = np.asarray(out.evals["games"])
    assert games[-1] >= 3500 and games[0] < games[-1]
    assert wins[-1] > 0.58 and wins[-1] > wins[0], wins  # random: 0.44 +- 0.03
    assert np.asarray(out.evals["losses"])[-1] < 330  # random: ~437 of 1000
    g, w, d, losses = learning_curve(out.curve, window=1000)
    assert len(g) >= 3 and np.allclose(w + d + losses, 1.0)
    assert w[-1] > w[0], w  # the training win rate rises
    # the table only holds values in [-1, 1]
    q = np.asarray(out.q)
    assert np.abs(q).max() <= 1.0 + 1e-6 and np.abs(q).max() > 0.5


def test_learning_curve_windows_by_hand():
    """Steps finishing 3, 4, 1 and 12 games (wins 3, 0, 1, 6): windows of 4 end at the first
    step reaching 4, 8, ... games: after 7 games (3 + 0 wins of 7), 8 (1 of 1), 20 (the last
    step's 12 games are one window, not three, two of them empty); windows of 5 end at 7
    and 20 games."""
    curve = dict(
        games=np.array([3, 4, 1, 12]),
        wins=np.array([3, 0, 1, 6]),
        draws=np.array([0, 4, 0, 0]),
        losses=np.array([0, 0, 0, 6]),
    )
    g, w, d, losses = learning_curve(curve, window=4)
    assert g.tolist() == [7, 8, 20]
    np.testing.assert_allclose(w, [3 / 7, 1.0, 0.5])
    np.testing.assert_allclose(d, [4 / 7, 0.0, 0.0])
    np.testing.assert_allclose(w + d + losses, 1.0)
    g, w, _, _ = learning_curve(curve, window=5)
    assert g.tolist() == [7, 20] and np.allclose(w, [3 / 7, 7 / 13])


def test_config_validation():
    with pytest.raises(ValueError, match="epsilon"):
        TabularQConfig(epsilon=1.5)
    with pytest.raises(ValueError, match="agent_player"):
        TabularQConfig(agent_player=2)

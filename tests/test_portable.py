"""Portable agents (``jaxgames export --portable``): the jax.export artefact loads and runs in a
Python where jaxgames (and Flax) cannot be imported, and gives the agent's own outputs."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames import cli
from jaxgames.agents.common import masked_logits
from jaxgames.pretrained import PRETRAINED_DIR, load_pretrained_agent, read_card
from jaxgames.pretrained.portable import EXPORT_FILE, META_FILE

# run with -I -S: no PYTHONPATH, no current folder, no site (so no .pth file installs the
# editable jaxgames); only the folders holding jax's own dependencies are put on the path
_LOADER = r"""
import importlib.util, json, sys
sys.path[:0] = json.loads(sys.argv[1])
assert importlib.util.find_spec("jaxgames") is None, "jaxgames is importable"
import jax, numpy as np
data = np.load(sys.argv[2])
exp = jax.export.deserialize(bytearray(open(sys.argv[3], "rb").read()))
out = {}
for n in (1, len(data["obs"])):  # the batch dimension is symbolic: any size runs
    logits, value = exp.call(data["obs"][:n], data["mask"][:n])
    out[f"logits{n}"], out[f"value{n}"] = np.asarray(logits), np.asarray(value)
assert not any(m.split(".")[0] in ("jaxgames", "flax") for m in sys.modules), "imported"
np.savez(sys.argv[4], **out)
"""


def _positions(env, n: int, plies: int, seed: int = 0):
    """``n`` positions reached by ``plies`` random legal moves (some games may have ended)."""
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(seed), n))
    step = jax.jit(jax.vmap(env.step))
    for k in jax.random.split(jax.random.PRNGKey(seed + 1), plies):
        logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
        actions = jax.random.categorical(k, logits)
        actions = jnp.where(states.legal_action_mask.any(-1), actions, 0)
        states = step(states, actions.astype(jnp.int32))
    return states


def _dependency_paths() -> list[str]:
    """The folders that hold jax's imports (never the repository nor its editable finder)."""
    import flatbuffers
    import jaxlib
    import ml_dtypes
    import opt_einsum

    mods = (jax, jaxlib, np, ml_dtypes, opt_einsum, flatbuffers)
    return sorted({os.path.dirname(os.path.dirname(m.__file__)) for m in mods})


@pytest.mark.parametrize("name", ["reversi6", "animal_shogi"])
def test_portable_export_runs_without_jaxgames(tmp_path, name, capsys):
    out = str(tmp_path / "agent")
    assert cli.main(["export", os.path.join(PRETRAINED_DIR, name), out, "--portable"]) == 0
    assert "policy.jaxexport" in capsys.readouterr().out
    card, meta = read_card(out), json.load(open(os.path.join(out, META_FILE)))
    assert card["portable"]["sha256"] == meta["sha256"]
    assert "portable" in open(os.path.join(out, "card.md")).read()

    loaded = load_pretrained_agent(name)
    env = loaded.env
    assert meta["inputs"]["observation"]["shape"][1:] == list(env.observation_shape)
    assert len(meta["actions"]) == env.num_actions
    states = _positions(env, 9, plies=7)
    obs, mask = np.asarray(states.observation), np.asarray(states.legal_action_mask)
    np.savez(tmp_path / "in.npz", obs=obs, mask=mask)
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _LOADER, json.dumps(_dependency_paths())]
        + [str(tmp_path / "in.npz"), os.path.join(out, EXPORT_FILE), str(tmp_path / "o.npz")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    got = np.load(tmp_path / "o.npz")

    logits, value = loaded.agent.apply(loaded.params, states.observation)
    want_logits = np.asarray(masked_logits(logits, states.legal_action_mask))
    np.testing.assert_allclose(got["logits9"], want_logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["value9"], np.asarray(value), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["logits1"], want_logits[:1], rtol=1e-4, atol=1e-4)
    # the greedy move of the artefact is the agent's own, on every unfinished position
    policy = loaded.policy()
    moves = np.asarray(jax.vmap(policy)(jax.random.split(jax.random.PRNGKey(0), 9), states))
    live = mask.any(-1)
    assert live.sum() >= 5
    np.testing.assert_array_equal(got["logits9"].argmax(-1)[live], moves[live])


def test_a_dqn_agents_value_is_its_best_legal_q():
    """DQN's value head is never trained: the artefact's value is the largest legal Q-value,
    as the agent's own policy reads it (QPolicy.value)."""
    import types

    from jaxgames.agents import dqn
    from jaxgames.pretrained.portable import portable_function

    cfg = dqn.default_config("tic_tac_toe").override({"net": {"hidden": 8, "layers": 1}})
    algo = dqn.make_algorithm(cfg)
    params = jax.jit(lambda k: algo.params(algo.init(k)))(jax.random.PRNGKey(0))
    loaded = types.SimpleNamespace(agent=algo.agent, params=params)
    states = _positions(algo.env, 6, plies=3)
    logits, value = portable_function(loaded)(states.observation, states.legal_action_mask)
    want = jax.jit(jax.vmap(algo.agent.policy(params).value))(states)
    np.testing.assert_allclose(np.asarray(value), np.asarray(want), rtol=1e-6)
    q, head = jax.jit(algo.agent.apply)(params, states.observation)
    assert not np.allclose(np.asarray(value), np.asarray(head))  # not the untrained head
    want_logits = masked_logits(q, states.legal_action_mask)  # the Q-values, illegal masked
    np.testing.assert_allclose(np.asarray(logits), np.asarray(want_logits), rtol=1e-6)


def test_export_without_portable_writes_no_artefact_and_replaces_a_stale_one(tmp_path):
    out = str(tmp_path / "agent")
    src = os.path.join(PRETRAINED_DIR, "tic_tac_toe")
    assert cli.main(["export", src, out, "--portable"]) == 0
    assert os.path.exists(os.path.join(out, EXPORT_FILE))
    assert cli.main(["export", src, out, "--force"]) == 0
    assert not os.path.exists(os.path.join(out, EXPORT_FILE))
    assert "portable" not in read_card(out)


def test_portable_without_flatbuffers_is_one_error_line_and_writes_nothing(
    tmp_path, monkeypatch, capsys
):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "flatbuffers" else find_spec(n, *a)
    )
    out = tmp_path / "agent"
    assert (
        cli.main(["export", os.path.join(PRETRAINED_DIR, "tic_tac_toe"), str(out), "--portable"])
        == 2
    )
    err = capsys.readouterr().err
    assert (
        err.startswith("error: --portable needs the 'flatbuffers' package") and err.count("\n") == 1
    )
    assert not out.exists()

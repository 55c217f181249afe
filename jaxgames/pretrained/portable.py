"""Portable agents: a policy network as a serialized :mod:`jax.export` artefact that loads and
runs with plain JAX, no jaxgames (nor Flax) import.

``jaxgames export --portable`` writes two files beside the exported agent:

    policy.jaxexport   the StableHLO of ``(observation, legal mask) -> (logits, value)`` with
                       the parameters baked in (``jax.export.Exported.serialize``)
    policy.json        what it takes and returns: game, options, observation shape, number of
                       actions, the move notation of every action id, the platforms it was
                       lowered for, the batch dimension, the artefact's SHA-256

The artefact's function, for a batch of ``B`` positions (``B`` symbolic: any batch size runs
the same artefact; JAX compiles it once per size on first use)::

    observation float32[B, *observation_shape]   state.observation (the mover's view)
    legal_mask  bool[B, num_actions]             state.legal_action_mask
    -> logits   float32[B, num_actions]          illegal entries at the float32 minimum
       value    float32[B]                       the outcome expected by the mover, [-1, 1]

so ``argmax(logits)`` is the agent's greedy move (:class:`jaxgames.agents.common.NetworkPolicy`)
and ``softmax(logits)`` its move probabilities. A DQN agent's logits are its Q-values and its
value the largest legal one, as the agent itself reads them (``policy.json``: ``q_values``).
Input features (``features``) run inside the artefact. Loading it anywhere (JAX >= the
exporting version's serialization format)::

    import jax, numpy as np
    exp = jax.export.deserialize(bytearray(open("policy.jaxexport", "rb").read()))
    logits, value = exp.call(observation, legal_mask)

Serialization needs the ``flatbuffers`` package (jax's own optional dependency, the
``portable`` extra); loading needs only jax and its dependencies.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from typing import Any

import jax
import jax.numpy as jnp

from jaxgames.agents.common import masked_logits
from jaxgames.agents.dqn import QAgent, max_legal_q
from jaxgames.runs import LoadedAgent

EXPORT_FILE = "policy.jaxexport"
META_FILE = "policy.json"
#: the platforms the artefact is lowered for (it runs on any of them; lowering for a platform
#: needs no device of that kind)
PLATFORMS = ("cpu", "cuda")
#: the name of the symbolic batch dimension (jax.export shape polymorphism)
BATCH_DIM = "B"


def check_portable_available() -> None:
    """``ValueError`` (one line, how to install it) when jax cannot serialize: checked before
    an export writes anything."""
    if importlib.util.find_spec("flatbuffers") is None:
        raise ValueError(
            "--portable needs the 'flatbuffers' package (jax.export serializes with it); "
            "install it with: pip install 'jaxgames[portable]' (or pip install flatbuffers)"
        )


def portable_function(loaded: LoadedAgent):
    """The jitted ``(observation float32[B, ...], legal_mask bool[B, A]) -> (logits float32[B,
    A], value float32[B])`` of an agent, its parameters closed over (baked into the export)."""
    agent, params = loaded.agent, loaded.params
    q_values = isinstance(agent, QAgent)

    def policy(observation: jax.Array, legal_mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        logits, value = agent.apply(params, observation)
        if q_values:  # DQN never trains its value head: the value is the best legal Q
            value = max_legal_q(logits, legal_mask)
        return masked_logits(logits, legal_mask), value

    return jax.jit(policy)


def export_portable(loaded: LoadedAgent, out_dir: str) -> dict[str, Any]:
    """Write ``policy.jaxexport`` and ``policy.json`` of ``loaded`` into ``out_dir``; returns
    the ``policy.json`` record (also stored on the model card as ``portable``)."""
    env, agent = loaded.env, loaded.agent
    (batch,) = jax.export.symbolic_shape(BATCH_DIM)
    args = (
        jax.ShapeDtypeStruct((batch, *agent.observation_shape), jnp.float32),
        jax.ShapeDtypeStruct((batch, env.num_actions), jnp.bool_),
    )
    exported = jax.export.export(portable_function(loaded), platforms=PLATFORMS)(*args)
    data = bytes(exported.serialize())
    with open(os.path.join(out_dir, EXPORT_FILE), "wb") as f:
        f.write(data)
    state = env.init(jax.random.PRNGKey(0))
    meta = dict(
        file=EXPORT_FILE,
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        game=env.name,
        game_options=dict(env.config),
        rules_version=env.rules_version,
        inputs=dict(
            observation=dict(dtype="float32", shape=[BATCH_DIM, *agent.observation_shape]),
            legal_mask=dict(dtype="bool", shape=[BATCH_DIM, env.num_actions]),
        ),
        outputs=dict(
            logits=dict(dtype="float32", shape=[BATCH_DIM, env.num_actions]),
            value=dict(dtype="float32", shape=[BATCH_DIM]),
        ),
        illegal_logit=float(jnp.finfo(jnp.float32).min),
        q_values=isinstance(agent, QAgent),  # the logits are Q-values (DQN)
        # each action id's move notation in the initial position (reversi: the square; pass)
        actions=[_action_text(env, state, a) for a in range(env.num_actions)],
        platforms=list(PLATFORMS),
        jax_version=jax.__version__,
        serialization_version=exported.calling_convention_version,
    )
    with open(os.path.join(out_dir, META_FILE), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return meta


def _action_text(env: Any, state: Any, action: int) -> str | None:
    try:
        return env.action_to_text(state, action)
    except (ValueError, IndexError):
        return None

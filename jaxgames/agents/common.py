"""What every algorithm shares: legal-move masking and sampling, self-play steps in the mover's
frame, negamax GAE, and the :class:`Agent` / :class:`NetworkPolicy` wrappers of a network.

Masking uses the finite float32 minimum, not ``-inf``, so softmax, log-probabilities and their
gradients stay finite; illegal actions get probability exactly 0.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Symmetries, apply_symmetry, step_autoreset

Array = jax.Array
PRNGKey = jax.Array

MASK_MIN = float(jnp.finfo(jnp.float32).min)


# ----------------------------------------------------------------------------- masking
def masked_logits(logits: Array, mask: Array) -> Array:
    """logits float32[..., A] with illegal entries (mask bool[..., A] False) at the float32
    minimum; a row with no legal action (a finished game) becomes uniform, not NaN."""
    return jnp.where(mask, logits, MASK_MIN)


def masked_log_probs(logits: Array, mask: Array) -> Array:
    """Log-probabilities of the masked softmax: float32[..., A] (illegal entries ~ -3.4e38)."""
    return jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)


def masked_entropy(logits: Array, mask: Array) -> Array:
    """Entropy of the masked softmax, illegal actions excluded: float32[...]."""
    logp = masked_log_probs(logits, mask)
    p = jnp.exp(logp)
    return -jnp.sum(jnp.where(mask, p * logp, 0.0), axis=-1)


def sample_masked(key: PRNGKey, logits: Array, mask: Array) -> tuple[Array, Array]:
    """Sample from the masked softmax -> (action int32[...], log_prob float32[...]).

    Inverse-CDF sampling: one uniform number per row (Gumbel-max needs one per action) picks
    the first action whose running sum of probabilities exceeds it; illegal actions add 0 to
    the sum, so they are never picked. The sum is an unrolled loop over the A columns: one
    fused pass, exactly monotone (``jnp.cumsum`` is a quadratic reduce-window on CPU).
    """
    chex.assert_equal_shape([logits, mask])
    logp = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    p = jnp.exp(logp)
    num_actions = p.shape[-1]
    total = p[..., 0]
    for i in range(1, num_actions):
        total = total + p[..., i]
    u = jax.random.uniform(key, total.shape, total.dtype) * total
    run = p[..., 0]
    action = (run <= u).astype(jnp.int32)
    for i in range(1, num_actions):
        run = run + p[..., i]  # the same sums in the same order as ``total``
        action = action + (run <= u).astype(jnp.int32)
    # u < total, so the first action whose running sum passes u exists, unless rounding made
    # u == total: then the last action with a nonzero probability
    last = num_actions - 1 - jnp.argmax(p[..., ::-1] > 0, axis=-1)
    action = jnp.minimum(action, last).astype(jnp.int32)
    return action, jnp.take_along_axis(logp, action[..., None], axis=-1)[..., 0]


def greedy_masked(logits: Array, mask: Array) -> Array:
    """Highest-logit legal action: int32[...]."""
    return jnp.argmax(masked_logits(logits, mask), axis=-1).astype(jnp.int32)


def action_log_prob(logits: Array, mask: Array, action: Array) -> Array:
    """log pi(action) under the masked softmax: logits float32[..., A], action int32[...]
    -> float32[...]."""
    logp = masked_log_probs(logits, mask)
    return jnp.take_along_axis(logp, action[..., None].astype(jnp.int32), axis=-1)[..., 0]


def batch_observation(states: Any) -> Array:
    """float32[B, *observation_shape] of a batch of states (``observation`` may be a property
    written for one state, so it is vmapped)."""
    return jax.vmap(lambda s: s.observation)(states)


class SelfPlayStep(NamedTuple):
    """One ply of self-play in a batch of games, in the mover's frame (leading axis B).

    state:   the next states (already reset where a game ended)
    reward:  float32[B] rewards[mover] of this ply (the mover's outcome if it ended the game)
    done:    bool[B]    the ply ended the game (terminated or truncated)
    sign:    float32[B] +1 if the next state's mover is this ply's mover, else -1 (after a
             reset it refers to the new game's first mover; it is unused where ``done``)
    outcome: float32[B, 2] the finished game's rewards by player id (zeros if not done)
    length:  int32[B]   plies of the finished game (0 if not done)
    plies:   int32[B]   plies this row spans: 1 in self-play; against a partner the learner's
             move and the partner's replies in the same game (:func:`per_ply_discount`)
    """

    state: Any
    reward: Array
    done: Array
    sign: Array
    outcome: Array
    length: Array
    plies: Array


def selfplay_step(env: Any, states: Any, actions: Array, key: PRNGKey) -> SelfPlayStep:
    """Play ``actions`` (int32[B]) in ``states`` (B games) with auto-reset, the result in each
    mover's frame (what negamax GAE and n-step targets need)."""
    n = actions.shape[0]
    mover = states.current_player
    out = jax.vmap(lambda s, a, k: step_autoreset(env, s, a, k))(
        states, actions, jax.random.split(key, n)
    )
    done = out.terminated | out.truncated
    reward = jnp.take_along_axis(out.rewards, mover[:, None], axis=1)[:, 0]
    sign = jnp.where(out.state.current_player == mover, 1.0, -1.0)
    length = jnp.where(done, states.step_count + 1, 0).astype(jnp.int32)
    plies = jnp.ones(n, jnp.int32)
    return SelfPlayStep(out.state, reward, done, sign, out.rewards, length, plies)


def per_ply_discount(gamma: float, plies: Array) -> tuple[Array, Array]:
    """(reward factor ``gamma ** (plies - 1)``, discount ``gamma ** plies``) float32[...] of
    rows spanning ``plies`` int32[...] plies (:attr:`SelfPlayStep.plies`). A row's reward
    arrives on its last ply (every game pays on its final step only), so with these factors
    ``gamma`` stays a discount per ply when a partner's replies share the learner's row."""
    later = gamma ** (plies - 1).astype(jnp.float32)
    return later, later * gamma


# ----------------------------------------------------------------------------- negamax GAE
def negamax_gae(
    rewards: Array,
    values: Array,
    dones: Array,
    signs: Array,
    last_value: Array,
    gamma: float | Array,
    gae_lambda: float,
) -> tuple[Array, Array]:
    """Generalised advantage estimation (Schulman et al. 2016) for alternating-move zero-sum
    self-play, time-major over a rollout of length T (any trailing batch shape ``...``):

    rewards     float32[T, ...]  r_t = rewards[mover_t] of step t, from the MOVER's view
    values      float32[T, ...]  V(s_t) from the mover of s_t
    dones       bool/float[T, ...] step t ended the game (s_{t+1} is a fresh game)
    signs       float32[T, ...]  +1 if the mover of s_{t+1} is the mover of s_t, else -1
    last_value  float32[...]     V(s_T) for bootstrapping the last step (from s_T's mover)
    gamma       float, or float32[T, ...] each step's discount (``gamma ** plies`` where a
                step spans several plies: a partner's replies)

    Every value is "how good is this for the player to move", so a value or advantage seen
    from the next state is converted into the current mover's view by ``signs``::

        delta_t = r_t + gamma * sign_t * V(s_{t+1}) * (1 - done_t) - V(s_t)
        A_t     = delta_t + gamma * lambda * sign_t * (1 - done_t) * A_{t+1}

    Why the loser's last move gets the loss. X wins with its move at t; O moved at t-1::

        t-1: O to move, O plays     r_{t-1} = 0        (not done; sign = -1)
        t  : X to move, X wins      r_t = rewards[X] = +1, done_t = 1 (env auto-resets)

        A_t     = 1 - V(s_t)
        A_{t-1} = 0 + gamma * (-V(s_t)) - V(s_{t-1}) + gamma * lambda * (-1) * A_t
                = -gamma * lambda * 1 - gamma * (1 - lambda) * V(s_t) - V(s_{t-1})

    With lambda = 1 that is exactly -gamma - V(s_{t-1}): O's last move receives the (discounted)
    -1 through the negated advantage of X's winning move, although the environment paid O's -1
    on X's step. This relies on zero-sum rewards (rewards[O] = -rewards[X]), true for every
    jaxgames game and for the illegal-move rule. A truncated game is treated like a finished
    one with its (zero) rewards. Returns (advantages float32[T, ...], returns = A + V).
    """
    chex.assert_equal_shape([rewards, values, dones, signs])
    chex.assert_shape(last_value, values.shape[1:])
    not_done = 1.0 - dones.astype(jnp.float32)
    gammas = jnp.broadcast_to(jnp.asarray(gamma, jnp.float32), rewards.shape)

    def body(carry, xs):
        next_value, next_adv = carry
        r, v, nd, s, g = xs
        delta = r + g * s * next_value * nd - v
        adv = delta + g * gae_lambda * s * nd * next_adv
        return (v, adv), adv

    init = (last_value.astype(jnp.float32), jnp.zeros_like(last_value, jnp.float32))
    _, advantages = jax.lax.scan(
        body,
        init,
        (rewards.astype(jnp.float32), values, not_done, signs.astype(jnp.float32), gammas),
        reverse=True,
    )
    return advantages, advantages + values


# ----------------------------------------------------------------------------- agents
@dataclasses.dataclass(frozen=True)
class Agent:
    """A network (``apply(params, obs[B, ...]) -> (logits[B, A], value[B])``) bound to a game's
    observation shape; stateless, parameters are passed in.

    ``features`` (the game's ``input_features[name]``) maps observations to the network's input
    inside :meth:`apply`, so replay, augmentation and search handle bare observations.
    ``symmetries`` (``env.symmetries``) averages the network over every symmetry of the
    position, logits mapped back to the original moves (test-time augmentation, as AlphaGo,
    Silver et al. 2016): equivariant, K forward passes; not part of equality."""

    network: nn.Module
    observation_shape: tuple[int, ...]
    features: Callable[[Array], Array] | None = None
    symmetries: Symmetries | None = dataclasses.field(default=None, compare=False, repr=False)

    def network_input(self, obs: Array) -> Array:
        """float32[B, *observation_shape] -> the network's input float32[B, ...]."""
        return obs if self.features is None else self.features(obs)

    def init_params(self, key: PRNGKey) -> Any:
        """Fresh parameters (a pytree)."""
        obs = jnp.zeros((1, *self.observation_shape), jnp.float32)
        return self.network.init(key, self.network_input(obs))

    def apply(self, params: Any, obs: Array) -> tuple[Array, Array]:
        """obs float32[*observation_shape] or float32[B, *observation_shape]
        -> (logits float32[(B,) A], value float32[(B,)]); ``ValueError`` for observations of
        another shape (a policy given another game or board size)."""
        n = len(self.observation_shape)
        if tuple(obs.shape[-n:]) != self.observation_shape or obs.ndim not in (n, n + 1):
            raise ValueError(
                f"this network takes observations of shape {self.observation_shape} (one game, "
                f"or a batch of them), got {tuple(obs.shape)}: is it playing another game or "
                "board size than it was trained on?"
            )
        single = obs.ndim == n
        x = obs[None] if single else obs
        if self.symmetries is None:
            logits, value = self.network.apply(params, self.network_input(x))
        else:
            logits, value = self._averaged(params, x)
        return (logits[0], value[0]) if single else (logits, value)

    def _averaged(self, params: Any, x: Array) -> tuple[Array, Array]:
        """x [B, *observation_shape] -> the outputs averaged over the K symmetries; the
        inverse permutation of each transform brings its logits back onto x's moves."""
        sym = self.symmetries
        b, k = x.shape[0], sym.count
        ks = jnp.broadcast_to(jnp.arange(k, dtype=jnp.int32), (b, k))
        (moved,) = apply_symmetry(sym, ks, jnp.broadcast_to(x[:, None], (b, k, *x.shape[1:])))
        logits, value = self.network.apply(
            params, self.network_input(moved.reshape(b * k, *x.shape[1:]))
        )
        back = jnp.asarray(np.argsort(sym.actions, axis=1), jnp.int32)  # int32[K, A]
        logits = jnp.take_along_axis(logits.reshape(b, k, -1), back[None], axis=-1)
        chex.assert_shape(logits, (b, k, sym.actions.shape[1]))
        return logits.mean(axis=1), value.reshape(b, k).mean(axis=1)

    def policy(self, params: Any, greedy: bool = True) -> "NetworkPolicy":
        """A :class:`NetworkPolicy` playing with ``params``."""
        return NetworkPolicy(self, params, greedy)


@dataclasses.dataclass(frozen=True, eq=False)
class NetworkPolicy:
    """``policy(key, state) -> int32[]``: a legal action of one state (``jax.vmap`` for a batch),
    the highest logit if ``greedy`` else sampled from the masked softmax. Hashed by identity,
    so callers cache one compiled function per policy."""

    agent: Agent
    params: Any
    greedy: bool = True

    def __post_init__(self) -> None:
        # one compiled network per policy (parameters passed in, not baked in as constants):
        # called outside jit, the network would otherwise run op by op; inside an outer jit
        # or vmap it is inlined
        object.__setattr__(self, "_apply", jax.jit(self.agent.apply))

    def __call__(self, key: PRNGKey, state: Any) -> Array:
        logits, _ = self._apply(self.params, state.observation)
        mask = state.legal_action_mask
        if self.greedy:
            return greedy_masked(logits, mask)
        return sample_masked(key, logits, mask)[0]

    def search_outputs(self, state: Any) -> tuple[Array, Array]:
        """(prior logits float32[A], unmasked; value float32[]) for a tree search, one pass."""
        return self._apply(self.params, state.observation)

    def value(self, state: Any) -> Array:
        """float32[]: estimated outcome for the player to move, in [-1, 1] for tanh heads."""
        return self._apply(self.params, state.observation)[1]

    def probs(self, state: Any) -> Array:
        """float32[A]: masked move probabilities (zero on illegal moves)."""
        logits, _ = self._apply(self.params, state.observation)
        return jnp.exp(masked_log_probs(logits, state.legal_action_mask))

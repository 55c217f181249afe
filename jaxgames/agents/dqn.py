"""Masked self-play DQN on device: double DQN (van Hasselt et al. 2016), n-step negamax
returns, replay inside jit.

One Q-network plays both sides, ``Q(s, a)`` valued for the player to move in ``s``. Each
update acts ``rollout_steps`` plies in ``num_envs`` games, epsilon-greedy among the LEGAL
moves (partners reply inside the step, :mod:`~jaxgames.agents.games_batch`), appends every ply
to the on-device ring (:mod:`~jaxgames.agents.replay`), then takes ``gradient_steps`` Huber
steps on windows of ``n_step + 1`` plies. The target network moves by Polyak averaging
(``target_tau``; 1: hard copies every ``target_period`` steps).

Negamax n-step targets: rewards are stored from the mover's view with each row's discount
``d_t = sign_t * gamma ** plies_t``, ``sign_t`` +1 if the same player moves next (a partner
game's learner after the partner's replies; a reversi pass is a ply of its own), else -1,
and ``plies_t`` the plies the row spans (1, or the learner's move and the partner's replies;
its reward, paid on its last ply, is stored times ``gamma ** (plies_t - 1)``:
:func:`~jaxgames.agents.common.per_ply_discount`), so a quantity of the mover at ``t + k``
is seen from the mover at ``t`` through
``c_k = prod_{j<k} d_j * (1 - done_j)``::

    y_t = sum_{k<n} c_k r_{t+k} + c_n Q_target(s_{t+n}, a*)
    a*  = legal argmax of Q_online(s_{t+n}, .)                              (double DQN)

A game ending inside the window zeroes ``c``, so the next game never leaks into the target;
the loser's last move gets the loss through ``sign = -1`` as in
:func:`~jaxgames.agents.common.negamax_gae`. Epsilon decays linearly over ``eps_decay``
completed games (every training game, against partners too) or plies (``eps_unit``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxgames import distributed
from jaxgames.agents import presets
from jaxgames.agents.algorithm import (
    Algorithm,
    check_config_type,
    check_standalone,
    chunked_algorithm,
    make_agent,
    make_optimizer,
)
from jaxgames.agents.common import (
    MASK_MIN,
    Agent,
    NetworkPolicy,
    SelfPlayStep,
    batch_observation,
    greedy_masked,
    masked_logits,
    per_ply_discount,
)
from jaxgames.agents.config import TrainConfig, sqrt_scaled_rate
from jaxgames.agents.games_batch import TrainingGames, make_training_games
from jaxgames.agents.replay import TrajectoryBuffer, TrajectoryBufferState, make_trajectory_buffer
from jaxgames.validation import check_bool, check_choice, check_float, check_int, fail


@dataclasses.dataclass(frozen=True)
class DQNConfig(TrainConfig):
    """DQN fields besides :class:`TrainConfig`'s.

    rollout_steps:    plies per env per update
    gradient_steps:   minibatch steps per update, of batch_size windows each
    buffer_size:      replay transitions (whole rows of num_envs, at least n_step + 1 rows)
    learning_starts:  env steps (all envs) collected before learning starts
    eps_*:            linear epsilon from eps_start to eps_end over eps_decay eps_unit
                      ("games" or "steps")
    target_tau, target_period: Polyak factor (1: hard copy) every target_period steps
    double_dqn:       select a* with the online network (else the target network's max)
    """

    rollout_steps: int = 1
    gradient_steps: int = 1
    batch_size: int = 256
    buffer_size: int = 100_000
    learning_starts: int = 2_000
    n_step: int = 16
    eps_start: float = 1.0
    eps_end: float = 0.1
    eps_decay: int = 5_000
    eps_unit: str = "games"
    target_tau: float = 1.0
    target_period: int = 250
    huber_delta: float = 1.0
    double_dqn: bool = True

    def validate(self) -> None:
        super().validate()
        for name in ("rollout_steps", "gradient_steps", "batch_size", "buffer_size", "n_step"):
            check_int(name, getattr(self, name))
        check_int("target_period", self.target_period)
        check_int("learning_starts", self.learning_starts, minimum=0)
        check_int("eps_decay", self.eps_decay, minimum=0)
        check_float("eps_start", self.eps_start, 0.0, 1.0)
        check_float("eps_end", self.eps_end, 0.0, 1.0)
        check_choice("eps_unit", self.eps_unit, ("games", "steps"))
        check_float("target_tau", self.target_tau, 0.0, 1.0, low_open=True)
        check_float("huber_delta", self.huber_delta, 0.0, float("inf"), low_open=True)
        check_bool("double_dqn", self.double_dqn)

    def scaled_fields(self, num_envs: int, max_minibatch: int) -> dict[str, Any]:
        """:meth:`TrainConfig.scaled_to` for DQN: the replay ring keeps the same plies of
        every game and fills with as many before learning starts; each ply is replayed as
        often (the windows per update grow with the games: the batch up to ``max_minibatch``,
        then more gradient steps); the target network is refreshed after as many new plies;
        the learning rate follows the square root of the batch's growth. Epsilon decays over
        games or plies, which the games at once do not change."""
        growth = num_envs / self.num_envs
        batch = max(1, min(round(self.batch_size * growth), max(self.batch_size, max_minibatch)))
        steps = max(1, round(self.gradient_steps * self.batch_size * growth / batch))
        # gradient steps per ply times the period: the same plies between target refreshes
        period = max(1, round(self.target_period * steps / (self.gradient_steps * growth)))
        return {
            "num_envs": num_envs,
            "buffer_size": self.buffer_rows * num_envs,
            "learning_starts": round(self.learning_starts * growth),
            "batch_size": batch,
            "gradient_steps": steps,
            "target_period": period,
            "learning_rate": sqrt_scaled_rate(self.learning_rate, batch / self.batch_size),
        }

    @property
    def first_learning_update(self) -> int:
        """The first update (from 1) that ends with ``learning_starts`` plies and an n-step
        window stored: the one that takes the first gradient steps."""
        rows = -(-self.learning_starts // self.num_envs)  # time rows before learning
        return max(1, -(-rows // self.rollout_steps), -(-(self.n_step + 1) // self.rollout_steps))

    @property
    def optimizer_steps(self) -> int:
        """Gradient steps of the run: ``gradient_steps`` per update from
        :attr:`first_learning_update` on."""
        return max(1, self.num_updates - self.first_learning_update + 1) * self.gradient_steps

    def check_schedule(self) -> None:
        """Also refuses a run that ends before its first gradient step."""
        super().check_schedule()
        if self.first_learning_update > self.num_updates:
            fail(
                "learning_starts",
                self.learning_starts,
                f"the run's {self.num_updates} update(s) of {self.steps_per_update} plies end "
                f"before learning starts (after learning_starts plies and {self.n_step + 1} "
                "plies of every game for the n-step targets); lower it or raise total_steps",
            )

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.rollout_steps

    @property
    def buffer_rows(self) -> int:
        """Time rows of the replay ring (each row holds one ply of every env)."""
        return max(self.buffer_size // self.num_envs, self.n_step + 1)


Config = DQNConfig
#: the DQN preset of a game (:func:`jaxgames.agents.presets.default_config`)
default_config = functools.partial(presets.default_config, "dqn")


# ----------------------------------------------------------------------------- pure pieces
def nstep_return(
    rewards: jax.Array, dones: jax.Array, discounts: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """n-step negamax return of windows of n rows (module docstring): rewards float32[..., n]
    (mover at t+k's view), dones bool[..., n], discounts float32[..., n] (``sign * gamma **
    plies``) -> (R float32[...] from the mover at t, c_n float32[...] the bootstrap factor, 0 if
    the game ended in the window)."""
    rewards, dones, discounts = (x.astype(jnp.float32) for x in (rewards, dones, discounts))
    coef = jnp.ones(rewards.shape[:-1], jnp.float32)
    ret = jnp.zeros(rewards.shape[:-1], jnp.float32)
    for k in range(rewards.shape[-1]):  # n is small and static: unrolled
        ret = ret + coef * rewards[..., k]
        coef = coef * discounts[..., k] * (1.0 - dones[..., k])
    return ret, coef


def epsilon_greedy(key: jax.Array, q: jax.Array, mask: jax.Array, epsilon: jax.Array) -> jax.Array:
    """q float32[..., A], mask bool[..., A], epsilon float32[] -> action int32[...]: with
    probability epsilon a uniformly random legal move, else the legal argmax of q."""
    k_coin, k_rand = jax.random.split(key)
    greedy = greedy_masked(q, mask)
    random = jax.random.categorical(k_rand, jnp.where(mask, 0.0, MASK_MIN), axis=-1)
    explore = jax.random.uniform(k_coin, greedy.shape) < epsilon
    return jnp.where(explore, random.astype(jnp.int32), greedy)


def epsilon_at(config: DQNConfig, games: jax.Array, steps: jax.Array) -> jax.Array:
    """Linear epsilon schedule (float32[]) at ``games`` completed games / ``steps`` plies."""
    done = games if config.eps_unit == "games" else steps
    frac = jnp.clip(done.astype(jnp.float32) / max(config.eps_decay, 1), 0.0, 1.0)
    if config.eps_decay == 0:
        frac = jnp.float32(1.0)
    return jnp.float32(config.eps_start) + frac * jnp.float32(config.eps_end - config.eps_start)


def max_legal_q(q: jax.Array, mask: jax.Array) -> jax.Array:
    """Largest Q among legal moves: float32[...] (0 where no move is legal)."""
    return jnp.where(mask.any(-1), jnp.max(masked_logits(q, mask), axis=-1), 0.0)


# ----------------------------------------------------------------------------- agent
#: softmax temperature turning Q-values into a search prior: a Q gap of 0.1 is a factor e
Q_PRIOR_TEMPERATURE = 0.1


@dataclasses.dataclass(frozen=True, eq=False)
class QPolicy(NetworkPolicy):
    """:class:`NetworkPolicy` of a Q-network: Q-values are the logits, ``value`` the largest
    legal Q (float32[], mover's view)."""

    def value(self, state: Any) -> jax.Array:
        q, _ = self.agent.apply(self.params, state.observation)
        return max_legal_q(q, state.legal_action_mask)

    def search_outputs(self, state: Any) -> tuple[jax.Array, jax.Array]:
        """(Q / :data:`Q_PRIOR_TEMPERATURE` float32[A], largest legal Q float32[]): Q-values lie
        in [-1, 1], so their plain softmax would be a nearly uniform prior."""
        q, _ = self.agent.apply(self.params, state.observation)
        return q / Q_PRIOR_TEMPERATURE, max_legal_q(q, state.legal_action_mask)


@dataclasses.dataclass(frozen=True)
class QAgent(Agent):
    """A network whose policy head is read as Q-values (the value head is unused)."""

    def policy(self, params: Any, greedy: bool = True) -> QPolicy:
        return QPolicy(self, params, greedy)


# ----------------------------------------------------------------------------- training
class Transition(NamedTuple):
    """One ply as stored in the replay buffer (leaves [num_envs, ...] when added)."""

    obs: jax.Array  # float32[*obs_shape] state before the move, mover's view
    mask: jax.Array  # bool[A] legal moves of obs
    action: jax.Array  # int32
    reward: jax.Array  # float32 rewards[mover] of this row, times gamma ** (plies - 1)
    done: jax.Array  # bool this ply ended the game (the next row of this env is a fresh game)
    # float32 sign * gamma ** plies: the row's discount, negated where the other player
    # moves next (negamax; module docstring)
    discount: jax.Array


@struct.dataclass
class DQNState:
    """The train state (checkpointed as one pytree)."""

    params: Any
    target_params: Any
    opt_state: Any
    env_state: Any  # batched game states [num_envs]
    buffer: TrajectoryBufferState
    key: jax.Array  # uint32[2]
    update: jax.Array  # int32[] updates done
    games: jax.Array  # int32[] self-play games completed (all envs)
    grad_steps: jax.Array  # int32[] gradient steps done


class NStepBatch(NamedTuple):
    """A minibatch of n-step transitions (leading axis B)."""

    obs: jax.Array  # float32[B, *obs_shape]  s_t
    mask: jax.Array  # bool[B, A]             legal moves of s_t
    action: jax.Array  # int32[B]             a_t
    ret: jax.Array  # float32[B]              R_t (mover at t's view)
    discount: jax.Array  # float32[B]         c_n (0 if the game ended)
    next_obs: jax.Array  # float32[B, *obs_shape]  s_{t+n}
    next_mask: jax.Array  # bool[B, A]        legal moves of s_{t+n}


def record_plies(
    games: TrainingGames, env_state: Any, action: jax.Array, key: jax.Array, gamma: float
) -> tuple[Any, Transition, SelfPlayStep]:
    """Play ``action`` (int32[B]) in the training games -> (next states, the
    :class:`Transition` [B] to store, the :class:`SelfPlayStep` [B])."""
    obs, mask = batch_observation(env_state), env_state.legal_action_mask
    out = games.step(env_state, action, key)
    later, discount = per_ply_discount(gamma, out.plies)
    trans = Transition(
        obs.astype(jnp.float32),
        mask,
        action.astype(jnp.int32),
        out.reward * later,
        out.done,
        out.sign * discount,
    )
    return out.state, trans, out


def nstep_batch(
    buffer: Any, buffer_state: TrajectoryBufferState, rows: jax.Array, envs: jax.Array
) -> NStepBatch:
    """n-step transitions of windows rows int32[B, n + 1] of envs int32[B]: the first n plies
    make the return, the last row is s_{t+n} with its legal mask."""
    n = rows.shape[1] - 1
    seq = buffer.gather(buffer_state, rows[:, :n], envs)  # XLA keeps reward/done/discount
    ends = buffer.gather(buffer_state, rows[:, jnp.array([0, n])], envs)  # s_t and s_{t+n}
    ret, discount = nstep_return(seq.reward, seq.done, seq.discount)
    s, s_n = (jax.tree_util.tree_map(lambda x, i=i: x[:, i], ends) for i in (0, 1))
    return NStepBatch(s.obs, s.mask, s.action, ret, discount, s_n.obs, s_n.mask)


def bootstrap_target(
    batch: NStepBatch, q_next_select: jax.Array, q_next_target: jax.Array
) -> jax.Array:
    """float32[B] y = R + c_n * Q_target(s_{t+n}, a*), a* the legal argmax of ``q_next_select``
    (float32[B, A]), gradient stopped."""
    a_star = greedy_masked(jax.lax.stop_gradient(q_next_select), batch.next_mask)
    q_next = jnp.take_along_axis(q_next_target, a_star[:, None], axis=1)[:, 0]
    q_next = jnp.where(batch.next_mask.any(-1), q_next, 0.0)
    return jax.lax.stop_gradient(batch.ret + batch.discount * q_next)


def huber(x: jax.Array, delta: float) -> jax.Array:
    """Elementwise Huber loss (quadratic within +-delta): float32[...]."""
    a = jnp.abs(x)
    return jnp.where(a <= delta, 0.5 * x**2, delta * (a - 0.5 * delta))


#: the loss metrics of a gradient step (0 before learning starts)
LOSS_METRICS = ("loss", "q_taken", "target", "max_q", "grad_norm")


def dqn_loss(
    agent: Agent, config: DQNConfig, params: Any, target_params: Any, batch: NStepBatch
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Huber loss of Q(s_t, a_t) against :func:`bootstrap_target` -> (float32[], aux)."""
    q = agent.apply(params, batch.obs)[0]
    q_a = jnp.take_along_axis(q, batch.action[:, None], axis=1)[:, 0]
    q_next_target = agent.apply(target_params, batch.next_obs)[0]
    q_next_select = agent.apply(params, batch.next_obs)[0] if config.double_dqn else q_next_target
    target = bootstrap_target(batch, q_next_select, q_next_target)
    loss = huber(q_a - target, config.huber_delta).mean()
    aux = {"loss": loss, "q_taken": q_a.mean(), "target": target.mean()}
    return loss, {**aux, "max_q": max_legal_q(q, batch.mask).mean()}


def gradient_steps(
    agent: Agent,
    optimizer: optax.GradientTransformation,
    buffer: TrajectoryBuffer,
    config: DQNConfig,
    state: DQNState,
    key: jax.Array,
) -> tuple[tuple[Any, Any, Any, jax.Array], dict[str, jax.Array]]:
    """``config.gradient_steps`` Adam steps on replayed n-step windows -> ((params,
    target_params, opt_state, grad_steps), :data:`LOSS_METRICS` averaged)."""

    def grad_step(carry, _):
        params, target_params, opt_state, grad_steps, buf, key = carry
        key, k_sample = jax.random.split(key)
        rows, envs = buffer.sample_indices(buf, k_sample, config.batch_size, config.n_step + 1)
        batch = distributed.constrain_data(nstep_batch(buffer, buf, rows, envs))
        grads, aux = jax.grad(dqn_loss, argnums=2, has_aux=True)(
            agent, config, params, target_params, batch
        )
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        grad_steps = grad_steps + 1
        sync = (grad_steps % config.target_period) == 0
        tau = jnp.where(sync, config.target_tau, 0.0)
        target_params = jax.tree_util.tree_map(
            lambda t, p: (1 - tau) * t + tau * p, target_params, params
        )
        aux["grad_norm"] = optax.tree.norm(grads)
        return (params, target_params, opt_state, grad_steps, buf, key), aux

    carry = (state.params, state.target_params, state.opt_state, state.grad_steps)
    (*learned, _, _), aux = jax.lax.scan(
        grad_step, (*carry, state.buffer, key), None, length=config.gradient_steps
    )
    return tuple(learned), {k: aux[k].mean() for k in LOSS_METRICS}


def make_algorithm(config: DQNConfig, partners: Mapping[str, Any] | None = None) -> Algorithm:
    """DQN as an :class:`~jaxgames.agents.algorithm.Algorithm` for the run driver."""
    check_config_type(config, DQNConfig)
    env = config.make_env()
    agent = make_agent(config, env, QAgent)
    optimizer = make_optimizer(config, config.optimizer_steps)
    n_envs = config.num_envs
    buffer = make_trajectory_buffer(config.buffer_rows, n_envs)
    games = make_training_games(env, n_envs, config.partners, partners, config.max_opening_plies)

    def init(key: jax.Array) -> DQNState:
        k_params, k_env, k_run = jax.random.split(key, 3)
        params = agent.init_params(k_params)
        env_state = games.init(k_env)
        item = Transition(
            jax.ShapeDtypeStruct(agent.observation_shape, jnp.float32),
            jax.ShapeDtypeStruct((env.num_actions,), jnp.bool_),
            jax.ShapeDtypeStruct((), jnp.int32),
            jax.ShapeDtypeStruct((), jnp.float32),
            jax.ShapeDtypeStruct((), jnp.bool_),
            jax.ShapeDtypeStruct((), jnp.float32),
        )
        # distinct buffers for every leaf: the driver donates the whole state to the chunk
        target = jax.tree_util.tree_map(jnp.copy, params)
        opt_state, buf = optimizer.init(params), buffer.init(item)
        counters = [jnp.zeros((), jnp.int32) for _ in range(3)]  # update, games, grad_steps
        return DQNState(params, target, opt_state, env_state, buf, k_run, *counters)

    def act(state: DQNState, _):
        key, k_act, k_reset = jax.random.split(state.key, 3)
        env_state = state.env_state
        q, _ = agent.apply(state.params, batch_observation(env_state))
        eps = epsilon_at(config, state.games, state.buffer.count * n_envs)
        action = epsilon_greedy(k_act, q, env_state.legal_action_mask, eps)
        next_state, trans, out = record_plies(games, env_state, action, k_reset, config.gamma)
        stats = (trans.done, out.outcome[:, 0], out.length, out.reward, eps)
        state = state.replace(
            env_state=next_state,
            buffer=buffer.add(state.buffer, trans),
            key=key,
            games=state.games + trans.done.sum().astype(jnp.int32),
        )
        return state, stats

    def update(state: DQNState, _) -> tuple[DQNState, dict[str, jax.Array]]:
        state, (done, p0_reward, length, reward, eps) = jax.lax.scan(
            act, state, None, length=config.rollout_steps
        )
        key, k_learn = jax.random.split(state.key)
        state = state.replace(key=key)
        ready = (state.buffer.count * n_envs >= config.learning_starts) & buffer.can_sample(
            state.buffer, config.n_step + 1
        )
        learned = (state.params, state.target_params, state.opt_state, state.grad_steps)
        (params, target, opt_state, grad_steps), metrics = jax.lax.cond(
            ready,
            lambda _: gradient_steps(agent, optimizer, buffer, config, state, k_learn),
            lambda _: (learned, {k: jnp.float32(0.0) for k in LOSS_METRICS}),
            None,
        )
        metrics["learning"] = ready.astype(jnp.float32)
        metrics.update(games.episode_stats(done, p0_reward, length, reward), epsilon=eps.mean())
        learned = dict(params=params, target_params=target, opt_state=opt_state)
        return state.replace(**learned, grad_steps=grad_steps, update=state.update + 1), metrics

    def finish(state: DQNState, stacked, means) -> tuple[DQNState, dict[str, jax.Array]]:
        games_total = state.games.astype(jnp.float32)
        return state, {**means, "episodes": stacked["episodes"].sum(), "games_total": games_total}

    def with_params(state: DQNState, params: Any) -> DQNState:
        """The target network starts as a copy of the online one, as in init."""
        return state.replace(params=params, target_params=jax.tree_util.tree_map(jnp.copy, params))

    # buffer leaves [rows, num_envs, ...]
    partition = distributed.partition_by_field(env_state=0, buffer=1)
    fields = dict(finish=finish, partition=partition, with_params=with_params)
    return chunked_algorithm("dqn", config, env, agent, init, update, **fields)


def make_train(config: DQNConfig, partners: Mapping[str, Any] | None = None):
    """``train(key) -> (DQNState, metrics)``: the whole run as one pure, jittable,
    vmappable function (metrics float32[num_chunks] per name); ``partners``: the policies of
    ``config.partners`` (:func:`~jaxgames.agents.algorithm.check_standalone`)."""
    check_standalone(config, partners)
    return make_algorithm(config, partners).make_train()

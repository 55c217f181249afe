"""What the algorithms that learn from fresh rollouts share (PPO, Gumbel AlphaZero).

Each update: play ``num_steps`` plies in ``num_envs`` games, build targets with negamax
TD(lambda) (:func:`jaxgames.agents.common.negamax_gae`), then ``update_epochs`` passes over the
``num_envs * num_steps`` transitions in ``num_minibatches`` shuffled minibatches, one Adam step
each. The config fields, the optimiser and the epoch/minibatch loop live here once; each
algorithm brings its acting rule and its loss.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
import optax

from jaxgames import distributed
from jaxgames.training.config import TrainConfig, _fail, check_bool, check_float, check_int


@dataclasses.dataclass(frozen=True)
class RolloutConfig(TrainConfig):
    """Fields of rollout-then-learn algorithms (plus the shared :class:`TrainConfig` fields).

    num_steps:        plies per env per rollout (batch = num_envs * num_steps transitions)
    update_epochs:    passes over each batch
    num_minibatches:  minibatches per pass (must divide num_envs * num_steps)
    gamma, gae_lambda: discount and (GAE / TD) lambda, negamax form
    vf_coef:          value-loss weight
    anneal_lr:        linear learning-rate decay to 0 over the run
    """

    num_steps: int = 16
    update_epochs: int = 4
    num_minibatches: int = 4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    vf_coef: float = 0.5
    anneal_lr: bool = True

    def validate(self) -> None:
        super().validate()
        check_int("num_steps", self.num_steps)
        check_int("update_epochs", self.update_epochs)
        check_int("num_minibatches", self.num_minibatches)
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            _fail(
                "num_minibatches",
                self.num_minibatches,
                f"must divide num_envs * num_steps = {self.num_envs * self.num_steps}",
            )
        check_float("gamma", self.gamma, 0.0, 1.0)
        check_float("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_float("vf_coef", self.vf_coef, 0.0, float("inf"))
        check_bool("anneal_lr", self.anneal_lr)

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def steps_per_update(self) -> int:
        return self.batch_size


def make_optimizer(config: RolloutConfig) -> optax.GradientTransformation:
    """Adam with global-norm clipping and (optionally) linear learning-rate decay to 0."""
    lr: Any = config.learning_rate
    if config.anneal_lr:
        steps = config.num_updates * config.update_epochs * config.num_minibatches
        lr = optax.linear_schedule(config.learning_rate, 0.0, steps)
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(lr, eps=1e-5))


def minibatch_epochs(
    loss_fn: Callable[[Any, Any], tuple[jax.Array, dict[str, jax.Array]]],
    optimizer: optax.GradientTransformation,
    params: Any,
    opt_state: Any,
    key: jax.Array,
    data: Any,
    num_epochs: int,
    num_minibatches: int,
) -> tuple[Any, Any, jax.Array, dict[str, jax.Array]]:
    """``num_epochs`` passes over ``data`` (a pytree of arrays with leading axis N), each a fresh
    random permutation cut into ``num_minibatches`` minibatches, one optimiser step per minibatch.

    ``loss_fn(params, minibatch) -> (loss float32[], aux dict of float32[])``.
    Returns ``(params, opt_state, key, aux)`` with every aux entry (plus ``grad_norm``) stacked
    float32[num_epochs, num_minibatches]. Minibatches are split over devices when a mesh is set.
    """
    n = jax.tree_util.tree_leaves(data)[0].shape[0]

    def epoch(carry, _):
        params, opt_state, key = carry
        key, k_perm = jax.random.split(key)
        perm = jax.random.permutation(k_perm, n)
        mbs = jax.tree_util.tree_map(lambda x: x[perm].reshape(num_minibatches, -1, *x.shape[1:]), data)
        mbs = distributed.constrain_data(mbs, axis=1)  # minibatches split over devices (if any)

        def minibatch(carry, mb):
            params, opt_state = carry
            grads, aux = jax.grad(loss_fn, has_aux=True)(params, mb)
            upd, opt_state = optimizer.update(grads, opt_state, params)
            aux["grad_norm"] = optax.tree.norm(grads)
            return (optax.apply_updates(params, upd), opt_state), aux

        (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), mbs)
        return (params, opt_state, key), aux

    (params, opt_state, key), aux = jax.lax.scan(epoch, (params, opt_state, key), None, length=num_epochs)
    return params, opt_state, key, aux

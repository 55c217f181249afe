"""Policy/value networks shared by every algorithm (Flax linen).

Every network maps a batch of observations to policy logits and a scalar value::

    obs    float32[B, *env.observation_shape]   (an (H, W, C) board or a flat vector)
      |
    torso  (MLP | CNN | ResNet tower)
      |
      +--> policy head  Dense(num_actions)      -> logits float32[B, num_actions]
      +--> value head   Dense(1) -> tanh        -> value  float32[B]   in [-1, 1]

The value is from the point of view of the player to move (as the observation is), and
``tanh`` matches the zero-sum outcomes in [-1, 1]. DQN reads the "logits" head as Q-values
(``value_activation="none"`` there).

    net = make_network("cnn", num_actions=36)
    params = net.init(key, jnp.zeros((1, 6, 6, 2)))
    logits, value = net.apply(params, obs_batch)
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any, Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

_ACTIVATIONS = {"relu": nn.relu, "tanh": nn.tanh, "gelu": nn.gelu}
#: ``dtype`` option -> the dtype the layers compute in (parameters stay float32)
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}


def one_key_at_a_time(init: Callable) -> Callable:
    """``init(key, shape, dtype)`` that, when vmapped over keys, runs them one after the other
    (``lax.map``) instead of as one batched op: the same values per key, bit for bit.

    Why: under ``jit(vmap(init))`` the orthogonal initialiser's QR becomes a batched LAPACK
    call, and two of them run concurrently can deadlock XLA:CPU's thread pool on a 2-core
    machine (docs/known_issues/jit_vmap_init_hang.py). One key at a time there is no batched QR.
    """

    def wrapped(key: jax.Array, shape: Sequence[int], dtype: Any = jnp.float32) -> jax.Array:
        @custom_vmap
        def one(k):
            return init(k, shape, dtype)

        @one.def_vmap
        def rule(axis_size, in_batched, k):
            if not in_batched[0]:
                return one(k), False
            return jax.lax.map(one, k), True

        return one(key)

    return wrapped


def orthogonal(scale: float) -> Callable:
    """Orthogonal initialiser (Saxe et al. 2014), safe to vmap over keys (one at a time)."""
    return one_key_at_a_time(nn.initializers.orthogonal(scale))


def _dtype(name: str) -> Any:
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r}; valid: {', '.join(DTYPES)}")
    return DTYPES[name]


def _activation(name: str):
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; valid: {', '.join(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]


class Heads(nn.Module):
    """Policy and value heads on a flat feature vector float32[B, F].

    value_activation: ``"tanh"`` (values in [-1, 1]) or ``"none"``. The heads compute in
    ``dtype`` and return float32.
    """

    num_actions: int
    value_activation: str = "tanh"
    dtype: str = "float32"

    @nn.compact
    def __call__(self, features: jax.Array) -> tuple[jax.Array, jax.Array]:
        dense = functools.partial(nn.Dense, dtype=_dtype(self.dtype))
        logits = dense(self.num_actions, kernel_init=orthogonal(0.01), name="policy")(features)
        value = dense(1, kernel_init=orthogonal(1.0), name="value")(features)[..., 0]
        logits, value = logits.astype(jnp.float32), value.astype(jnp.float32)
        if self.value_activation == "tanh":
            value = jnp.tanh(value)
        return logits, value


class MLP(nn.Module):
    """``layers`` dense layers of width ``hidden`` on the flattened observation.

    Input float32[B, ...] (any observation shape) -> (logits float32[B, A], value float32[B]).
    The animal-shogi article used ``hidden=128, layers=6``. ``dtype="bfloat16"`` computes the
    layers in bfloat16 with float32 parameters (mixed precision, Micikevicius et al. 2018):
    the fast matmuls of GPUs and TPUs; on CPU it is slower than float32.
    """

    num_actions: int
    hidden: int = 128
    layers: int = 4
    activation: str = "relu"
    value_activation: str = "tanh"
    dtype: str = "float32"

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        act = _activation(self.activation)
        dtype = _dtype(self.dtype)
        x = obs.reshape(obs.shape[0], -1).astype(dtype)
        for _ in range(self.layers):
            x = act(nn.Dense(self.hidden, kernel_init=orthogonal(np.sqrt(2)), dtype=dtype)(x))
        return Heads(self.num_actions, self.value_activation, self.dtype)(x)


def _as_image(obs: jax.Array, name: str, dtype: str = "float32") -> jax.Array:
    if obs.ndim != 4:
        raise ValueError(
            f"network {name!r} needs board observations float32[B, H, W, C]; "
            f"got shape {obs.shape}. Use network='mlp' for flat observations."
        )
    return obs.astype(_dtype(dtype))


class PatchConv(nn.Module):
    """``k x k`` convolution with SAME padding written as shifted slices + one matmul (im2col).

    Same function class and parameter count as ``nn.Conv(features, (k, k), padding="SAME")``
    but much faster on CPU for the tiny channel counts of board-game nets (XLA:CPU's
    convolution kernels are slow there, especially the backward pass).
    Input float32[B, H, W, C] -> float32[B, H, W, features].
    """

    features: int
    kernel: int
    dtype: str = "float32"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        k = self.kernel
        lo = (k - 1) // 2
        h, w = x.shape[1], x.shape[2]
        xp = jnp.pad(x, ((0, 0), (lo, k - 1 - lo), (lo, k - 1 - lo), (0, 0)))
        patches = jnp.concatenate(
            [xp[:, i : i + h, j : j + w, :] for i in range(k) for j in range(k)], axis=-1
        )
        return nn.Dense(self.features, dtype=_dtype(self.dtype))(patches)


class CNN(nn.Module):
    """Small convolutional net: conv layers (``channels``, ``kernel`` x ``kernel``, SAME padding,
    ReLU), then dense layers ``dense``, then the heads.

    Input float32[B, H, W, C] -> (logits float32[B, A], value float32[B]).
    The 6x6-othello article used channels (4, 8, 16, 32), 2x2 kernels and dense (256, 256).
    ``conv="patches"`` (default) computes the convolutions as im2col matmuls (:class:`PatchConv`;
    why in its docstring), ``conv="xla"`` with ``nn.Conv``; same function class.
    """

    num_actions: int
    channels: Sequence[int] = (4, 8, 16, 32)
    kernel: int = 2
    dense: Sequence[int] = (256, 256)
    value_activation: str = "tanh"
    conv: str = "patches"
    dtype: str = "float32"

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _as_image(obs, "cnn", self.dtype)
        dtype = _dtype(self.dtype)
        for c in self.channels:
            if self.conv == "patches":
                x = nn.relu(PatchConv(int(c), self.kernel, self.dtype)(x))
            else:
                conv = nn.Conv(int(c), (self.kernel, self.kernel), padding="SAME", dtype=dtype)
                x = nn.relu(conv(x))
        x = x.reshape(x.shape[0], -1)
        for d in self.dense:
            x = nn.relu(nn.Dense(int(d), dtype=dtype)(x))
        return Heads(self.num_actions, self.value_activation, self.dtype)(x)


class ResidualBlock(nn.Module):
    """Pre-norm residual block: x + conv3x3(relu(LN(conv3x3(relu(LN(x)))))), computed in the
    input's dtype."""

    channels: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        conv = functools.partial(nn.Conv, self.channels, (3, 3), padding="SAME", dtype=x.dtype)
        norm = functools.partial(nn.LayerNorm, dtype=x.dtype)
        y = conv()(nn.relu(norm()(x)))
        y = conv()(nn.relu(norm()(y)))
        return x + y


class ResNet(nn.Module):
    """AlphaZero-style tower: conv stem, ``blocks`` residual blocks of ``channels`` channels,
    then small policy/value convolutions and the heads.

    Input float32[B, H, W, C] -> (logits float32[B, A], value float32[B]).
    LayerNorm instead of BatchNorm keeps the network stateless (no batch statistics).
    ``dtype`` as for :class:`MLP` (the policy and value heads compute in float32).
    """

    num_actions: int
    blocks: int = 4
    channels: int = 64
    value_hidden: int = 128
    value_activation: str = "tanh"
    dtype: str = "float32"

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _as_image(obs, "resnet", self.dtype)
        dtype = _dtype(self.dtype)
        x = nn.Conv(self.channels, (3, 3), padding="SAME", dtype=dtype)(x)
        for _ in range(self.blocks):
            x = ResidualBlock(self.channels)(x)
        x = nn.relu(nn.LayerNorm(dtype=dtype)(x))
        p = nn.relu(nn.Conv(2, (1, 1), dtype=dtype)(x)).reshape(x.shape[0], -1)
        v = nn.relu(nn.Conv(1, (1, 1), dtype=dtype)(x)).reshape(x.shape[0], -1)
        v = nn.relu(nn.Dense(self.value_hidden, dtype=dtype)(v))
        logits = nn.Dense(self.num_actions, kernel_init=orthogonal(0.01), name="policy")(p)
        value = nn.Dense(1, name="value")(v)[..., 0]
        logits, value = logits.astype(jnp.float32), value.astype(jnp.float32)
        if self.value_activation == "tanh":
            value = jnp.tanh(value)
        return logits, value


NETWORKS: dict[str, type[nn.Module]] = {"mlp": MLP, "cnn": CNN, "resnet": ResNet}


def network_options(name: str) -> dict[str, Any]:
    """Keyword options (and defaults) accepted by network ``name``, excluding ``num_actions``."""
    if name not in NETWORKS:
        raise ValueError(f"unknown network {name!r}; valid networks: {', '.join(sorted(NETWORKS))}")
    sig = inspect.signature(NETWORKS[name])
    return {
        p: v.default
        for p, v in sig.parameters.items()
        if p not in ("num_actions", "parent", "name")
    }


#: layers / residual blocks at most: each one is unrolled into the compiled program
MAX_DEPTH = 256
#: convolution kernels at most this wide (the largest board is 16x16)
MAX_KERNEL = 16


def machine_memory() -> int:
    """Bytes of physical memory of this machine (0 if unknown)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return 0


def parameter_lower_bound(name: str, options: dict[str, Any]) -> int:
    """Parameters of network ``name`` with ``options`` (defaults filled in), counting only
    what does not depend on the game (the first layer's input and the heads are left out):
    a lower bound of the real count, for :func:`check_network`."""
    o = {**network_options(name), **options}
    if name == "mlp":
        return max(int(o["layers"]) - 1, 0) * int(o["hidden"]) ** 2 + int(o["hidden"])
    if name == "cnn":
        chans, dense = [int(c) for c in o["channels"]], [int(d) for d in o["dense"]]
        k2 = int(o["kernel"]) ** 2
        conv = sum(k2 * a * b for a, b in zip([1] + chans, chans))
        widths = [chans[-1] if chans else 1] + dense
        return conv + sum(a * b for a, b in zip(widths, widths[1:]))
    if name == "resnet":
        ch = int(o["channels"])
        return int(o["blocks"]) * 2 * 9 * ch * ch + 9 * ch + int(o["value_hidden"])
    return 0


def check_network(name: str, options: dict[str, Any]) -> None:
    """``ValueError`` for an unknown network ``name``, an unknown option or a bad option value
    (pure: nothing is built, so configs can call it on every change). Sizes are bounded by
    what this machine can hold: training keeps about four float32 copies of the parameters
    (weights, gradients, two Adam moments), which must fit in half of its memory; depths are
    at most :data:`MAX_DEPTH`, kernels at most :data:`MAX_KERNEL`."""
    valid = network_options(name)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown} for network {name!r}; valid options: {', '.join(valid)}"
        )
    for k, v in options.items():
        sizes = v if isinstance(v, (list, tuple)) else [v]
        if k in ("hidden", "layers", "blocks", "channels", "kernel", "dense", "value_hidden"):
            if not sizes or not all(
                isinstance(s, (int, np.integer)) and s >= (0 if k in ("layers", "blocks") else 1)
                for s in sizes
            ):
                raise ValueError(f"network {name!r}: option {k}={v!r} must be positive integer(s)")
        if k == "value_activation" and v not in ("tanh", "none"):
            raise ValueError(f"network {name!r}: value_activation={v!r} must be 'tanh' or 'none'")
        if k == "activation":
            _activation(v)
        if k == "dtype":
            _dtype(v)
        if k == "conv" and v not in ("patches", "xla"):
            raise ValueError(f"network {name!r}: conv={v!r} must be 'patches' or 'xla'")
        if k in ("layers", "blocks") and max(sizes, default=0) > MAX_DEPTH:
            raise ValueError(
                f"network {name!r}: {k}={v!r} is deeper than this library compiles (at most "
                f"{MAX_DEPTH})"
            )
        if k == "kernel" and max(sizes, default=0) > MAX_KERNEL:
            raise ValueError(
                f"network {name!r}: kernel={v!r} is wider than any board (at most {MAX_KERNEL})"
            )
    try:
        params = parameter_lower_bound(name, options)
    except (TypeError, ValueError):  # sizes of the wrong shape: the network reports them
        return
    memory = machine_memory()
    if memory and 16 * params > memory // 2:
        sizes = ", ".join(f"{k}={v!r}" for k, v in options.items())
        raise ValueError(
            f"network {name!r} with {sizes} has at least {params:.3g} parameters: training "
            f"needs about {16 * params / 2**30:,.1f} GiB for them (weights, gradients, optimiser "
            f"state), more than half of this machine's {memory / 2**30:.0f} GiB of memory"
        )


def can_widen(name: str, narrow: dict[str, Any], wide: dict[str, Any]) -> bool:
    """Whether :func:`widen_params` takes network ``name`` with options ``narrow`` to ``wide``:
    both MLPs of the same depth and activations, ``wide`` wider."""
    if name != "mlp":
        return False
    a, b = {**network_options(name), **narrow}, {**network_options(name), **wide}
    others = [k for k in a if k != "hidden"]
    return all(a[k] == b[k] for k in others) and a["hidden"] < b["hidden"]


def widen_params(narrow: Any, fresh: Any) -> Any:
    """The parameters of a wider MLP that computes exactly what ``narrow`` computes.

    ``fresh`` is an initialisation of the wider network (same depth, ``hidden`` H' >= H), the
    Net2WiderNet step of Chen et al. (2016) with zero outgoing weights instead of split
    copies, so the new units start distinct (copies would get equal gradients forever).
    Per dense layer with kernel float32[I', O'] (narrow: [I, O]) and bias float32[O']:

        kernel[:I, :O] = narrow kernel     the old units read the old units as before
        kernel[I:, :O] = 0                 ...and nothing of the new units: their outputs,
                                           and so the heads' logits and value, are unchanged
        kernel[:, O:], bias[O:] = fresh    the new units read everything; the next layer's
                                           old units read them with the zero rows above

    The heads have O' = O, so their new input rows are zero. Training then moves the zero
    rows first (their gradients are the new units' activations times the upstream ones).
    """

    def grow(old, new):
        old, new = jnp.asarray(old), jnp.asarray(new)
        if old.shape == new.shape:
            return old
        if (
            old.ndim != new.ndim
            or old.ndim not in (1, 2)
            or any(a > b for a, b in zip(old.shape, new.shape))
        ):
            raise ValueError(f"cannot widen a parameter of shape {old.shape} to {new.shape}")
        if old.ndim == 1:
            return new.at[: old.shape[0]].set(old)
        rows, cols = old.shape
        return new.at[:rows, :cols].set(old).at[rows:, :cols].set(0.0)

    return jax.tree_util.tree_map(grow, narrow, fresh)


def add_input_rows(params: Any, rows: np.ndarray, like: Any) -> Any:
    """The parameters of an MLP shaped as ``like`` in its first layer's inputs (the run's
    network: arrays or ``jax.eval_shape`` structs) that computes of them what ``params`` (the
    same MLP reading ``len(rows)`` inputs) computes of its own: input ``i`` of the old network
    is input ``rows[i]`` of the new one, and the first dense layer reads every other input with
    zero weights. Its kernel float32[I, H] becomes float32[I', H] (I' = ``like``'s inputs) with
    ``kernel[rows] = old kernel``, the other rows 0; every other parameter stays (a wider
    ``like`` is :func:`widen_params`'s job). The new inputs start ignored, and training moves
    their weights as any other (their gradient is the input times the first layer's upstream
    gradient). Used to give a trained network more input features (``init_from`` an agent
    reading fewer, e.g. the observation alone)."""
    inner = params["params"]
    first = jnp.asarray(inner["Dense_0"]["kernel"])
    num_inputs = like["params"]["Dense_0"]["kernel"].shape[0]
    if first.shape[0] != len(rows) or num_inputs < len(rows):
        raise ValueError(
            f"cannot move a first layer of {first.shape[0]} inputs to rows {len(rows)} of "
            f"{num_inputs}"
        )
    kernel = jnp.zeros((num_inputs, first.shape[1]), first.dtype).at[jnp.asarray(rows)].set(first)
    return {**params, "params": {**inner, "Dense_0": {**inner["Dense_0"], "kernel": kernel}}}


def make_network(name: str, num_actions: int, **options: Any) -> nn.Module:
    """Build network ``name`` ("mlp", "cnn", "resnet") with a policy head of ``num_actions``.

    Raises ``ValueError`` for an unknown name, an unknown option or a non-positive size.
    """
    check_network(name, options)
    if not isinstance(num_actions, (int, np.integer)) or num_actions < 1:
        raise ValueError(f"num_actions must be a positive int, got {num_actions!r}")
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    return NETWORKS[name](num_actions=int(num_actions), **options)

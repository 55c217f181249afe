"""Networks: shapes for every game's observation, value range, factory errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.agents.networks import (
    NETWORKS,
    ResidualBlock,
    can_widen,
    make_network,
    network_options,
    widen_params,
)

SMALL = {
    "mlp": {"hidden": 16, "layers": 2},
    "cnn": {"channels": (4, 8), "dense": (16,)},
    "resnet": {"blocks": 1, "channels": 8, "value_hidden": 8},
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_output_shapes_and_value_range(name, key):
    obs_shape = (4, 3, 5)  # non-square, odd channel count: nothing assumes a square board
    net = make_network(name, num_actions=7, **SMALL[name])
    obs = jax.random.normal(key, (5, *obs_shape)) * 10.0
    logits, value = jax.jit(lambda k, o: net.apply(net.init(k, o[:1]), o))(key, obs)
    assert logits.shape == (5, 7) and logits.dtype == jnp.float32
    assert value.shape == (5,) and value.dtype == jnp.float32
    assert bool(jnp.all(jnp.abs(value) <= 1.0))
    assert bool(jnp.all(jnp.isfinite(logits)))


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_bfloat16_computes_the_float32_function_with_the_same_parameters(name, key):
    obs = jax.random.normal(key, (16, 4, 3, 5))
    wide = make_network(name, num_actions=7, **SMALL[name])
    half = make_network(name, num_actions=7, dtype="bfloat16", **SMALL[name])
    params = jax.jit(wide.init)(key, obs[:1])
    same = jax.tree_util.tree_map(
        lambda a, b: a.dtype == b.dtype and a.shape == b.shape,
        params,
        jax.eval_shape(half.init, key, obs[:1]),
    )
    assert all(jax.tree_util.tree_leaves(same))  # float32 parameters either way
    (l32, v32), (l16, v16) = jax.jit(wide.apply)(params, obs), jax.jit(half.apply)(params, obs)
    assert l16.dtype == v16.dtype == jnp.float32
    scale = float(jnp.abs(l32).max()) + float(jnp.abs(v32).max())
    error = max(float(jnp.abs(l32 - l16).max()), float(jnp.abs(v32 - v16).max()))
    assert 0.0 < error < 0.05 * scale  # bfloat16 keeps ~3 significant digits, but does round

    def loss(p):
        logits, value = half.apply(p, obs)
        return (logits**2).mean() + (value**2).mean()

    grads = jax.jit(jax.grad(loss))(params)
    assert all(
        g.dtype == jnp.float32 and bool(jnp.isfinite(g).all())
        for g in jax.tree_util.tree_leaves(grads)
    )


def test_mlp_accepts_flat_observations(key):
    net = make_network("mlp", 4, hidden=8, layers=1)
    params = net.init(key, jnp.zeros((1, 10)))
    logits, value = net.apply(params, jnp.ones((3, 10)))
    assert logits.shape == (3, 4) and value.shape == (3,)


@pytest.mark.parametrize("name", ["cnn", "resnet"])
def test_conv_nets_reject_flat_observations(name, key):
    net = make_network(name, 4)
    with pytest.raises(ValueError, match="board observations"):
        net.init(key, jnp.zeros((1, 10)))


def test_value_activation_none_is_unbounded(key):
    net = make_network("mlp", 3, hidden=8, layers=1, value_activation="none")
    params = net.init(key, jnp.zeros((1, 4)))
    params = jax.tree_util.tree_map(lambda p: p * 100.0, params)
    _, value = net.apply(params, jnp.ones((2, 4)) * 10)
    assert float(jnp.max(jnp.abs(value))) > 1.0


def test_every_registered_game_works_with_every_network(key):
    for game in jaxgames.registered_games():
        env = jaxgames.make(game)
        state = env.init(key)
        for name in NETWORKS:
            if name != "mlp" and len(env.observation_shape) != 3:
                continue
            net = make_network(name, env.num_actions, **SMALL[name])
            obs = state.observation[None]
            # shapes only: trace without compiling (the numerics are tested above)
            logits, value = jax.eval_shape(lambda k, o: net.apply(net.init(k, o), o), key, obs)
            assert logits.shape == (1, env.num_actions) and value.shape == (1,)


def test_factory_errors():
    with pytest.raises(ValueError, match="unknown network 'transformer'.*cnn, mlp, resnet"):
        make_network("transformer", 9)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['hiden'\].*hidden"):
        make_network("mlp", 9, hiden=3)
    with pytest.raises(ValueError, match="hidden=0"):
        make_network("mlp", 9, hidden=0)
    for empty in ([], ()):  # no layer width at all
        with pytest.raises(ValueError, match="must be positive integer"):
            make_network("mlp", 9, hidden=empty)
    with pytest.raises(ValueError, match="num_actions"):
        make_network("mlp", 0)
    with pytest.raises(ValueError, match="value_activation"):
        make_network("cnn", 9, value_activation="sigmoid")
    with pytest.raises(ValueError, match="unknown dtype 'float16'.*bfloat16"):
        make_network("resnet", 9, dtype="float16")
    assert network_options("resnet")["blocks"] == 4


def test_zero_depth_is_a_valid_network_and_zero_width_is_not(key):
    """layers=0 (the heads straight on the flat observation: a linear model) and blocks=0 (a
    ResNet without residual blocks) build and run; a width or kernel of 0 is refused."""
    x = jnp.zeros((2, 3, 3, 2))
    for name, opts in (("mlp", {"layers": 0}), ("resnet", {"blocks": 0, "channels": 4})):
        net = make_network(name, 9, **opts)
        logits, value = net.apply(net.init(key, x), x)
        assert logits.shape == (2, 9) and value.shape == (2,)
    for name, opts in (("resnet", {"channels": 0}), ("cnn", {"kernel": 0})):
        with pytest.raises(ValueError, match="must be positive integer"):
            make_network(name, 9, **opts)


def test_residual_block_adds_its_input(key):
    """A residual block whose last convolution is zeroed is the identity (x + 0): the skip
    connection carries the input through."""
    x = jax.random.normal(key, (2, 4, 4, 8))
    block = ResidualBlock(8)
    inner = block.init(jax.random.PRNGKey(1), x)["params"]
    last = jax.tree_util.tree_map(jnp.zeros_like, inner["Conv_1"])
    zeroed = {"params": {**inner, "Conv_1": last}}
    np.testing.assert_allclose(np.asarray(block.apply(zeroed, x)), np.asarray(x), atol=1e-6)


@pytest.mark.parametrize("k", [2, 3])
def test_patch_conv_equals_xla_conv(k, key):
    """The default im2col convolution computes exactly nn.Conv(SAME) with the same weights."""
    import flax.linen as nn

    from jaxgames.agents.networks import PatchConv

    x = jax.random.normal(key, (2, 5, 4, 3))
    pc = PatchConv(6, k)
    p = pc.init(key, x)["params"]["Dense_0"]
    conv = {"params": {"kernel": p["kernel"].reshape(k, k, 3, 6), "bias": p["bias"]}}
    np_y1 = pc.apply({"params": {"Dense_0": p}}, x)
    np_y2 = nn.Conv(6, (k, k), padding="SAME").apply(conv, x)
    assert float(jnp.max(jnp.abs(np_y1 - np_y2))) < 1e-5


def test_widened_mlp_computes_the_same_function_and_its_new_units_learn(key):
    """widen_params: a 16-wide MLP's parameters in a 40-wide one give the same logits and
    values on random inputs; the new units differ between fresh initialisations (they are
    the run's own), and the zero rows of the heads get nonzero gradients (they learn)."""
    narrow_net = make_network("mlp", 9, hidden=16, layers=2)
    wide_net = make_network("mlp", 9, hidden=40, layers=2)
    x = jax.random.normal(key, (32, 27))
    init_wide, apply_wide = jax.jit(wide_net.init), jax.jit(wide_net.apply)
    narrow = jax.jit(narrow_net.init)(jax.random.PRNGKey(1), x)
    fresh_a, fresh_b = (init_wide(jax.random.PRNGKey(s), x) for s in (2, 3))
    wide_a, wide_b = widen_params(narrow, fresh_a), widen_params(narrow, fresh_b)
    want = jax.jit(narrow_net.apply)(narrow, x)
    for wide in (wide_a, wide_b):
        got = apply_wide(wide, x)
        assert all(jnp.allclose(g, w, atol=1e-6) for g, w in zip(got, want))
    k_a, k_b = (w["params"]["Dense_1"]["kernel"] for w in (wide_a, wide_b))
    assert k_a.shape == (40, 40) and not jnp.allclose(k_a[:, 16:], k_b[:, 16:])
    assert jnp.all(k_a[16:, :16] == 0)  # old units read no new unit
    assert jnp.all(wide_a["params"]["Heads_0"]["value"]["kernel"][16:] == 0)

    def loss(p):
        logits, value = wide_net.apply(p, x)
        return jnp.mean(value**2) + jnp.mean(logits**2)

    grads = jax.jit(jax.grad(loss))(wide_a)
    assert jnp.any(grads["params"]["Heads_0"]["value"]["kernel"][16:] != 0)  # the new rows learn


def test_widening_rules():
    assert can_widen("mlp", {"hidden": 16, "layers": 2}, {"hidden": 32, "layers": 2})
    assert can_widen("mlp", {"hidden": 64}, {})  # defaults filled in: 64 < 128
    assert not can_widen("mlp", {"hidden": 32, "layers": 2}, {"hidden": 16, "layers": 2})
    assert not can_widen("mlp", {"hidden": 16, "layers": 2}, {"hidden": 16, "layers": 2})
    assert not can_widen("mlp", {"hidden": 16, "layers": 2}, {"hidden": 32, "layers": 3})
    assert not can_widen("mlp", {"hidden": 16}, {"hidden": 32, "activation": "tanh"})
    assert not can_widen("cnn", {}, {})
    with pytest.raises(ValueError, match=r"cannot widen a parameter of shape \(4, 8\) to \(4, 6\)"):
        widen_params({"k": jnp.zeros((4, 8))}, {"k": jnp.zeros((4, 6))})

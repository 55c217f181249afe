"""Starting a run from a trained agent's network (``config.init_from``): the parameters of a
run directory or a shipped agent, checked against the run's game and network, widened or given
new input features where that computes the same function (Net2Net's function-preserving
widening, Chen et al. 2016)."""

from __future__ import annotations

from typing import Any, Callable

import jax

from jaxgames.agents.algorithm import Algorithm
from jaxgames.agents.networks import add_input_rows, can_widen, network_options, widen_params
from jaxgames.core import feature_channels_within
from jaxgames.runs import load_agent
from jaxgames.specs import agent_run, parse_spec


def _shapes(tree: Any) -> tuple[Any, list[tuple[tuple[int, ...], Any]]]:
    """A parameter tree's structure and its leaves' shapes and dtypes."""
    return jax.tree_util.tree_structure(tree), [
        (x.shape, x.dtype) for x in jax.tree_util.tree_leaves(tree)
    ]


#: network options that change how, not what, the network computes (and ``hidden``, widened)
_SAME_FUNCTION = ("hidden", "dtype", "conv")


def initial_params(algo: Algorithm, echo: Callable[[str], None] | None = None) -> Any:
    """The network parameters of the trained agent ``algo.config.init_from`` names (a run
    directory's newest readable checkpoint, or ``pretrained:<name>``), to start ``algo``'s run
    from. ``ValueError`` ``invalid init_from=...: <why>`` for a spec that is no trained agent
    or cannot be read, an agent of another game, or another network shape or function (an
    option other than the width, dtype or convolution method differs). Two exceptions,
    each the same function: a narrower MLP of the same depth (widened by :func:`fit_params`)
    and an MLP reading fewer input features than the run's, which get zero weights
    (:func:`~jaxgames.agents.networks.add_input_rows`; ``echo`` is told)."""
    config = algo.config
    text = config.init_from

    def bad(why: str) -> ValueError:
        return ValueError(f"invalid init_from={text!r}: {why}")

    try:
        kind = parse_spec(text).kind
        folder = agent_run(text) if kind in ("run", "pretrained") else None
    except ValueError as e:
        raise bad(str(e)) from None
    if folder is None:
        raise bad("must be a run directory or 'pretrained:<name>', not a search or engine")
    try:
        loaded = load_agent(folder)
    except ValueError as e:  # RunNotFoundError, CheckpointError, a corrupt file
        raise bad(str(e)) from None
    theirs = (loaded.env.name, dict(loaded.env.config))  # options at their defaults too
    ours = (algo.env.name, dict(algo.env.config))
    if theirs != ours:
        raise bad(f"it plays {theirs[0]} {theirs[1]}, this run trains {ours[0]} {ours[1]}")
    want = jax.eval_shape(lambda k: algo.params(algo.init(k)), jax.random.PRNGKey(0))
    params = loaded.params
    if loaded.config.features != config.features:
        rows = feature_channels_within(algo.env, loaded.config.features, config.features)
        if rows is None or not loaded.config.network == config.network == "mlp":
            raise bad(
                f"its network reads features {loaded.config.features!r}, this run's "
                f"{config.features!r} (an MLP can start from one reading fewer channels)"
            )
        params = add_input_rows(params, rows, want)
        if echo is not None:
            echo(
                f"adding the input features {config.features!r} to its network "
                f"(zero weights: it computes the same function)"
            )

    ours_shapes, theirs_shapes = _shapes(want), _shapes(params)
    widens = (
        loaded.config.network == config.network
        and can_widen(config.network, loaded.config.net, config.net)
        and ours_shapes[0] == theirs_shapes[0]  # the same tree: only widths differ
    )
    if ours_shapes != theirs_shapes and not widens:
        raise bad(
            f"its network ({loaded.config.network} {loaded.config.net}) does not fit this run's "
            f"({config.network} {config.net})"
        )
    # the same parameters may compute another function (ReLU weights in a tanh MLP): the
    # options must agree but for the width (fit_params widens) and how it is computed
    mine = {**network_options(config.network), **config.net}
    other = {**network_options(loaded.config.network), **loaded.config.net}
    differ = sorted(k for k in mine if k not in _SAME_FUNCTION and mine[k] != other.get(k))
    if loaded.config.network != config.network or differ:
        raise bad(
            f"its network ({loaded.config.network} {loaded.config.net}) is not this run's "
            f"({config.network} {config.net})" + (f": {', '.join(differ)} differ" if differ else "")
        )
    return params


def needs_widening(params: Any, fresh: Any) -> bool:
    """Whether ``params`` from :func:`initial_params` are a narrower network than ``fresh``
    (an initialisation of the run's own network)."""
    return _shapes(params) != _shapes(fresh)


def fit_params(params: Any, fresh: Any) -> Any:
    """``params`` from :func:`initial_params` as parameters of the run's network: as they are,
    or a narrower MLP widened with ``fresh``'s new units (:func:`widen_params`), so the run
    starts from the same function either way and its seed decides the new units."""
    return widen_params(params, fresh) if needs_widening(params, fresh) else params


def start_from(algo: Algorithm, state: Any, params: Any, echo, batched: bool) -> Any:
    """``state`` with ``config.init_from``'s network ``params``, widened with each seed's own
    fresh units where narrower (``batched``: a leading seed axis)."""
    fresh = jax.vmap(algo.params)(state) if batched else algo.params(state)
    if needs_widening(params, jax.tree_util.tree_map(lambda x: x[0], fresh) if batched else fresh):
        echo(f"widening its network to {algo.config.net} (it computes the same function)")

    def start(s: Any, f: Any) -> Any:
        return algo.start_from(s, fit_params(params, f))

    state = jax.vmap(start)(state, fresh) if batched else start(state, fresh)
    echo(f"starting from the parameters of {algo.config.init_from}")
    return state

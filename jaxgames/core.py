"""The game contract every jaxgames game implements: pure, ``jit``/``vmap``-able functions over
an immutable ``flax.struct`` state (``state = env.step(env.init(key), action)``).

Every state has these fields (one game; a leading batch axis under ``vmap``) and an
``observation``, ``float32[env.observation_shape]`` from the mover's view::

    current_player     int32[]              player to move; player 0 always moves first
    legal_action_mask  bool[num_actions]    all False once the game is over
    rewards            float32[2]           by player id; nonzero only on the final step
    terminated         bool[]               the game ended by its rules
    truncated          bool[]               the game was cut off by a time limit
    step_count         int32[]              plies played so far

Rules shared by all games, in :meth:`Env.step` (as in pgx): an **illegal action** (an integer
not in the mask, or out of range) ends the game, the mover -1 and the opponent +1; the range is
tested before any cast to int32, so ``2**40`` or ``-1`` never wraps onto a legal id.
**Stepping a finished game** returns the same state with zero rewards. A value that is **not
an action** - a bool, a float, ``None``, an array of shape other than ``()`` (which would
broadcast the state) - raises :class:`IllegalActionError` (:func:`check_action`), outside
``jit`` and while tracing alike (dtype and shape are known then); :meth:`Env.step_checked`
applies the same rule and also raises for illegal actions. Inside ``jit``, the values are not
known: an out-of-range integer array is the illegal-action rule above, on its own dtype; a
Python ``int`` passed as a jitted argument is converted by ``jax.jit`` itself, which raises
``OverflowError`` for one outside int32 before ``step`` runs (pass ``jnp.asarray(a,
jnp.uint32)``, or check it on the host with :meth:`Env.step_checked`); a numpy int64 given to
``jit`` or ``vmap`` is cut to int32 by JAX (without x64) before ``step`` sees it, so one past
int32 may land on a legal id: pass int32 actions, as policies do.

A game module (:mod:`jaxgames.games`) provides a frozen, hashable **spec** of one variant
(``env.spec``, the first static argument of its pure functions); a **state** extending
:class:`GameStateBase`; pure ``init``, ``step`` (legal action, unfinished game),
``heuristic`` (mover's view) and ``board_view`` (host side, for :mod:`jaxgames.render`); an
:class:`Env` subclass with the text notation; and one line in the registry.
"""

from __future__ import annotations

import abc
import inspect
import logging
import operator
import os
import warnings
from typing import Any, Callable, Mapping, NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.validation import check_one_game, fail, quote
from jaxgames.view import BoardView


def _synchronous_dispatch_on_one_cpu() -> None:
    """Make JAX's CPU dispatch synchronous where this process may use a single CPU.

    There, a computation that calls the host (``jax.pure_callback``: the perfect
    animal-shogi player, exact reversi endgames, NBoard engines) can wait for good: the
    callback reads its arguments through the CPU client's worker pool, whose one thread runs
    the computation waiting for the callback (jax-ml/jax#25861). Synchronous dispatch runs each
    computation on the calling thread; on one CPU asynchronous dispatch overlaps nothing
    anyway. ``JAX_CPU_ENABLE_ASYNC_DISPATCH`` set by the user wins. JAX reads the flag when
    its CPU client starts (the first computation), so this runs at import, before any.
    """
    if "JAX_CPU_ENABLE_ASYNC_DISPATCH" in os.environ or not hasattr(os, "sched_getaffinity"):
        return
    if len(os.sched_getaffinity(0)) == 1:
        jax.config.update("jax_cpu_enable_async_dispatch", False)


_synchronous_dispatch_on_one_cpu()

Array = jax.Array
PRNGKey = jax.Array
#: every player in jaxgames (opponents, engines, networks, searches): ``policy(key, state) ->
#: int32[]``, a legal action of one unfinished state; pure, so ``jax.vmap`` plays a batch
Policy = Callable[[PRNGKey, "GameState"], Array]

#: the fields every game state declares, contiguous and in this order
COMMON_FIELDS = (
    "current_player",
    "legal_action_mask",
    "rewards",
    "terminated",
    "truncated",
    "step_count",
)


@runtime_checkable
class GameState(Protocol):
    """The fields every game state carries (shapes in the module docstring)."""

    current_player: Array
    legal_action_mask: Array
    rewards: Array
    terminated: Array
    truncated: Array
    step_count: Array

    @property
    def observation(self) -> Array: ...

    def replace(self, **changes: Any) -> "GameState": ...


class GameStateBase:
    """Base of every game's state. The subclass declares the :data:`COMMON_FIELDS`, contiguous
    and in order (``TypeError`` otherwise); the base adds no dataclass fields, which would come
    first and reorder the pytree leaves that checkpoints store as a flat list."""

    # for readers and type checkers only: the dataclass fields are the subclass's
    current_player: Array
    legal_action_mask: Array
    rewards: Array
    terminated: Array
    truncated: Array
    step_count: Array

    def display_env(self) -> "Env":
        """An env of this state's game and variant, to draw it with (notebooks)."""
        raise NotImplementedError(f"{type(self).__name__} has no display_env")

    # Jupyter display (methods, not fields: the pytree is unchanged); render is imported lazily
    def _repr_svg_(self) -> str | None:
        """One game: its board as SVG (legal moves marked); None for a batch."""
        from jaxgames import render

        return render.repr_svg(self)

    def _repr_html_(self) -> str | None:
        """A batch of games: its shape and the first boards; None for one game."""
        from jaxgames import render

        return render.repr_html(self)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = list(inspect.get_annotations(cls))
        if not set(COMMON_FIELDS) <= set(names):
            missing = [f for f in COMMON_FIELDS if f not in names]
            raise TypeError(f"{cls.__name__} must declare the common state fields {missing}")
        first = names.index(COMMON_FIELDS[0])
        if tuple(names[first : first + len(COMMON_FIELDS)]) != COMMON_FIELDS:
            raise TypeError(
                f"{cls.__name__} must declare the common state fields contiguously in the order "
                f"{list(COMMON_FIELDS)}, got {names}"
            )


def common_fields(
    *,
    current_player: Any,
    legal_action_mask: Array,
    step_count: Any,
    terminated: Any = False,
    truncated: Any = False,
    rewards: Array | None = None,
) -> dict[str, Array]:
    """The :data:`COMMON_FIELDS` as constructor keywords, in the contract's dtypes (rewards
    zeros when not given; ``legal_action_mask`` as given)."""
    return dict(
        current_player=jnp.asarray(current_player, jnp.int32),
        legal_action_mask=legal_action_mask,
        rewards=jnp.zeros(2, jnp.float32) if rewards is None else rewards,
        terminated=jnp.asarray(terminated, jnp.bool_),
        truncated=jnp.asarray(truncated, jnp.bool_),
        step_count=jnp.asarray(step_count, jnp.int32),
    )


class Symmetries(NamedTuple):
    """A game's K symmetries as gather tables: symmetry k maps an observation to
    ``obs.reshape(-1)[obs[k]]`` (int32[K, P]) and an array indexed by action to
    ``x[actions[k]]`` (int32[K, A]). The rules commute with each; index 0 is the identity and
    the tables form a group, so a uniform index is a uniform element."""

    obs: np.ndarray
    actions: np.ndarray

    @property
    def count(self) -> int:
        """K, the number of symmetries (1: the identity only)."""
        return int(self.actions.shape[0])


def identity_symmetries(observation_shape: tuple[int, ...], num_actions: int) -> Symmetries:
    """The trivial group: the identity alone."""
    size = int(np.prod(observation_shape))
    return Symmetries(
        np.arange(size, dtype=np.int32)[None], np.arange(num_actions, dtype=np.int32)[None]
    )


def apply_symmetry(
    symmetries: Symmetries, k: Array, obs: Array, *per_action: Array
) -> tuple[Array, ...]:
    """k int32[*B], obs [*B, *observation_shape], per_action [*B, A] each -> the same, each
    batch element moved by its own symmetry k."""
    k = jnp.asarray(k, jnp.int32)
    batch = k.shape
    obs_table = jnp.asarray(symmetries.obs)[k]  # int32[*B, P]
    flat = obs.reshape(*batch, -1)
    out = jnp.take_along_axis(flat, obs_table, axis=-1).reshape(obs.shape)
    act_table = jnp.asarray(symmetries.actions)[k]  # int32[*B, A]
    return (out, *(jnp.take_along_axis(x, act_table, axis=-1) for x in per_action))


#: the ``features`` name that feeds a network the game's observation as it is
PLAIN_FEATURES = "observation"


def feature_function(env: Any, name: str) -> Callable[[Array], Array] | None:
    """The input features ``name`` of a game (an :class:`Env` or its class): ``None`` for
    :data:`PLAIN_FEATURES`, else ``input_features[name]``; ``ValueError`` naming valid names."""
    if name == PLAIN_FEATURES:
        return None
    if not isinstance(name, str) or name not in env.input_features:
        valid = ", ".join(repr(n) for n in (PLAIN_FEATURES, *env.input_features))
        fail("features", name, f"must be one of {valid} for {env.name}")
    return env.input_features[name]


def feature_channels_within(env: Any, old: str, new: str) -> np.ndarray | None:
    """int64[P]: each flat index of features ``old`` in ``new``'s input, if ``new`` is ``old``'s
    channels followed by more (checked on random observations); else ``None``."""
    f_old, f_new = feature_function(env, old), feature_function(env, new)
    obs = jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (8, *env.observation_shape))
    obs = obs.astype(jnp.float32)
    x_old = np.asarray(obs if f_old is None else f_old(obs))
    x_new = np.asarray(obs if f_new is None else f_new(obs))
    channels = x_old.shape[-1]
    if x_old.shape[:-1] != x_new.shape[:-1] or channels > x_new.shape[-1]:
        return None
    if not np.array_equal(x_new[..., :channels], x_old):
        return None
    grid = np.arange(np.prod(x_new.shape[1:])).reshape(x_new.shape[1:])
    return grid[..., :channels].reshape(-1)


class IllegalActionError(ValueError):
    """A move that is not legal (:meth:`Env.step_checked`, text parsers), or a value that is
    not an action at all (:func:`check_action`)."""


def check_action(action: Any) -> Any:
    """``action`` if it is an action: one integer id, i.e. a Python or numpy integer (any
    size: the range is :meth:`Env.step`'s to judge) or an integer array of shape ``()``
    (numpy, jax, or traced under ``jit``/``vmap``, where dtype and shape are known while
    tracing). :class:`IllegalActionError` for anything else: a bool, a float, ``None``, a
    string, an array of another shape (which would broadcast the state) - the same rule for
    :meth:`Env.step` and :meth:`Env.step_checked`."""
    if isinstance(action, (bool, np.bool_)):
        raise IllegalActionError(f"an action must be an integer id, got {action!r}")
    if isinstance(action, (int, np.integer)):
        return action
    dtype, shape = getattr(action, "dtype", None), getattr(action, "shape", None)
    if dtype is None or shape is None:  # None, a float, a string, a list, ...
        raise IllegalActionError(
            f"an action must be one integer id, got {type(action).__name__} {quote(action)}"
        )
    if shape != () or np.dtype(dtype).kind not in "iu":
        raise IllegalActionError(
            f"an action must be one integer id, got {type(action).__name__} "
            f"of dtype {dtype} and shape {shape}"
        )
    return action


def action_index(action: Any) -> int:
    """An action (:func:`check_action`) of a concrete value as a Python int, without
    wrapping; :class:`IllegalActionError` for anything else."""
    action = check_action(action)
    if isinstance(action, jax.core.Tracer):
        raise IllegalActionError("step_checked needs a concrete action, not a traced one")
    return operator.index(action) if isinstance(action, (int, np.integer)) else int(action)


def action_in_range(action: Any, num_actions: int) -> tuple[Array, Array]:
    """(bool[] in range and integral, int32[] action safe to index with) for :meth:`Env.step`,
    tested before any cast to int32 (an integer of any size, :func:`check_action`); a host
    value in numpy."""
    if isinstance(action, jax.Array):  # traced, or a concrete device array
        ok = action >= 0
        # compared in the action's dtype only where num_actions fits it: JAX would wrap it
        # (132 as int8 is -124); a dtype too narrow to reach num_actions is always below it
        if num_actions <= np.iinfo(action.dtype).max:
            ok = ok & (action < num_actions)
        return ok, jnp.where(ok, action, 0).astype(jnp.int32)
    a = np.asarray(action)  # a Python int past int64 is an object array: compared exactly
    ok = (a >= 0) & (a < num_actions)
    safe = np.where(ok, a, 0).astype(np.int32)
    return jnp.asarray(ok, jnp.bool_), jnp.asarray(safe)


class ExternalPlayerError(ValueError):
    """A player outside JAX failed: an engine program spoken to over a protocol (e.g.
    :mod:`jaxgames.nboard`: missing, exited, silent, or played an illegal move) or a table
    read on the host without the position asked. One line naming the player; raised inside a
    ``jax.pure_callback`` it reaches the caller inside a ``JaxRuntimeError`` whose text ends
    with it (:func:`external_error` takes it out)."""


def external_error(error: BaseException) -> str | None:
    """The one-line message of an :class:`ExternalPlayerError` raised inside a JAX callback
    (carried out as a ``JaxRuntimeError``), else ``None``."""
    if isinstance(error, ExternalPlayerError):
        return str(error)
    text = str(error)
    marker = f"{ExternalPlayerError.__name__}: "
    if type(error).__name__ not in ("JaxRuntimeError", "XlaRuntimeError") or marker not in text:
        return None
    return text[text.rindex(marker) + len(marker) :].strip().splitlines()[0]


class _CallbackNoise(logging.Filter):
    """Drops JAX's log of a callback that raised :class:`ExternalPlayerError` (the error
    itself reaches the caller, as one line on the command line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, ExternalPlayerError)


def quiet_external_errors() -> None:
    """Keep JAX from logging the traceback of a callback that raised
    :class:`ExternalPlayerError` (once per process; a player calls it when made)."""
    for name in ("jax._src.callback", "jax._src.dispatch"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _CallbackNoise) for f in log.filters):
            log.addFilter(_CallbackNoise())


#: what a file without a ``rules_version`` was made under (every file before versions existed)
DEFAULT_RULES_VERSION = 1


class RulesVersionWarning(UserWarning):
    """A run, ladder, card or record was made under other rules than this jaxgames plays."""


def check_rules_version(what: str, game: str, recorded: Any, current: int) -> None:
    """Warn (one line, :class:`RulesVersionWarning`) when ``what`` (e.g. ``"run 'runs/x'"``)
    was made under ``game`` rules version ``recorded`` and this code plays ``current``;
    ``recorded`` ``None``: :data:`DEFAULT_RULES_VERSION`. A warning, not an error: the file
    still loads and its agent still plays legal moves (a record's illegal move is its own
    error), but results measured under the other rules need not hold."""
    recorded = DEFAULT_RULES_VERSION if recorded is None else recorded
    if recorded != current:
        warnings.warn(
            f"{what} was made under {game} rules version {recorded}; this jaxgames plays "
            f"version {current}: results measured under the other rules may not hold "
            "(docs/rules_versions.md)",
            RulesVersionWarning,
            stacklevel=3,
        )


def check_player(player: Any) -> None:
    """``ValueError`` for a player id known on the host (not traced) that is not 0 or 1
    (one id, or one per game)."""
    if isinstance(player, jax.core.Tracer):
        return
    ids = np.asarray(player)
    if ids.dtype.kind not in "iu" or np.any((ids < 0) | (ids > 1)):
        raise ValueError(f"a player id is 0 or 1, got {player!r}")


def players_of(state: Any, player: Array) -> jax.Array:
    """int32[...]: ``player`` (one id, or one per state) for every state of ``state``'s batch
    shape; ``ValueError`` for ids of another shape."""
    shape = jnp.shape(state.current_player)
    ids = jnp.asarray(player, jnp.int32)
    if ids.ndim and ids.shape != shape:
        raise ValueError(
            f"player ids of shape {ids.shape} for states of batch shape {shape}: give one id, "
            "or one per state"
        )
    return jnp.broadcast_to(ids, shape)


class Env(abc.ABC):
    """Thin wrapper around a game's pure functions: subclasses set :attr:`spec` and implement
    :meth:`_init`, :meth:`_step` (legal actions on unfinished games), the text methods and
    :meth:`board_view`."""

    #: registered name, e.g. ``"reversi"``
    name: str = ""
    num_players: int = 2
    #: the game's static spec: the first argument of each of its pure functions
    spec: Any = None
    #: how the players are called, by player id (e.g. ``("black", "white")``)
    side_names: tuple[str, str] = ("player 0", "player 1")
    #: turn the board round for a human playing player 1 (own pieces at the bottom)
    flip_for_second: bool = False
    #: network input features (the config's ``features``): name -> pure ``fn(float32[...,
    #: *observation_shape]) -> float32[..., *shape]`` commuting with the symmetries
    input_features: Mapping[str, Callable[[Array], Array]] = {}
    #: the version of the game's rules: raised by one whenever a change makes some game play
    #: out differently (a move's legality, the result, the score); runs, ladders, model cards
    #: and game records store it, and loading one made under another version warns
    #: (:func:`check_rules_version`): pgx's animal-shogi rule fixes silently invalidated
    #: results measured before them
    rules_version: int = 1

    # ---------------------------------------------------------------- to implement
    @property
    @abc.abstractmethod
    def num_actions(self) -> int:
        """Size of the flat action space (``int``)."""

    @property
    @abc.abstractmethod
    def observation_shape(self) -> tuple[int, ...]:
        """Shape of ``state.observation`` for one game (float32)."""

    @abc.abstractmethod
    def _init(self, key: PRNGKey) -> GameState:
        """Initial state of one game."""

    @abc.abstractmethod
    def _step(self, state: GameState, action: Array) -> GameState:
        """Apply a *legal* action to an unfinished game (rewards of this step only)."""

    @abc.abstractmethod
    def to_text(self, state: GameState) -> str:
        """Position notation of one (unbatched) state."""

    @abc.abstractmethod
    def from_text(self, text: str) -> GameState:
        """Parse position notation; raises ``ValueError`` on malformed text. A position the
        rules have decided carries its result in ``rewards``, as the move that decided it."""

    @abc.abstractmethod
    def action_to_text(self, state: GameState, action: int) -> str:
        """Move notation of ``action`` in ``state`` (e.g. ``"d3"``)."""

    @abc.abstractmethod
    def text_to_action(self, state: GameState, text: str) -> int:
        """Parse move notation into a legal action id; raises ``ValueError`` naming the problem."""

    @classmethod
    def validate_options(cls, **options: Any) -> None:
        """``ValueError`` for a bad option value, without building the env."""

    # ---------------------------------------------------------------- public API
    @property
    def config(self) -> dict[str, Any]:
        """The keyword options this env was made with (e.g. ``{"size": 8}``)."""
        return {}

    @property
    def max_game_length(self) -> int | None:
        """An upper bound on the plies of one game (``None``: unknown)."""
        return None

    @property
    def symmetries(self) -> Symmetries:
        """The game's :class:`Symmetries` (default: the identity alone)."""
        return identity_symmetries(self.observation_shape, self.num_actions)

    def init(self, key: PRNGKey) -> GameState:
        """Start one game. ``key``: a PRNG key (games with a fixed start ignore it); a batch
        of keys is a ``ValueError`` (``jax.vmap(env.init)(keys)`` starts a batch)."""
        if key is not None:
            shape = jnp.shape(key)
            typed = jax.dtypes.issubdtype(jnp.result_type(key), jax.dtypes.prng_key)
            if len(shape) > (0 if typed else 1):
                raise ValueError(
                    f"env.init takes one key, got keys of shape {shape}: "
                    "jax.vmap(env.init)(keys) starts a batch of games"
                )
        return self._init(key)

    def step(self, state: GameState, action: Array) -> GameState:
        """The state after ``action`` (int32[]); jittable. Illegal actions and finished games
        as in the module docstring; a value that is not an action (:func:`check_action`) is
        :class:`IllegalActionError`, outside ``jit`` and while tracing alike."""
        check_one_game(state, "env.step", vmappable=True)
        action = check_action(action)
        in_range, safe_action = action_in_range(action, self.num_actions)
        legal = in_range & state.legal_action_mask[safe_action]
        finished = state.terminated | state.truncated

        played = self._step(state, safe_action)
        zeros = jnp.zeros(self.num_players, jnp.float32)
        # the mover loses, the opponent wins
        penalty = jnp.where(jnp.arange(self.num_players) == state.current_player, -1.0, 1.0)
        illegal = state.replace(
            terminated=jnp.bool_(True),
            rewards=penalty.astype(jnp.float32),
            legal_action_mask=jnp.zeros_like(state.legal_action_mask),
            step_count=state.step_count + 1,
        )
        noop = state.replace(rewards=zeros)
        return jax.tree_util.tree_map(
            lambda n, p, i: jnp.where(finished, n, jnp.where(legal, p, i)), noop, played, illegal
        )

    def step_legal(self, state: GameState, action: Array) -> GameState:
        """:meth:`step` without the illegal-action and finished-game handling, for searches
        that step only legal moves; unspecified for anything else."""
        return self._step(state, jnp.asarray(action, dtype=jnp.int32))

    def observe(self, state: GameState, player: Array) -> Array:
        """float32[..., *observation_shape]: ``state`` (one, or a batch [...]) from ``player``'s
        side, whoever moves: one id for every state, or one per state (the default sets
        ``current_player``; games stored relative to the mover override it)."""
        check_player(player)
        return state.replace(current_player=players_of(state, player)).observation

    def heuristic(self, state: GameState) -> Array:
        """float32[] static evaluation from the mover's view (greedy, alpha-beta)."""
        raise NotImplementedError(f"{self.name} has no heuristic evaluation")

    def score(self, state: GameState) -> Array:
        """float32[num_players]: each player's score margin by player id (reversi: disc
        difference); ``NotImplementedError`` for games without a score."""
        raise NotImplementedError(f"{self.name} has no score margin")

    @classmethod
    def has_score(cls) -> bool:
        """Whether the game defines :meth:`score` (checked by configs without an env)."""
        return cls.score is not Env.score

    def board_view(self, state: GameState) -> BoardView:
        """What :mod:`jaxgames.render` draws for one (unbatched) state."""
        raise NotImplementedError(f"{self.name} has no board view")

    def step_checked(self, state: GameState, action: int) -> GameState:
        """:meth:`step` outside ``jit`` that raises :class:`IllegalActionError` for an
        illegal action or a finished game."""
        check_one_game(state, "env.step_checked")
        a = action_index(action)
        if is_over(state):
            raise IllegalActionError(f"the game is over; no action (got {a}) can be played")
        if not 0 <= a < self.num_actions:
            raise IllegalActionError(
                f"action {a} is out of range for {self.name}: "
                f"valid ids are 0..{self.num_actions - 1}"
            )
        if not bool(state.legal_action_mask[a]):
            raise IllegalActionError(
                f"action {a} is illegal here; legal actions: {self.describe_legal(state)}"
            )
        return self.step(state, a)

    def legal_actions(self, state: GameState) -> list[int]:
        """Sorted legal action ids of one (unbatched) state, as Python ints."""
        check_one_game(state, "env.legal_actions")
        return [int(a) for a in jnp.flatnonzero(state.legal_action_mask)]

    def describe_legal(self, state: GameState) -> str:
        """Human-readable list of legal actions: ``"5 (c2), 7 (b3)"``."""
        return (
            ", ".join(f"{a} ({self.action_to_text(state, a)})" for a in self.legal_actions(state))
            or "none"
        )

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"jaxgames.make({self.name!r}{', ' + opts if opts else ''})"

    def __eq__(self, other: object) -> bool:
        """Envs of one game made with the same options are equal (they play alike), so the
        functions compiled for one (``jax.jit`` static arguments, match caches) serve both."""
        if not isinstance(other, Env):
            return NotImplemented
        return type(self) is type(other) and self.config == other.config

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.config.items()))))


class AutoResetStep(NamedTuple):
    """``state`` (a new game if this step ended one) and this step's rewards and ends."""

    state: GameState
    rewards: Array
    terminated: Array
    truncated: Array


def step_autoreset(env: Env, state: GameState, action: Array, key: PRNGKey) -> AutoResetStep:
    """Step one game, starting a new one (``env.init(key)``) when it ends."""
    nxt = env.step(state, action)
    done = nxt.terminated | nxt.truncated
    fresh = env.init(key)
    reset = jax.tree_util.tree_map(lambda f, n: jnp.where(done, f, n), fresh, nxt)
    return AutoResetStep(reset, nxt.rewards, nxt.terminated, nxt.truncated)


def winner_rewards(winner: Array) -> Array:
    """int32[] winner (-1: none) -> float32[2] zero-sum rewards (+1 winner, -1 loser)."""
    ids = jnp.arange(2)
    return jnp.where(winner < 0, 0.0, jnp.where(ids == winner, 1.0, -1.0)).astype(jnp.float32)


def random_action(key: PRNGKey, legal_action_mask: Array) -> Array:
    """Uniformly random legal action: bool[..., A] -> int32[...] (0 with none legal); one
    uniform number per game picks the k-th legal action (cheaper than Gumbel noise)."""
    mask = jnp.asarray(legal_action_mask)
    count = mask.sum(-1, dtype=jnp.int32)
    u = jax.random.uniform(key, mask.shape[:-1])
    k = jnp.minimum((u * count).astype(jnp.int32), jnp.maximum(count - 1, 0))
    seen = jnp.cumsum(mask, axis=-1, dtype=jnp.int32)
    action = jnp.sum(seen <= k[..., None], axis=-1, dtype=jnp.int32)
    return jnp.where(count > 0, action, 0)


def is_over(state: GameState) -> bool:
    """Host side: one (unbatched) game is finished (terminated or truncated)."""
    return bool(state.terminated) or bool(state.truncated)


def play_random_plies(env: Env, state: GameState, key: PRNGKey, plies: Array | int) -> GameState:
    """One game after ``plies`` (may be traced) random plies, ply t with ``fold_in(key, t)``."""

    def ply(t, s):
        return env.step(s, random_action(jax.random.fold_in(key, t), s.legal_action_mask))

    return jax.lax.fori_loop(0, plies, ply, state)


def random_policy(key: PRNGKey, state: GameState) -> Array:
    """The uniform player, ``policy(key, state) -> int32[]`` (every random opponent)."""
    return random_action(key, state.legal_action_mask)


def check_options(cls: type, options: dict[str, Any], game: str) -> None:
    """``ValueError`` if ``options`` holds a keyword ``cls.__init__`` does not take."""
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(options) - set(params))
    if unknown:
        valid = ", ".join(params) if params else "none"
        raise ValueError(f"unknown option(s) {unknown} for game {game!r}; valid options: {valid}")

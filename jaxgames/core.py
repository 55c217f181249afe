"""The game API every jaxgames game implements.

A game is a set of pure functions over an immutable state (a ``flax.struct`` dataclass).
Everything is ``jit``/``vmap``/``lax.scan`` friendly; nothing is kept on the Python side.

    env = jaxgames.make("tic_tac_toe")
    state = env.init(key)                      # one game; vmap for batches
    state = env.step(state, action)            # action: int32 scalar

Every game's state has at least these fields (shapes for a single game; a leading batch
axis appears under ``vmap``):

    current_player     int32[]              player to move; player 0 always moves first
    legal_action_mask  bool[num_actions]    all False once the game is over
    rewards            float32[2]           indexed by player id; nonzero only on the final step
    terminated         bool[]               the game ended by its rules
    truncated          bool[]               the game was cut off by a time limit
    step_count         int32[]              plies played so far

and an ``observation`` (a field or a property): ``float32[env.observation_shape]`` from the
point of view of the player to move.

Rules shared by all games (implemented once, here, in :meth:`Env.step`):

* **Illegal action inside jit** (not in ``legal_action_mask``, or out of range): the game ends
  at once, the mover gets -1 and the opponent +1, as in pgx. The range ``[0, num_actions)`` is
  tested on the action as given, before it is cast to int32, so ``np.int64(2**40)`` or ``-1``
  is illegal rather than wrapped onto a legal id (a non-integral float is illegal too; note
  that ``jax.jit`` itself narrows a host int64 *argument* to int32 at its boundary when x64 is
  off, before any code here sees it: cast to int32 with a range check, or use
  :meth:`Env.step_checked`, outside jit). Use
  :meth:`Env.step_checked` outside ``jit`` to get a ``ValueError`` naming the action and the
  legal ones instead.
* **Stepping a finished game** is a no-op that returns the same state with zero rewards.

The game contract (what a module in :mod:`jaxgames.games` provides):

* a **spec**: a frozen, hashable value holding everything static about one variant of the
  game (``TicTacToeSpec()``, reversi's ``Geometry(size)``, ``AnimalShogiSpec(max_steps)``);
  it is ``env.spec`` and the first, static argument of every pure function of the game;
* a **state** class: a ``flax.struct`` dataclass extending :class:`GameStateBase`, declaring
  the :data:`COMMON_FIELDS` (built with :func:`common_fields`) among its own fields;
* pure functions ``init(spec) -> state``, ``step(spec, state, action) -> state`` (a legal
  action on an unfinished game), ``heuristic(spec, state) -> float32[]`` (from the mover's
  view) and ``board_view(spec, state) -> BoardView`` (host-side, what
  :mod:`jaxgames.render` draws);
* an :class:`Env` subclass wiring those to ``env.init``/``step``/``heuristic``/``board_view``
  plus the text notation, with the presentation constants :attr:`Env.side_names` and
  :attr:`Env.flip_for_second`; and one line in the registry, ``jaxgames/games/__init__.py``;
* optionally, its **symmetries** (:attr:`Env.symmetries`, a :class:`Symmetries` table): maps of
  positions onto positions that the rules commute with (the 8 rotations and reflections of a
  reversi board, the left-right mirror of animal shogi), for data augmentation; the default
  is the identity alone.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import operator
from typing import Any, Callable, Mapping, NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.validation import fail
from jaxgames.view import BoardView

Array = jax.Array
PRNGKey = jax.Array
#: a player: ``policy(key, state) -> int32[]``, a legal action of one (unbatched) state while
#: the game is not over; pure, so ``jax.vmap(policy)(keys, states)`` plays a batch. Every
#: player in jaxgames has this type: the classic opponents, the engines, trained networks
#: (:class:`jaxgames.agents.common.NetworkPolicy`) and searches over them
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
    """The fields every game state carries (see the module docstring for shapes/dtypes)."""

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
    """Base class of every game's state: ``@struct.dataclass class XState(GameStateBase)``.

    The subclass declares the :data:`COMMON_FIELDS` itself, contiguous and in that order, with
    its own fields before and/or after them; defining a subclass that does not raises
    ``TypeError``. The base adds no dataclass fields on purpose: a dataclass base's fields would
    come first in every subclass and so change the order of the state's pytree leaves, and
    checkpoints store a train state (which holds the batched game states) as its flat list of
    leaves (:mod:`jaxgames.runs.checkpoint`), so old checkpoints would restore with fields
    swapped. Declaring the fields in each state keeps every game's leaf order as it was.
    """

    # for readers and type checkers only: the dataclass fields are the subclass's
    current_player: Array
    legal_action_mask: Array
    rewards: Array
    terminated: Array
    truncated: Array
    step_count: Array

    def display_env(self) -> "Env":
        """An env of this state's game and variant, to draw the state with (notebooks); the
        game's state class provides it (e.g. reversi reads the board size off the mask)."""
        raise NotImplementedError(f"{type(self).__name__} has no display_env")

    # Jupyter display: IPython calls these on the host when a cell shows a state; jit and vmap
    # never do (they are methods, not fields, so the pytree is unchanged). render draws board
    # views and imports nothing of ours but view; it is imported when a notebook first asks.
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
    """The :data:`COMMON_FIELDS` of a state as keyword arguments for its constructor, with the
    contract's dtypes: int32 player and ply count, bool flags, float32[2] rewards (zeros when
    not given). ``legal_action_mask`` is taken as given (the game clears it when over)."""
    return dict(
        current_player=jnp.asarray(current_player, jnp.int32),
        legal_action_mask=legal_action_mask,
        rewards=jnp.zeros(2, jnp.float32) if rewards is None else rewards,
        terminated=jnp.asarray(terminated, jnp.bool_),
        truncated=jnp.asarray(truncated, jnp.bool_),
        step_count=jnp.asarray(step_count, jnp.int32),
    )


class Symmetries(NamedTuple):
    """A game's symmetries as gather tables (``K`` symmetries, ``P = prod(observation_shape)``).

    obs:      int32[K, P]  symmetry k maps an observation to ``obs.reshape(-1)[obs[k]]``
    actions:  int32[K, A]  ... and anything indexed by action (policy, legal mask) to
              ``x[actions[k]]``: action ``b`` of the transformed position is action
              ``actions[k, b]`` of the original one

    Every symmetry is one of the rules: the transformed position (the board moved by the
    symmetry) has the transformed observation and legal mask, and playing ``b`` there leads to
    the transform of playing ``actions[k, b]`` in the original position. Index 0 is the
    identity. The tables form a group (the composition ``t1[t2]`` of two is one of them), so a
    symmetry drawn uniformly from the table is a uniform random element of the group.
    """

    obs: np.ndarray
    actions: np.ndarray

    @property
    def count(self) -> int:
        """K, the number of symmetries (1: the identity only)."""
        return int(self.actions.shape[0])


def identity_symmetries(observation_shape: tuple[int, ...], num_actions: int) -> Symmetries:
    """The trivial group: the identity alone (a game without known symmetries)."""
    size = int(np.prod(observation_shape))
    return Symmetries(
        np.arange(size, dtype=np.int32)[None], np.arange(num_actions, dtype=np.int32)[None]
    )


def apply_symmetry(
    symmetries: Symmetries, k: Array, obs: Array, *per_action: Array
) -> tuple[Array, ...]:
    """Apply symmetry ``k`` to an observation and to arrays indexed by action (jittable).

    k: int32[*B]; obs: [*B, *observation_shape]; each of ``per_action``: [*B, A] (a policy, a
    legal mask). Returns ``(obs', *per_action')`` of the same shapes, each batch element moved
    by its own symmetry.
    """
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
    """The network input features ``name`` of a game (an :class:`Env` or its class):
    ``None`` for :data:`PLAIN_FEATURES` (the observation itself), else the game's
    ``input_features[name]``; ``ValueError`` naming the valid names otherwise."""
    if name == PLAIN_FEATURES:
        return None
    if not isinstance(name, str) or name not in env.input_features:
        valid = ", ".join(repr(n) for n in (PLAIN_FEATURES, *env.input_features))
        fail("features", name, f"must be one of {valid} for {env.name}")
    return env.input_features[name]


def feature_channels_within(env: Any, old: str, new: str) -> np.ndarray | None:
    """Where the network input of features ``old`` stands inside that of features ``new``, if
    ``new`` is ``old``'s channels followed by more on the last axis (as a game's input features
    are: the observation's planes, then the computed ones): int64[P], for each flat index of
    ``old``'s input (P values) its flat index in ``new``'s; ``None`` otherwise. Checked on
    random 0/1 observations: the features are functions of the observation array alone."""
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
    """Raised by :meth:`Env.step_checked` and text parsers for a move that is not legal."""


def action_index(action: Any) -> int:
    """``action`` (a Python/numpy integer or a 0-d integer array, any width) as a Python int,
    without wrapping; :class:`IllegalActionError` for anything else (a float, a bool, an
    array of several values)."""
    if isinstance(action, (bool, np.bool_)):
        raise IllegalActionError(f"an action must be an integer id, got {action!r}")
    try:
        return operator.index(action)
    except TypeError:
        pass
    a = np.asarray(action)  # a 0-d numpy or jax array
    if a.shape != () or a.dtype.kind not in "iu":
        raise IllegalActionError(
            f"an action must be one integer id, got {type(action).__name__} "
            f"of dtype {a.dtype} and shape {a.shape}"
        )
    return int(a)


def action_in_range(action: Any, num_actions: int) -> tuple[Array, Array]:
    """(bool in range, int32 action safe to index with) for :meth:`Env.step`.

    The range ``[0, num_actions)`` is tested on ``action`` as given - before any cast to int32,
    which would wrap ``2**40`` onto ``0`` - and a float must also be integral. Out of range,
    the safe action is 0 (``in_range`` False makes the move illegal anyway). Jittable; a
    concrete host value (Python int of any size, numpy scalar or array) is tested in numpy.
    """
    if isinstance(action, jax.Array):  # traced, or a concrete device array
        ok = (action >= 0) & (action < num_actions)
        if jnp.issubdtype(action.dtype, jnp.inexact):
            ok = ok & (action == jnp.floor(action))
        return ok, jnp.where(ok, action, 0).astype(jnp.int32)
    a = np.asarray(action)
    if a.dtype.kind not in "biuf" and a.dtype != object:
        raise TypeError(f"an action must be a number, got {type(action).__name__}")
    with np.errstate(invalid="ignore"):
        ok = (a >= 0) & (a < num_actions)
        if a.dtype.kind == "f":
            ok = ok & (a == np.floor(a))
    safe = np.where(ok, a, 0).astype(np.int32)
    return jnp.asarray(ok, jnp.bool_), jnp.asarray(safe)


class Env(abc.ABC):
    """Thin wrapper around a game's pure functions.

    Subclasses set :attr:`spec` and implement :meth:`_init`, :meth:`_step` (only ever called
    with a legal action on an unfinished game; its result is discarded otherwise), the text
    methods and, to be drawn by :mod:`jaxgames.render`, :meth:`board_view`.
    """

    #: registered name, e.g. ``"reversi"``
    name: str = ""
    num_players: int = 2
    #: the game's static spec: the first argument of each of its pure functions
    spec: Any = None
    #: how the players are called, by player id (e.g. ``("black", "white")``)
    side_names: tuple[str, str] = ("player 0", "player 1")
    #: show the board turned round to a (single) human playing player 1, so that each side
    #: sees its own pieces at the bottom (animal shogi)
    flip_for_second: bool = False
    #: network input features the game offers besides its bare observation (the training
    #: config's ``features``): name -> pure ``fn(obs float32[..., *observation_shape]) ->
    #: float32[..., *shape]``, which must commute with the game's symmetries (augmentation
    #: moves the observations, the agent computes the features from them)
    input_features: Mapping[str, Callable[[Array], Array]] = {}

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
        """Parse position notation; raises ``ValueError`` on malformed text."""

    @abc.abstractmethod
    def action_to_text(self, state: GameState, action: int) -> str:
        """Move notation of ``action`` in ``state`` (e.g. ``"d3"``)."""

    @abc.abstractmethod
    def text_to_action(self, state: GameState, text: str) -> int:
        """Parse move notation into a legal action id; raises ``ValueError`` naming the problem."""

    @classmethod
    def validate_options(cls, **options: Any) -> None:
        """``ValueError`` for a bad option value, without building the env (so configs can
        check their game cheaply). Games with options override it; ``__init__`` calls it."""

    # ---------------------------------------------------------------- public API
    @property
    def config(self) -> dict[str, Any]:
        """The keyword options this env was made with (e.g. ``{"size": 8}``)."""
        return {}

    @property
    def max_game_length(self) -> int | None:
        """The most plies one game can last by its rules (an upper bound; ``None``: unknown).
        Games override it; e.g. ``eval --opening-plies`` must stay below it."""
        return None

    @property
    def symmetries(self) -> Symmetries:
        """The game's symmetries (:class:`Symmetries`); games with a symmetric board override
        it; the default is the identity alone."""
        return identity_symmetries(self.observation_shape, self.num_actions)

    def init(self, key: PRNGKey) -> GameState:
        """Start one game. ``key``: a PRNG key (games with a fixed start ignore it)."""
        return self._init(key)

    def step(self, state: GameState, action: Array) -> GameState:
        """Play ``action`` (int32 scalar) in ``state`` and return the next state.

        Jittable and vmappable. See the module docstring for the illegal-action and
        finished-game rules.
        """
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
        """:meth:`step` for a *legal* ``action`` of an unfinished game, without the
        illegal-action and finished-game handling (the same state :meth:`step` returns then).

        For searches that step only legal moves and pay for every operation in a loop body;
        for any other action or a finished game the result is unspecified (discard it)."""
        return self._step(state, jnp.asarray(action, dtype=jnp.int32))

    def observe(self, state: GameState, player: Array) -> Array:
        """float32[observation_shape]: ``state`` seen from ``player``'s side, whoever moves
        (``observe(state, state.current_player)`` is ``state.observation``); for adapters to
        APIs that show every player its own view (PettingZoo, pgx's ``observe``).

        The default is the observation of ``state`` with ``current_player`` set to ``player``:
        right for a game whose state is stored by player id (tic-tac-toe, animal shogi); a
        game that stores its position relative to the mover overrides it (reversi)."""
        return state.replace(current_player=jnp.asarray(player, jnp.int32)).observation

    def heuristic(self, state: GameState) -> Array:
        """Static evaluation of ``state`` from the point of view of ``state.current_player``.

        float32[] (positive = good for the mover), used by the greedy and alpha-beta opponents.
        Games override this; the default raises ``NotImplementedError``.
        """
        raise NotImplementedError(f"{self.name} has no heuristic evaluation")

    def score(self, state: GameState) -> Array:
        """float32[num_players]: each player's score margin in ``state`` by player id (reversi:
        own discs minus the opponent's, raw counts); a match reports the final one. Games with
        a score override it; the default raises ``NotImplementedError`` (a win is all there is
        to tic-tac-toe and animal shogi)."""
        raise NotImplementedError(f"{self.name} has no score margin")

    @classmethod
    def has_score(cls) -> bool:
        """Whether the game defines :meth:`score` (checked by configs without an env)."""
        return cls.score is not Env.score

    def board_view(self, state: GameState) -> BoardView:
        """What :mod:`jaxgames.render` draws for one (unbatched) state. Games override this;
        the default raises ``NotImplementedError`` (renderers then show the notation)."""
        raise NotImplementedError(f"{self.name} has no board view")

    def step_checked(self, state: GameState, action: int) -> GameState:
        """Like :meth:`step` but, outside ``jit``, raises :class:`IllegalActionError` for an
        illegal action or a finished game instead of ending the game."""
        a = action_index(action)
        if bool(state.terminated) or bool(state.truncated):
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


@dataclasses.dataclass(frozen=True, eq=False)
class EnvWrapper:
    """Base of the training wrappers of an ``env`` (:class:`ScoreUtility`,
    :class:`jaxgames.agents.games_batch.RandomOpenings`): a subclass overrides what it changes
    and every other attribute of the Env interface is ``env``'s. Hashed by identity, so jitted
    callers compile once per wrapper."""

    env: Any

    def __getattr__(self, name: str) -> Any:  # the rest of the Env interface
        if name == "env":  # not set yet (copy, pickle): no endless lookup
            raise AttributeError(name)
        return getattr(self.env, name)


@dataclasses.dataclass(frozen=True, eq=False)
class ScoreUtility(EnvWrapper):
    """``env`` whose final rewards mix the outcome with the score margin: on the step that
    ends a game by its rules, ``(1 - weight) * rewards + weight * env.score(final state)``
    (a win by more discs is worth more, a loss by fewer is worth more than a loss by many);
    every other reward (0 mid-game, the illegal-move penalty) is ``env``'s. The sign of a
    final reward is the outcome's (a winner has the larger score), so who won is unchanged.
    Everything else is ``env``'s.

    Why: KataGo's utility adds a score term to the win/loss value (Wu 2019, "Accelerating
    self-play learning in Go", score utility): where every move is equally won or lost the
    win/loss value cannot rank them, and a value that prefers the closer game keeps the
    search playing for the opponent's mistakes in lost positions instead of choosing among
    losing moves at random. A learner trained on these rewards learns that utility as its
    value; evaluation and play-time search count wins as before (``env``'s rewards)."""

    weight: float

    def step(self, state: GameState, action: Array) -> GameState:
        in_range, safe = action_in_range(action, self.env.num_actions)
        legal = in_range & state.legal_action_mask[safe]
        return self._final(state, self.env.step(state, action), legal)

    def step_legal(self, state: GameState, action: Array) -> GameState:
        return self._final(state, self.env.step_legal(state, action), jnp.bool_(True))

    def _final(self, before: GameState, after: GameState, legal: Array) -> GameState:
        ended = legal & after.terminated & ~(before.terminated | before.truncated)
        mixed = (1.0 - self.weight) * after.rewards + self.weight * self.env.score(after)
        return after.replace(rewards=jnp.where(ended, mixed, after.rewards).astype(jnp.float32))


def with_score_utility(env: Any, weight: float) -> Any:
    """``env`` with :class:`ScoreUtility` final rewards, or ``env`` itself for weight 0."""
    return ScoreUtility(env, weight) if weight else env


class AutoResetStep(NamedTuple):
    """Result of :func:`step_autoreset` for one game (leading batch axis under vmap).

    state:       the next state, already reset to a new game if this step ended one
    rewards:     float32[2] rewards of the step just taken (the finished game's final rewards)
    terminated:  bool[] the step ended the game by its rules
    truncated:   bool[] the step hit a time limit
    """

    state: GameState
    rewards: Array
    terminated: Array
    truncated: Array


def step_autoreset(env: Env, state: GameState, action: Array, key: PRNGKey) -> AutoResetStep:
    """Step one game and start a new one (``env.init(key)``) when it ends.

    The returned ``state`` is always a live game, so vectorised rollouts never stall; the
    outcome of the finished game is kept in ``rewards``/``terminated``/``truncated``.
    Jittable; ``vmap`` it over games with one key per game.
    """
    nxt = env.step(state, action)
    done = nxt.terminated | nxt.truncated
    fresh = env.init(key)
    reset = jax.tree_util.tree_map(lambda f, n: jnp.where(done, f, n), fresh, nxt)
    return AutoResetStep(reset, nxt.rewards, nxt.terminated, nxt.truncated)


def winner_rewards(winner: Array) -> Array:
    """Final rewards for a two-player zero-sum result. ``winner``: int32[] player id, or -1
    for a draw / no result yet -> float32[2] (+1 winner, -1 loser, zeros for -1)."""
    ids = jnp.arange(2)
    return jnp.where(winner < 0, 0.0, jnp.where(ids == winner, 1.0, -1.0)).astype(jnp.float32)


def random_action(key: PRNGKey, legal_action_mask: Array) -> Array:
    """Uniformly random legal action. ``legal_action_mask``: bool[..., A] -> int32[...].

    Draws one uniform number per game and picks the k-th legal action (a running count over
    the mask), which is far cheaper on CPU than Gumbel noise over all A actions.
    With no legal action (a finished game) it returns action 0.
    """
    mask = jnp.asarray(legal_action_mask)
    count = mask.sum(-1, dtype=jnp.int32)
    u = jax.random.uniform(key, mask.shape[:-1])
    k = jnp.minimum((u * count).astype(jnp.int32), jnp.maximum(count - 1, 0))
    seen = jnp.cumsum(mask, axis=-1, dtype=jnp.int32)
    action = jnp.sum(seen <= k[..., None], axis=-1, dtype=jnp.int32)
    return jnp.where(count > 0, action, 0)


def play_random_plies(env: Env, state: GameState, key: PRNGKey, plies: Array | int) -> GameState:
    """``state`` after ``plies`` (int or int32[], may be traced) uniformly random legal plies,
    ply t drawn with ``fold_in(key, t)``; plies after the game ends change nothing. One game
    (``jax.vmap`` it for a batch). The evaluation's openings and training's random openings
    both play their plies with it."""

    def ply(t, s):
        return env.step(s, random_action(jax.random.fold_in(key, t), s.legal_action_mask))

    return jax.lax.fori_loop(0, plies, ply, state)


def random_policy(key: PRNGKey, state: GameState) -> Array:
    """The uniform player as a policy: ``policy(key, state) -> int32[]``, a random legal move of
    one state (``jax.vmap`` it for a batch). Every random opponent in jaxgames is this one."""
    return random_action(key, state.legal_action_mask)


def check_options(cls: type, options: dict[str, Any], game: str) -> None:
    """Raise ``ValueError`` if ``options`` holds a keyword ``cls.__init__`` does not take."""
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(options) - set(params))
    if unknown:
        valid = ", ".join(params) if params else "none"
        raise ValueError(f"unknown option(s) {unknown} for game {game!r}; valid options: {valid}")

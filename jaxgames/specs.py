"""Opponent specs: one string names any player, wherever a player is accepted (``eval``,
``play --agent``, ``rate``, the arena, training partners).

    random              uniform over legal moves
    greedy              one ply: win if possible, else the best static evaluation
    minimax:D           full-width depth-D negamax (exact reference; num_actions**D leaves)
    alphabeta:D         depth-D negamax with alpha-beta pruning on the game's heuristic
    engine:D[:E]        reversi / animal shogi engine: alpha-beta to depth D with a classical
                        evaluation; reversi plays exactly from E (default 10) empty squares
    uct:N               Monte Carlo tree search, N simulations (UCB1, random rollouts)
    perfect             tic-tac-toe: optimal play from value iteration; animal shogi: from
                        the solved table (``jaxgames solve animal_shogi`` builds it once):
                        keeps the value, wins fastest, loses slowest
    <run directory>     a trained or exported agent (its newest checkpoint, greedy)
    pretrained:<name>   an agent shipped in the package (:mod:`jaxgames.pretrained`)
    sym:<agent>         the agent's network averaged over the game's symmetries
    mcts:N[/K[/C]][/w]:<agent>  the agent guiding N simulations of Gumbel MuZero search per
                        move over K root moves (default 16) with value scale C (default 0.1;
                        both mctx's); ``/w``: one ply of exact win lookahead at every node
    solve:E:<player>    reversi: that player until E or fewer squares are empty, then perfect
                        play (the engine's exact endgame)
    nboard:[depth=D:][time=S:]<command line>
                        reversi: an NBoard engine program (Edax, Ntest, ``jaxgames engine``)
                        asked for each move, its answers checked (:mod:`jaxgames.nboard`)

Errors are one-line ``ValueError`` messages naming the spec and the valid forms or bounds.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Mapping, Sequence

from jaxgames.agents.search import SearchConfig, SearchPolicy
from jaxgames.baselines import value_iteration
from jaxgames.core import Env, Policy, random_policy
from jaxgames.evaluation import accuracy, animal_shogi_solver, opponents
from jaxgames.evaluation.animal_shogi_engine import animal_shogi_engine_policy
from jaxgames.evaluation.reversi_engine import reversi_engine_policy, with_exact_endgame
from jaxgames.evaluation.uct import uct_policy
from jaxgames.nboard import check_program, nboard_policy, parse_command
from jaxgames.pretrained import load_pretrained, pretrained_dir
from jaxgames.runs import load_agent, run_env

VALID_SPECS = (
    "random",
    "greedy",
    "minimax:D",
    "alphabeta:D",
    "engine:D[:E]",
    "uct:N",
    "perfect",
    "<run directory>",
    "pretrained:<name>",
    "sym:<run directory or pretrained:name>",
    "mcts:N[/K[/C]][/w]:<run directory, pretrained:name or sym:...>",
    "solve:E:<player>",
    "nboard:[depth=D:][time=S:]<command line>",
)


@dataclasses.dataclass(frozen=True)
class _Builtin:
    """A built-in player: its integer arguments (the first ``required`` needed), their maxima,
    its games (``None``: all)."""

    args: tuple[str, ...] = ()
    maxima: tuple[int, ...] = ()
    required: int = 0
    games: tuple[str, ...] | None = None


_BUILTINS: dict[str, _Builtin] = {
    "random": _Builtin(),
    "greedy": _Builtin(),
    "perfect": _Builtin(games=("tic_tac_toe", "animal_shogi")),
    "minimax": _Builtin(("depth",), (8,), 1),
    "alphabeta": _Builtin(("depth",), (12,), 1),
    "engine": _Builtin(("depth", "endgame_empties"), (8, 20), 1, ("reversi", "animal_shogi")),
    "uct": _Builtin(("simulations",), (100_000,), 1),
}
MAX_SIMULATIONS = 4096
#: ``mcts:N/K/C``'s defaults: SearchConfig's (mctx's)
DEFAULT_CONSIDERED = SearchConfig.max_num_considered_actions
DEFAULT_VALUE_SCALE = SearchConfig.value_scale
MAX_VALUE_SCALE = 100.0
MAX_SOLVE_EMPTIES = 20  # the engine's bound for its exact endgame
MAX_MINIMAX_LEAVES = 2_000_000


@dataclasses.dataclass(frozen=True)
class Spec:
    """A parsed spec (``str(spec)``: the normal form): a built-in ``kind``, ``"run"`` (path),
    ``"pretrained"`` (name), ``"sym"`` (inner), ``"mcts"`` (args = (simulations, root moves,
    value scale, win check), inner), ``"solve"`` (args = (empties,), inner) or ``"nboard"``
    (name: the settings and command line)."""

    kind: str
    args: tuple[int | float, ...] = ()
    path: str | None = None
    inner: Spec | None = None
    name: str | None = None

    def __str__(self) -> str:
        if self.kind == "run":
            return str(self.path)
        if self.kind in ("pretrained", "nboard"):
            return f"{self.kind}:{self.name}"
        if self.kind == "mcts":  # the settings at their defaults are left out
            n, k, c, w = self.args
            search = f"{n}/{k}/{c!r}" if c != DEFAULT_VALUE_SCALE else f"{n}/{k}"
            if search == f"{n}/{DEFAULT_CONSIDERED}":
                search = f"{n}"
            return f"mcts:{search}{'/w' if w else ''}:{self.inner}"
        parts = [self.kind, *map(str, self.args)] + ([str(self.inner)] if self.inner else [])
        return ":".join(parts)


def _bad(text: str, why: str) -> ValueError:
    quoted = text if len(text) <= 200 else text[:200] + "..."
    return ValueError(f"bad opponent spec {quoted!r}: {why}")


def _int_arg(text: str, name: str, what: str, value: str, maximum: int) -> int:
    n = int(value) if value.isascii() and value.isdigit() else -1  # no '+', '_' or spaces
    if n < 1:
        raise _bad(text, f"{name} needs an integer {what} >= 1, e.g. '{name}:3'")
    if n > maximum:
        raise _bad(text, f"{what} {n} is more than this machine can search (at most {maximum})")
    return n


def parse_spec(text: str) -> Spec:
    """The :class:`Spec` of ``text`` (syntax only); any other form is a run directory."""
    if not isinstance(text, str):
        raise ValueError(f"an opponent spec must be a string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ValueError(f"empty opponent spec; valid: {', '.join(VALID_SPECS)}")
    name, _, rest = text.partition(":")
    if name == "mcts":
        field, _, inner = rest.partition(":")
        sims, *settings = field.split("/")
        w = int(bool(settings) and settings[-1] == "w")  # the one-ply win check
        settings = settings[:-1] if w else settings
        usage = (
            "use 'mcts:N:<run directory>' or 'mcts:N:pretrained:<name>' with N >= 1 "
            "simulations (or 'mcts:N/K:...', 'mcts:N/K/C:...' with K >= 1 root moves "
            "considered and C >= 0 the scale of the searched values, and '/w' after them "
            "for the one-ply win check), e.g. 'mcts:16:runs/r6'"
        )
        numbers = [sims] + settings[:1]
        if not inner or len(settings) > 2:
            raise _bad(text, usage)
        if not all(v.isascii() and v.isdigit() and int(v) >= 1 for v in numbers):
            raise _bad(text, usage)
        n = _int_arg(text, "mcts", "number of simulations", sims, MAX_SIMULATIONS)
        k = DEFAULT_CONSIDERED
        if settings:
            k = _int_arg(text, "mcts", "number of root moves", settings[0], MAX_SIMULATIONS)
        c = DEFAULT_VALUE_SCALE
        if len(settings) == 2:
            try:
                c = float(settings[1])
            except ValueError:
                raise _bad(text, usage) from None
            if not 0 <= c <= MAX_VALUE_SCALE:
                raise _bad(text, f"the value scale C must be in [0, {MAX_VALUE_SCALE:g}]")
        guide = parse_spec(inner)
        if guide.kind not in ("run", "pretrained", "sym"):
            raise _bad(
                text,
                "the search needs a trained agent's run directory to guide it (or "
                f"pretrained:<name>, sym:<agent>), not {inner!r}",
            )
        return Spec("mcts", (n, k, c, w), inner=guide)
    if name == "sym":
        agent = parse_spec(rest) if rest.strip() else None
        if agent is None or agent.kind not in ("run", "pretrained"):
            raise _bad(
                text,
                "use 'sym:<run directory>' or 'sym:pretrained:<name>': a trained agent's "
                "network averaged over the game's symmetries, e.g. 'sym:pretrained:reversi6'",
            )
        return Spec("sym", inner=agent)
    if name == "solve":
        empties, _, inner = rest.partition(":")
        if not inner.strip():
            raise _bad(
                text,
                "use 'solve:E:<player>': perfect play once E or fewer squares are empty, "
                "that player before, e.g. 'solve:10:mcts:64:pretrained:reversi8'",
            )
        n = _int_arg(text, "solve", "number of empty squares", empties, MAX_SOLVE_EMPTIES)
        return Spec("solve", (n,), inner=parse_spec(inner))
    if name == "nboard":
        try:
            parse_command(rest)
        except ValueError as e:
            raise _bad(text, str(e)) from None
        return Spec("nboard", name=rest.strip())
    if name == "pretrained":
        if not rest.strip():
            raise _bad(text, "use 'pretrained:<name>', e.g. 'pretrained:tic_tac_toe'")
        return Spec("pretrained", name=rest.strip())
    if name in _BUILTINS:
        b = _BUILTINS[name]
        values = rest.split(":") if rest else []
        if not b.required <= len(values) <= len(b.args):
            if not b.args:
                raise _bad(text, f"{name} takes no argument; valid: {', '.join(VALID_SPECS)}")
            if len(values) > len(b.args):
                raise _bad(text, f"{name} takes at most {len(b.args)} integer arguments")
            raise _bad(text, f"{name} needs an integer {b.args[0]} >= 1, e.g. '{name}:3'")
        args = tuple(_int_arg(text, name, a, v, m) for a, v, m in zip(b.args, values, b.maxima))
        return Spec(name, args)
    return Spec("run", path=text)


def agent_run(text: str) -> str | None:
    """The folder of a trained agent's spec (also inside ``mcts:``, ``sym:``, ``solve:``), else
    None; ``ValueError`` for a pretrained name that is not shipped."""
    spec = parse_spec(text)
    while spec.inner is not None:
        spec = spec.inner
    if spec.kind == "pretrained":
        return pretrained_dir(spec.name)
    return spec.path if spec.kind == "run" else None


def check_spec(text: str, env: Env) -> str:
    """The normal form of ``text`` checked for ``env`` without building the player (a run's
    ``config.json`` is read); ``ValueError`` naming the problem."""
    spec = parse_spec(text)
    _check_for_game(spec, env)
    return str(spec)


def missing_data(text: str, env: Env) -> str | None:
    """Why the player ``text`` cannot play ``env`` on this machine although the spec is valid
    (``perfect`` on animal shogi before ``jaxgames solve animal_shogi`` cached the table),
    else ``None``: a ladder skips such a rung, saying why."""
    return _missing_data(parse_spec(text), env)


def _missing_data(spec: Spec, env: Env) -> str | None:
    if spec.kind == "perfect" and env.name == "animal_shogi":
        try:
            animal_shogi_solver.load_table()
        except animal_shogi_solver.TableMissing as e:
            return str(e)
    return None


def playable_rungs(rungs: Sequence[str], env: Env) -> tuple[list[str], dict[str, str]]:
    """``(the rungs that can play here, {skipped rung: why})``: see :func:`missing_data`."""
    why = {r: missing_data(r, env) for r in rungs}
    return [r for r in rungs if why[r] is None], {r: w for r, w in why.items() if w is not None}


def _check_for_game(spec: Spec, env: Env) -> None:
    if spec.kind == "mcts":
        _check_for_game(spec.inner, env)
    elif spec.kind == "sym":
        if env.symmetries.count < 2:
            raise ValueError(f"sym:<agent>: {env.name} has no symmetry besides the identity")
        _check_for_game(spec.inner, env)
    elif spec.kind == "solve":
        if env.name != "reversi":
            raise ValueError(
                f"solve:E:<player> (an exact endgame) exists only for reversi, not {env.name!r}"
            )
        _check_for_game(spec.inner, env)
    elif spec.kind == "nboard":
        if env.name != "reversi":
            raise ValueError(f"nboard:<command line> engines play reversi, not {env.name!r}")
        check_program(parse_command(spec.name)[1])  # missing program: one line, up front
    elif spec.kind == "pretrained":
        # ValueError listing the shipped agents for an unknown name
        _check_agent_game(f"pretrained agent {spec.name!r}", pretrained_dir(spec.name), env)
    elif spec.kind == "run":
        if not os.path.isdir(spec.path):
            raise ValueError(
                f"unknown opponent spec {spec.path!r} (not a run directory either); "
                f"valid: {', '.join(VALID_SPECS)}"
            )
        _check_agent_game(f"run {spec.path!r}", spec.path, env)
    else:
        games = _BUILTINS[spec.kind].games
        if spec.kind == "perfect" and env.name == "reversi":
            raise ValueError(
                "the 'perfect' opponent exists for tic_tac_toe and animal_shogi; on reversi "
                "perfect play from the start is beyond the exact solver (docs/perfect_play.md): "
                f"use solve:E:<player>, perfect play from E <= {MAX_SOLVE_EMPTIES} empty squares"
            )
        if games is not None and env.name not in games:
            raise ValueError(
                f"the {spec.kind!r} opponent exists only for {', '.join(games)}, not {env.name!r}"
            )
        if spec.kind == "engine" and len(spec.args) > 1 and env.name != "reversi":
            raise ValueError(
                f"engine:D:E (an exact endgame from E empty squares) exists only for reversi; "
                f"use engine:{spec.args[0]} for {env.name}"
            )
        missing = _missing_data(spec, env)
        if missing is not None:
            raise ValueError(f"perfect on animal_shogi: {missing}")
        if spec.kind == "minimax" and env.num_actions ** spec.args[0] > MAX_MINIMAX_LEAVES:
            raise ValueError(
                f"minimax:{spec.args[0]} on {env.name} would expand "
                f"{env.num_actions}**{spec.args[0]} leaves at once (at most "
                f"{MAX_MINIMAX_LEAVES:,}); use alphabeta:{spec.args[0]}"
            )


def _check_agent_game(what: str, folder: str, env: Env) -> None:
    trained_on = run_env(folder)  # RunNotFoundError / ValueError name the problem
    if (trained_on.name, trained_on.config) != (env.name, env.config):
        raise ValueError(f"{what} was trained on {trained_on!r}, not on {env!r}")


# built-in players are made once per (spec, game), so jitted callers compile once
_BUILT: dict[tuple, Policy] = {}


def _engine(env: Env, depth: int, *endgame: int) -> Policy:
    if env.name == "reversi":
        return reversi_engine_policy(env, depth, *endgame)
    return animal_shogi_engine_policy(env, depth)


_MAKERS: dict[str, Callable[..., Policy]] = {
    "random": lambda env: random_policy,
    "greedy": opponents.greedy_policy,
    "perfect": lambda env: (
        animal_shogi_solver.perfect_policy()
        if env.name == "animal_shogi"
        else value_iteration.perfect_policy()
    ),
    "minimax": opponents.minimax_policy,
    "alphabeta": opponents.alphabeta_policy,
    "engine": _engine,
    "uct": uct_policy,
}


def make_opponent(text: str, env: Env) -> Policy:
    """The policy of the spec ``text`` on ``env``; errors as :func:`check_spec` (and
    ``CheckpointError``)."""
    spec = parse_spec(text)
    _check_for_game(spec, env)
    if spec.kind in ("run", "pretrained", "sym"):
        return _agent_policy(spec)
    if spec.kind == "mcts":
        n, k, c, w = spec.args
        knobs = dict(max_num_considered_actions=k, value_scale=c, win_check=bool(w))
        return SearchPolicy(env, _agent_policy(spec.inner), num_simulations=n, **knobs)
    if spec.kind == "solve":
        return with_exact_endgame(env, make_opponent(str(spec.inner), env), spec.args[0])
    key = (str(spec), env.name, tuple(sorted(env.config.items())))
    if key not in _BUILT:
        if spec.kind == "nboard":  # one engine process per spec and board
            _BUILT[key] = nboard_policy(spec.name, env)
        else:
            _BUILT[key] = _MAKERS[spec.kind](env, *spec.args)
    return _BUILT[key]


def runs_a_program(text: str) -> bool:
    """Whether the spec ``text`` starts an outside program: an ``nboard:`` engine, also inside
    ``solve:`` or another wrapper (``False`` for text that is no valid spec)."""
    try:
        spec = parse_spec(text)
    except ValueError:
        return False
    while spec is not None and spec.kind != "nboard":
        spec = spec.inner
    return spec is not None


def record_opponent(players: Sequence[str], env: Env) -> tuple[str, int] | None:
    """(agent, the person's side) to continue a game record whose ``players`` (player 0's,
    player 1's) are a person (``human``) and an agent that plays ``env``; ``("human", 0)`` for
    two people; None when the record names no such pair. A record never names a program to
    run: its ``nboard:`` agents are passed over (a file from anyone would otherwise run any
    command)."""
    if tuple(players) == ("human", "human"):
        return "human", 0
    for human in (0, 1):
        agent = players[1 - human]
        if players[human] != "human" or agent in ("human", "?") or runs_a_program(agent):
            continue
        try:
            check_spec(agent, env)
        except ValueError:
            continue
        return agent, human
    return None


def make_oracle(env: Env, *, empties: int | None = None) -> accuracy.Oracle:
    """What judges moves against perfect play on ``env`` (:mod:`jaxgames.evaluation.accuracy`):
    tic-tac-toe value iteration, else :func:`~jaxgames.evaluation.accuracy.default_oracle` (the
    solved animal-shogi table of ``jaxgames solve animal_shogi``, the exact reversi solver from
    ``empties`` empty squares). One-line ``ValueError`` for a game without one, a missing
    table or bad ``empties``."""
    if env.name == "tic_tac_toe":
        if empties is not None:
            raise ValueError("empties is for reversi: tic_tac_toe judges every move")
        return value_iteration.tic_tac_toe_oracle()
    try:
        return accuracy.default_oracle(env, empties=empties)
    except animal_shogi_solver.TableMissing as e:
        raise ValueError(str(e)) from None


def _agent_policy(spec: Spec) -> Policy:
    """A trained agent's greedy policy; a run is read afresh, a shipped agent once."""
    averaged = spec.kind == "sym"
    spec = spec.inner if averaged else spec
    if spec.kind == "pretrained":
        return load_pretrained(spec.name, average_symmetries=averaged)
    return load_agent(spec.path).policy(average_symmetries=averaged)


def make_partners(partners: Mapping[str, float], env: Env) -> dict[str, Policy]:
    """The policy of every training partner (spec -> share); ``ValueError`` ``invalid
    partners=...: <why>``."""
    return _each_partner(partners, lambda text: make_opponent(text, env))


def check_partners(partners: Mapping[str, float], env: Env) -> None:
    """:func:`check_spec` for every training partner (no checkpoint is restored)."""
    _each_partner(partners, lambda text: check_spec(text, env))


def _each_partner(partners: Mapping[str, float], fn: Callable[[str], object]) -> dict:
    out = {}
    for text in partners:
        try:
            out[text] = fn(text)
        except ValueError as e:
            raise ValueError(f"invalid partners={dict(partners)!r}: {e}") from None
    return out

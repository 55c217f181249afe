"""Animal shogi (dobutsu shogi): complete rules on 12-bit bitboards.

Board, squares and the start position (absolute frame; square = row * 3 + col)::

         a   b   c
    1    g   l   e        0  1  2      lowercase = player 1 (gote, moves second)
    2    .   c   .        3  4  5      uppercase = player 0 (sente, moves first)
    3    .   C   .        6  7  8      L/l lion, G/g giraffe, E/e elephant,
    4    E   L   G        9 10 11      C/c chick, H/h hen (promoted chick)

Sente starts at the bottom and moves *up* (towards rank 1); gote moves down.

Rules
-----
* Lion: one step in any of the 8 directions. Giraffe: one step orthogonally. Elephant: one step
  diagonally. Chick: one step forward; a chick *moving* onto the far rank promotes to a hen
  (mandatory). Hen: one step orthogonally or diagonally forward (a shogi gold).
* A captured piece goes to the captor's hand (a hen returns as a chick). Instead of moving, a
  player may drop a hand piece on any empty square. A chick dropped on the far rank stays a chick
  and can never move (allowed, as in the official rules and pgx v2); two chicks on a file are fine.
* A move that leaves the mover's own lion attacked is illegal. Hence lions are never captured:
  a player with no legal move has lost (the lion is caught, or - rarely - every move is
  illegal), and a lion that reaches the far rank (a *try*) wins at once, since it can only go
  there unattacked.
* Draw (``terminated``, rewards 0/0): the same position - board, both hands and side to move -
  occurs for the third time. Detection is exact: every position is packed losslessly into two
  uint32 words and compared with all earlier positions of the game (no hash collisions).
* Game-length cap: after ``max_steps`` plies (default 256, ``make("animal_shogi", max_steps=N)``)
  an unfinished game ends with ``truncated=True`` and rewards 0/0. It is ``truncated``, not
  ``terminated``: the official rules have no move limit, so the cap is a time limit imposed by us,
  and value-learning agents should bootstrap from the cut-off position rather than treat it as a
  drawn terminal one. (pgx v2 instead sets ``terminated`` after 256 steps.) If the last ply also
  ends the game by the rules, the rules win: ``terminated`` and not ``truncated``. The state
  keeps a ``uint32[max_steps, 2]`` position history, so its size grows with the cap.

Actions (132, always in the *mover's* frame: the board as seen by the player to move, rotated
180 degrees for gote, so "N" is always forward and mover square ``s`` is absolute ``11 - s`` for
gote)::

    action = d * 12 + s          0 <= d < 8: move the piece on mover-square s one step in
                                 direction d (targets off the board are never legal)
    action = 96 + k * 12 + t     0 <= k < 3: drop hand piece k (0 giraffe, 1 elephant, 2 chick)
                                 on mover-square t

    directions d (mover frame)       mover squares s, t
         7  0  1                          0  1  2     <- the mover's far rank
          \\ | /                           3  4  5
       6 -  *  - 2                        6  7  8
          / | \\                           9 10 11     <- the mover's home rank
         5  4  3

    0 N, 1 NE, 2 E, 3 SE, 4 S, 5 SW, 6 W, 7 NW

:func:`decode_action` turns an action into absolute (from square, to square, drop kind).

Observation: ``float32[4, 3, 24]`` (rank, file, plane), in the mover's frame (row 0 is the mover's
far rank): planes 0-4 the mover's lion, giraffe, elephant, chick, hen; 5-9 the opponent's; 10 empty;
11-16 the mover's hand (giraffes >= 1, >= 2, elephants >= 1, >= 2, chicks >= 1, >= 2) as constant
planes; 17-22 the opponent's hand likewise; 23 constant 1.0 if the current position occurred before
(a further repetition would draw).

Symmetry: the left-right mirror of the board is one of the rules (``env.symmetries``, for data
augmentation; :func:`~jaxgames.games.animal_shogi.rules.mirror_symmetries`).

Perft from the start position (leaf counts, depths 1-7): 4, 13, 67, 398, 2179, 12636, 80828,
identical with the naive pure-Python reference in tests/reference_animal_shogi.py.

Differences from pgx v2 (``pgx.make("animal_shogi")``), checked in tests/test_animal_shogi.py:
legal-action sets and wins/losses agree ply by ply on random games. pgx orders squares by file
(mirrored) and directions differently (same 132 = 96 + 36 layout), picks the first player at
random, ends at 256 steps with ``terminated`` (we truncate), and its incremental Zobrist hash
misses some repeated positions; its observation is (4, 3, 194) with 8 plies of history.

Text: SFEN-like ``"gle/1c1/1C1/ELG b - 1"``: ranks 1..4 separated by ``/`` (digits = runs of
empty squares), side to move ``b`` (sente) or ``w`` (gote), hands (``-`` or e.g. ``"2Ce"``:
sente's pieces uppercase, gote's lowercase, count before the letter), move number (plies played
+ 1; odd for sente), and a fifth field ``end`` for a finished game the position does not show as
finished (a draw by repetition): ``"gle/1c1/1C1/ELG b - 9 end"``; texts without it read as
before. Every state reached by play round-trips through ``to_text``/``from_text`` (see
:mod:`~jaxgames.games.animal_shogi.notation`). Moves: ``"b3b2"`` (from, to; promotion is forced,
a ``+`` suffix is optional), drops ``"C*b2"``.

Code. :mod:`~jaxgames.games.animal_shogi.rules` holds the state, the constants and the pure,
jittable game functions (legal moves, play, repetition, observation, heuristic);
:mod:`~jaxgames.games.animal_shogi.notation` the text of positions and moves and the board view
that :mod:`jaxgames.render` draws; :mod:`~jaxgames.games.animal_shogi.env` the ``Env``. This
package re-exports their names (``from jaxgames.games import animal_shogi as A; A.step``).
Pure functions take the game's static spec first (the :mod:`jaxgames.core` contract):
``spec = AnimalShogiSpec(max_steps)``, then ``init(spec)``, ``step(spec, state, action)``,
``heuristic(spec, state)``, ``board_view(spec, state)``, ``make_state(spec, ...)``,
``parse_position(spec, text)``; an env's is ``env.spec``.
"""

from jaxgames.games.animal_shogi import notation, rules
from jaxgames.games.animal_shogi.env import AnimalShogi
from jaxgames.games.animal_shogi.notation import (
    ANIMALS,
    SIDE_NAMES,
    action_parts,
    action_text,
    board_view,
    encode_drop,
    encode_move,
    parse_move,
    parse_position,
    position_text,
)
from jaxgames.games.animal_shogi.rules import (
    ATTACK_PLANES,
    BITS,
    CHICK,
    DIRECTION_NAMES,
    DIRECTIONS,
    ELEPHANT,
    EMPTY,
    FULL,
    GIRAFFE,
    HAND_CHARS,
    HAND_VALUES,
    HEN,
    INIT_BOARD,
    LION,
    MOVE_TO,
    MOVES,
    NO_POSITION,
    NUM_ACTIONS,
    NUM_MOVE_ACTIONS,
    NUM_SQUARES,
    OBS_PLANES,
    OPP_MOVES,
    PIECE_CHARS,
    PIECE_VALUES,
    SQ_DELTA,
    TO_SQ,
    VALID_FROM,
    WIN_VALUE,
    AnimalShogiSpec,
    AnimalShogiState,
    apply_action,
    attack_features,
    decode_action,
    heuristic,
    init,
    legal_action_mask,
    make_state,
    mover_view,
    observe,
    piece_masks,
    position_key,
    rotate,
    step,
)

__all__ = [
    "ANIMALS",
    "ATTACK_PLANES",
    "BITS",
    "CHICK",
    "DIRECTIONS",
    "DIRECTION_NAMES",
    "ELEPHANT",
    "EMPTY",
    "FULL",
    "GIRAFFE",
    "HAND_CHARS",
    "HAND_VALUES",
    "HEN",
    "INIT_BOARD",
    "LION",
    "MOVES",
    "MOVE_TO",
    "NO_POSITION",
    "NUM_ACTIONS",
    "NUM_MOVE_ACTIONS",
    "NUM_SQUARES",
    "OBS_PLANES",
    "OPP_MOVES",
    "PIECE_CHARS",
    "PIECE_VALUES",
    "SIDE_NAMES",
    "SQ_DELTA",
    "TO_SQ",
    "VALID_FROM",
    "WIN_VALUE",
    "AnimalShogi",
    "AnimalShogiSpec",
    "AnimalShogiState",
    "action_parts",
    "action_text",
    "apply_action",
    "attack_features",
    "board_view",
    "decode_action",
    "encode_drop",
    "encode_move",
    "heuristic",
    "init",
    "legal_action_mask",
    "make_state",
    "mover_view",
    "notation",
    "observe",
    "parse_move",
    "parse_position",
    "piece_masks",
    "position_key",
    "position_text",
    "rotate",
    "rules",
    "step",
]

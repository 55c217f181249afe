"""Animal shogi (dobutsu shogi): complete rules on 12-bit bitboards.

Board, squares and the start position (absolute frame; square = row * 3 + col)::

         a   b   c
    1    g   l   e        0  1  2      lowercase = player 1 (gote, moves second)
    2    .   c   .        3  4  5      uppercase = player 0 (sente, moves first)
    3    .   C   .        6  7  8      L/l lion, G/g giraffe, E/e elephant,
    4    E   L   G        9 10 11      C/c chick, H/h hen (promoted chick)

Sente starts at the bottom and moves *up* (towards rank 1); gote moves down.

Rules:

* Lion: one step in any of the 8 directions. Giraffe: one step orthogonally. Elephant: one step
  diagonally. Chick: one step forward; a chick *moving* onto the far rank promotes to a hen
  (mandatory). Hen: one step orthogonally or diagonally forward (a shogi gold).
* A captured piece goes to the captor's hand (a hen returns as a chick). Instead of moving, a
  player may drop a hand piece on any empty square (a chick dropped on the far rank stays a
  chick and never moves, as in the official rules and pgx v2; two chicks on a file are fine).
* A move that leaves the mover's lion attacked is illegal, so lions are never captured: a player
  with no legal move has lost, and a lion reaching the far rank (a *try*) wins at once.
* Draw (``terminated``, rewards 0/0): the same position (board, hands, side to move) occurs for
  the third time, detected exactly from a lossless two-word key of every earlier position.
* After ``max_steps`` plies (default 256) an unfinished game is ``truncated`` (0/0): the
  official rules have no move limit, so the cap is a time limit a value learner could bootstrap
  from (pgx v2 sets ``terminated``); jaxgames' learners end the game there as a draw. If the
  last ply ends the game by the rules, the rules win. The state keeps a ``uint32[max_steps, 2]``
  position history.

Actions (132, in the *mover's* frame: the board turned 180 degrees for gote, so ``N`` is always
forward and mover square ``s`` is absolute ``11 - s`` for gote)::

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

Observation: ``float32[4, 3, 24]`` in the mover's frame: planes 0-4 the mover's lion, giraffe,
elephant, chick, hen; 5-9 the opponent's; 10 empty; 11-16 the mover's hand (giraffes >= 1,
>= 2, elephants >= 1, >= 2, chicks >= 1, >= 2) as constant planes; 17-22 the opponent's hand;
23 constant 1.0 if the position occurred before. The left-right mirror is a symmetry of the
rules (``env.symmetries``).

Legal actions and results agree with pgx v2 ply by ply (tests/test_animal_shogi.py; pgx
orders squares differently, ends at 256 steps with ``terminated``, and its hash misses some
repetitions). Text is SFEN-like, ``"gle/1c1/1C1/ELG b - 1"``, moves ``"b3b2"``, drops
``"C*b2"`` (:mod:`.notation`); :mod:`.rules` holds the state and the pure functions, ``.env``
the ``Env``.
"""

from jaxgames.games.animal_shogi import notation, rules  # noqa: F401
from jaxgames.games.animal_shogi.env import AnimalShogi  # noqa: F401
from jaxgames.games.animal_shogi.notation import (  # noqa: F401
    action_parts,
    action_text,
    board_view,
    encode_drop,
    encode_move,
    position_text,
)
from jaxgames.games.animal_shogi.rules import (  # noqa: F401
    CHICK,
    DIRECTIONS,
    EMPTY,
    HAND_CHARS,
    HEN,
    LION,
    MOVE_TO,
    MOVES,
    NUM_ACTIONS,
    NUM_MOVE_ACTIONS,
    OPP_MOVES,
    PIECE_CHARS,
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
    position_key,
    rotate,
    step,
)

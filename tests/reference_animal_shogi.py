"""A deliberately naive pure-Python animal shogi, written independently of the JAX game, to test it.

Positions are dicts {(file, rank): (owner, kind)} with file 0..2 (a..c) and rank 0..3 (1..4),
owner 0 = sente (moves towards rank 1), 1 = gote. Legal moves are found the slow, obvious way:
generate every step and drop, play it on a copy and scan all enemy pieces for an attack on the
mover's lion. Moves are reported as text (``"b3b2"``, ``"C*b2"``) so that the comparison goes
through the notation fixed by the issue, not through the JAX action encoding.
"""

from __future__ import annotations

from collections import Counter

FILES = "abc"
KINDS = "LGECH"  # lion, giraffe, elephant, chick, hen
# steps (d_file, d_rank) for sente; gote's are negated. Rank decreases towards sente's far rank.
STEPS = {
    "L": [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if (df, dr) != (0, 0)],
    "G": [(0, -1), (0, 1), (1, 0), (-1, 0)],
    "E": [(1, 1), (1, -1), (-1, 1), (-1, -1)],
    "C": [(0, -1)],
    "H": [(0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1)],
}
START = "gle/1c1/1C1/ELG b - 1"


def name(f: int, r: int) -> str:
    return f"{FILES[f]}{r + 1}"


class Game:
    """One game. ``legal_moves()`` -> set of move texts; ``play(text)``; ``result`` after the end:
    ``("win", player)``, ``("draw", "repetition")`` or ``("truncated", None)``; ``None`` while
    live."""

    def __init__(self, sfen: str = START, max_steps: int = 256):
        rows, side, hands, number = sfen.split()
        self.board: dict[tuple[int, int], tuple[int, str]] = {}
        for r, row in enumerate(rows.split("/")):
            f = 0
            for ch in row:
                if ch.isdigit():
                    f += int(ch)
                else:
                    self.board[(f, r)] = (0 if ch.isupper() else 1, ch.upper())
                    f += 1
        self.turn = "bw".index(side)
        self.hands = [Counter(), Counter()]
        if hands != "-":
            n = ""
            for ch in hands:
                if ch.isdigit():
                    n += ch
                else:
                    self.hands[0 if ch.isupper() else 1][ch.upper()] += int(n or 1)
                    n = ""
        self.ply = int(number) - 1
        self.max_steps = max_steps
        self.result = None
        self._moves = None  # the legal successors of the current position, once asked for
        self.seen = Counter([self.key()])
        far = 3 if self.turn == 0 else 0  # the far rank of the side that just moved
        if any(k == "L" and o != self.turn and sq[1] == far for sq, (o, k) in self.board.items()):
            self.result = ("win", 1 - self.turn)
        elif not self.legal_moves():
            self.result = ("win", 1 - self.turn)

    # -------------------------------------------------------------- helpers
    def key(self):
        return (
            tuple(sorted(self.board.items())),
            tuple(sorted(self.hands[0].items())),
            tuple(sorted(self.hands[1].items())),
            self.turn,
        )

    def sfen(self) -> str:
        rows = []
        for r in range(4):
            out, run = "", 0
            for f in range(3):
                if (f, r) in self.board:
                    owner, kind = self.board[(f, r)]
                    out += (str(run) if run else "") + (kind if owner == 0 else kind.lower())
                    run = 0
                else:
                    run += 1
            rows.append(out + (str(run) if run else ""))
        hand = ""
        for owner in (0, 1):
            for kind in "GEC":
                n = self.hands[owner][kind]
                if n:
                    hand += (str(n) if n > 1 else "") + (kind if owner == 0 else kind.lower())
        return f"{'/'.join(rows)} {'bw'[self.turn]} {hand or '-'} {self.ply + 1}"

    @staticmethod
    def targets(board, sq, owner, kind):
        sign = 1 if owner == 0 else -1
        f, r = sq
        for df, dr in STEPS[kind]:
            t = (f + sign * df, r + sign * dr)
            if 0 <= t[0] < 3 and 0 <= t[1] < 4:
                yield t

    @classmethod
    def lion_attacked(cls, board, owner) -> bool:
        lion = next(sq for sq, (o, k) in board.items() if o == owner and k == "L")
        return any(
            lion in cls.targets(board, sq, o, k) for sq, (o, k) in board.items() if o != owner
        )

    def successors(self):
        """Yield (text, board, hands) for every legal move of the side to move."""
        me = self.turn
        for sq, (owner, kind) in list(self.board.items()):
            if owner != me:
                continue
            for t in self.targets(self.board, sq, owner, kind):
                if t in self.board and self.board[t][0] == me:
                    continue
                board = dict(self.board)
                captured = board[t][1] if t in board else None
                del board[sq]
                far = 0 if me == 0 else 3
                board[t] = (me, "H" if kind == "C" and t[1] == far else kind)
                if self.lion_attacked(board, me):
                    continue
                hands = [Counter(self.hands[0]), Counter(self.hands[1])]
                if captured is not None:
                    hands[me]["C" if captured == "H" else captured] += 1
                yield name(*sq) + name(*t), board, hands
        for kind in "GEC":
            if self.hands[me][kind] == 0:
                continue
            for f in range(3):
                for r in range(4):
                    if (f, r) in self.board:
                        continue
                    board = dict(self.board)
                    board[(f, r)] = (me, kind)
                    if self.lion_attacked(board, me):
                        continue
                    hands = [Counter(self.hands[0]), Counter(self.hands[1])]
                    hands[me][kind] -= 1
                    hands[me] += Counter()  # drop zero counts
                    yield f"{kind}*{name(f, r)}", board, hands

    def legal_successors(self) -> list:
        """``list(successors())``, generated once per position: a game is usually asked for
        its legal moves and then plays one of them."""
        if self._moves is None:
            self._moves = list(self.successors())
        return self._moves

    def legal_moves(self) -> set[str]:
        if self.result is not None:
            return set()
        return {text for text, _, _ in self.legal_successors()}

    def play(self, text: str) -> None:
        assert self.result is None, "game over"
        for t, board, hands in self.legal_successors():
            if t == text:
                break
        else:
            raise ValueError(f"illegal move {text} in {self.sfen()}")
        me = self.turn
        self.board, self.hands = board, [hands[0] + Counter(), hands[1] + Counter()]
        self._moves = None
        self.turn = 1 - me
        self.ply += 1
        far = 0 if me == 0 else 3
        self.seen[self.key()] += 1
        tried = any(k == "L" and o == me and sq[1] == far for sq, (o, k) in self.board.items())
        if tried or not any(True for _ in self.successors()):
            self.result = ("win", me)
        elif self.seen[self.key()] >= 3:
            self.result = ("draw", "repetition")
        elif self.ply >= self.max_steps:
            self.result = ("truncated", None)


def perft(game: Game, depth: int) -> int:
    """Number of legal move sequences of length ``depth`` (finished games have no moves)."""
    if depth == 0:
        return 1
    total = 0
    for text in sorted(game.legal_moves()):
        child = Game.__new__(Game)
        child.__dict__ = {
            **game.__dict__,
            "board": dict(game.board),
            "hands": [Counter(game.hands[0]), Counter(game.hands[1])],
            "seen": Counter(game.seen),
        }
        child.play(text)
        total += perft(child, depth - 1)
    return total

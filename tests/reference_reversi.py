"""A deliberately plain pure-Python reversi (lists, ray walking) used as an independent
reference by the differential tests. Shares no code with ``jaxgames.games.reversi``.

Rules as documented there: action ``row * n + col``, ``n * n`` = pass (legal only when no
placement is); the game ends after a placement that fills the board or leaves the opponent
without discs, or when a pass follows a pass; more discs wins.
"""

from __future__ import annotations

DIRS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
EMPTY, BLACK, WHITE = 0, 1, 2


class RefReversi:
    """One game. ``board[r][c]`` in {EMPTY, BLACK, WHITE}; ``player`` 0 (black) or 1 (white)."""

    def __init__(self, n: int = 8):
        self.n = n
        self.board = [[EMPTY] * n for _ in range(n)]
        c = n // 2
        self.board[c - 1][c - 1] = self.board[c][c] = WHITE
        self.board[c - 1][c] = self.board[c][c - 1] = BLACK
        self.player = 0
        self.passed = False
        self.done = False
        self.rewards = (0.0, 0.0)

    def copy(self) -> "RefReversi":
        g = RefReversi.__new__(RefReversi)
        g.n, g.player, g.passed, g.done, g.rewards = (
            self.n,
            self.player,
            self.passed,
            self.done,
            self.rewards,
        )
        g.board = [row[:] for row in self.board]
        return g

    def flips(self, r: int, c: int) -> list[tuple[int, int]]:
        """Discs flipped if the player to move places on (r, c); [] if illegal."""
        if self.board[r][c] != EMPTY:
            return []
        me, opp = (BLACK, WHITE) if self.player == 0 else (WHITE, BLACK)
        out = []
        for dr, dc in DIRS:
            run = []
            rr, cc = r + dr, c + dc
            while 0 <= rr < self.n and 0 <= cc < self.n and self.board[rr][cc] == opp:
                run.append((rr, cc))
                rr, cc = rr + dr, cc + dc
            if run and 0 <= rr < self.n and 0 <= cc < self.n and self.board[rr][cc] == me:
                out.extend(run)
        return out

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids ([] once the game is over)."""
        if self.done:
            return []
        n = self.n
        moves = [r * n + c for r in range(n) for c in range(n) if self.flips(r, c)]
        return moves or [n * n]

    def count(self, colour: int) -> int:
        return sum(row.count(colour) for row in self.board)

    def play(self, action: int) -> None:
        """Apply a legal action (asserts it is legal)."""
        assert action in self.legal_actions(), (action, self.legal_actions())
        n = self.n
        me, opp = (BLACK, WHITE) if self.player == 0 else (WHITE, BLACK)
        if action == n * n:
            ended = self.passed
            self.passed = True
        else:
            r, c = divmod(action, n)
            for rr, cc in self.flips(r, c):
                self.board[rr][cc] = me
            self.board[r][c] = me
            self.passed = False
            ended = self.count(opp) == 0 or self.count(EMPTY) == 0
        self.rewards = (0.0, 0.0)
        if ended:
            self.done = True
            b, w = self.count(BLACK), self.count(WHITE)
            self.rewards = (1.0, -1.0) if b > w else (-1.0, 1.0) if w > b else (0.0, 0.0)
        self.player = 1 - self.player

    def cells(self) -> list[int]:
        """Row-major cell values (0 empty, 1 black, 2 white)."""
        return [v for row in self.board for v in row]


def perft(game: RefReversi, depth: int) -> int:
    """Leaf count at ``depth`` plies (a pass is a ply; games over earlier are not leaves)."""
    moves = game.legal_actions()
    if depth == 1:
        return len(moves)
    total = 0
    for a in moves:
        g = game.copy()
        g.play(a)
        total += perft(g, depth - 1)
    return total

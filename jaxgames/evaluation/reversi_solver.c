/* Exact reversi solver (jaxgames.evaluation.reversi_solver builds and loads it with the
 * system's C compiler; tests/test_reversi_solver.py checks it against the JAX engine's exact
 * endgame, jaxgames.evaluation.reversi_engine.solve_endgame).
 *
 * Boards up to 8x8 (even sizes) as uint64 bitboards, bit row * N + col (the env's layout).
 * Negamax with alpha-beta and principal-variation null windows over the final disc margin
 * (mover's discs minus the opponent's; empty squares count for nobody, as in the env's rules),
 * a pass when a side cannot place, the end when neither can (or, with `passed`, when the side
 * to move cannot place right after the opponent passed). Above 6 empties: a transposition
 * table of bounds, and moves ordered by the table's best move, then fewest opponent replies
 * (its corner replies counted twice), fewest empty squares beside the mover's discs (the
 * opponent's potential mobility) and corners first: the fastest-first and potential-mobility
 * ordering of endgame solvers (Edax, Zebra). At 6 empties and fewer: no table, moves in
 * quadrants with an odd number of empties first (parity), the last empty square scored without
 * playing it. Searched with the window (-1, 1) the result has the sign of the game's value:
 * win, draw or loss, far cheaper than the exact margin. One solve at a time per process (the
 * table is global and kept from solve to solve on the same board size).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;

static int N; /* the board size of the table's entries (0: none yet) */
static u64 FULL, CORNERS, QUAD[4];
static u64 PRE[8];  /* the squares a step in direction d leaves on the board (no wrap) */
static int SH[8];   /* that step as a bit shift */
static long long nodes;
static const int DIRS[8][2] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

static inline u64 shift(u64 b, int d) {
    b &= PRE[d];
    return SH[d] > 0 ? (b << SH[d]) & FULL : b >> -SH[d];
}

static inline u64 moves(u64 p, u64 o) {
    u64 empty = ~(p | o) & FULL, m = 0;
    for (int d = 0; d < 8; d++) {
        u64 t = shift(p, d) & o;
        for (int i = 0; i < N - 3; i++) t |= shift(t, d) & o;
        m |= shift(t, d);
    }
    return m & empty;
}

static inline u64 flips(u64 p, u64 o, int sq) {
    u64 f = 0, x = (u64)1 << sq;
    for (int d = 0; d < 8; d++) {
        u64 t = 0, c = shift(x, d);
        while (c & o) { t |= c; c = shift(c, d); }
        if (c & p) f |= t;
    }
    return f;
}

static inline int count(u64 b) { return __builtin_popcountll(b); }

/* the last empty square: the final margin without making the move */
static inline int last1(u64 p, u64 o, int sq) {
    nodes++;
    int f = count(flips(p, o, sq));
    int diff = count(p) - count(o);
    if (f) return diff + 2 * f + 1;
    nodes++;
    f = count(flips(o, p, sq));
    if (f) return diff - 2 * f - 1;
    return diff;  /* neither can place: the square stays empty */
}

typedef struct { u64 p, o; signed char lo, hi; unsigned char best, pad; } Entry;
#define TABLE_BITS 22
static Entry *table;

static inline u64 hash(u64 p, u64 o) {
    u64 h = p * 0x9E3779B97F4A7C15ULL ^ (o + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 29);
}

/* few empties: no table, parity-ordered (odd quadrants first) */
static int shallow(u64 p, u64 o, int alpha, int beta, int passed) {
    u64 empty = ~(p | o) & FULL;
    if (count(empty) == 1) return last1(p, o, __builtin_ctzll(empty));
    nodes++;
    u64 m = moves(p, o);
    if (!m) {
        if (passed || !moves(o, p)) return count(p) - count(o);
        return -shallow(o, p, -beta, -alpha, 1);
    }
    u64 odd = 0;
    for (int q = 0; q < 4; q++) if (count(empty & QUAD[q]) & 1) odd |= QUAD[q];
    int best = -1000;
    for (int pass = 0; pass < 2; pass++) {
        u64 mm = m & (pass == 0 ? odd : ~odd);
        for (; mm; mm &= mm - 1) {
            int s = __builtin_ctzll(mm);
            u64 f = flips(p, o, s), np = p | f | ((u64)1 << s), no = o & ~f;
            int v = -shallow(no, np, -beta, -alpha, 0);
            if (v > best) best = v;
            if (v > alpha) alpha = v;
            if (alpha >= beta) return best;
        }
    }
    return best;
}

static int search(u64 p, u64 o, int alpha, int beta, int passed) {
    u64 empty = ~(p | o) & FULL;
    int empties = count(empty);
    if (empties <= 6) return shallow(p, o, alpha, beta, passed);
    nodes++;
    u64 m = moves(p, o);
    if (!m) {
        if (passed || !moves(o, p)) return count(p) - count(o);
        return -search(o, p, -beta, -alpha, 1);
    }
    int hint = -1;
    Entry *e = &table[hash(p, o) & ((1u << TABLE_BITS) - 1)];
    if (e->p == p && e->o == o) {
        if (e->lo >= beta) return e->lo;
        if (e->hi <= alpha) return e->hi;
        if (e->lo > alpha) alpha = e->lo;
        if (e->hi < beta) beta = e->hi;
        if (alpha >= beta) return alpha; /* lo == hi: the value is known (an empty window
                                            would search nothing right) */
        hint = e->best;
    }
    int sq[64], key[64], n = 0;
    u64 fl[64];
    for (u64 mm = m; mm; mm &= mm - 1) {
        int s = __builtin_ctzll(mm);
        u64 f = flips(p, o, s);
        sq[n] = s;
        fl[n] = f;
        if (s == hint) key[n] = -1000;
        else {
            u64 np = p | f | ((u64)1 << s), no = o & ~f;
            u64 om = moves(no, np);
            u64 em = ~(np | no) & FULL, beside = 0;
            for (int d = 0; d < 8; d++) beside |= shift(np, d);
            key[n] = 4 * count(om) + 4 * count(om & CORNERS) + count(beside & em)
                     - 6 * (int)((CORNERS >> s) & 1);
        }
        n++;
    }
    for (int i = 1; i < n; i++) {  /* insertion sort, ascending key */
        int k = key[i], s = sq[i], j = i - 1;
        u64 f = fl[i];
        while (j >= 0 && key[j] > k) { key[j + 1] = key[j]; sq[j + 1] = sq[j]; fl[j + 1] = fl[j]; j--; }
        key[j + 1] = k;
        sq[j + 1] = s;
        fl[j + 1] = f;
    }
    int alpha0 = alpha, best = -1000, best_sq = sq[0];
    for (int i = 0; i < n; i++) {
        int s = sq[i];
        u64 f = fl[i], np = p | f | ((u64)1 << s), no = o & ~f;
        int v;
        if (i == 0) v = -search(no, np, -beta, -alpha, 0);
        else {
            v = -search(no, np, -alpha - 1, -alpha, 0);
            if (v > alpha && v < beta) v = -search(no, np, -beta, -v, 0);
        }
        if (v > best) { best = v; best_sq = s; }
        if (v > alpha) alpha = v;
        if (alpha >= beta) break;
    }
    e->p = p; e->o = o; e->best = (unsigned char)best_sq;
    if (best <= alpha0) { e->lo = -127; e->hi = (signed char)best; }
    else if (best >= beta) { e->lo = (signed char)best; e->hi = 127; }
    else e->lo = e->hi = (signed char)best;
    return best;
}

/* The value of the position (mover's discs p, opponent's o) on an n x n board within the
 * window (alpha, beta): exact inside it, a bound outside (fail-soft). Returns the nodes
 * searched, -1 if the table cannot be allocated. */
long long solve(int n, u64 p, u64 o, int alpha, int beta, int passed, int *value) {
    if (!table && !(table = calloc((size_t)1 << TABLE_BITS, sizeof(Entry)))) return -1;
    /* entries hold bounds on a position's value (only positions with a move are stored, so
       the pass flag is no part of them): valid for every later solve on the same board */
    if (n != N) memset(table, 0, ((size_t)1 << TABLE_BITS) * sizeof(Entry));
    N = n;
    FULL = n * n == 64 ? ~(u64)0 : (((u64)1 << (n * n)) - 1);
    u64 west = 0, east = 0;
    for (int r = 0; r < n; r++) { west |= (u64)1 << (r * n); east |= (u64)1 << (r * n + n - 1); }
    for (int d = 0; d < 8; d++) {
        PRE[d] = FULL;
        if (DIRS[d][1] == 1) PRE[d] &= ~east;
        if (DIRS[d][1] == -1) PRE[d] &= ~west;
        SH[d] = DIRS[d][0] * n + DIRS[d][1];
    }
    int h = n / 2;
    for (int q = 0; q < 4; q++) {
        QUAD[q] = 0;
        for (int r = 0; r < h; r++)
            for (int c = 0; c < h; c++)
                QUAD[q] |= (u64)1 << ((r + (q / 2) * h) * n + c + (q % 2) * h);
    }
    CORNERS = (u64)1 | ((u64)1 << (n - 1)) | ((u64)1 << (n * (n - 1))) | ((u64)1 << (n * n - 1));
    nodes = 0;
    if (passed && !moves(p, o)) *value = count(p) - count(o); /* a pass after a pass ends it */
    else *value = search(p, o, alpha, beta, passed);
    return nodes;
}

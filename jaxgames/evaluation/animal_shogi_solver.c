/* Animal shogi retrograde solver (jaxgames.evaluation.animal_shogi_solver builds and loads it).

   Positions are kept in the mover's frame, as jaxgames.games.animal_shogi.rules does: square
   s = row * 3 + col, row 0 the mover's far rank; codes 0 empty, 1..5 the mover's lion,
   giraffe, elephant, chick, hen, 6..10 the opponent's; hands h[0..2] the mover's giraffes,
   elephants, chicks, h[3..5] the opponent's. The side to move is thus normalised away, and a
   position and its left-right mirror share one entry (the smaller of their two keys).

   Rules as jaxgames plays them: a move leaving the mover's lion attacked is illegal (lions
   are never captured); a chick moving onto the far rank promotes; captured pieces go to the
   hand (a hen as a chick); drops on any empty square; a side with no legal move has lost; a
   lion reaching its far rank (a try) wins at once. The game-length cap and repetition are
   not part of a position: a position never forced to a result is a draw (the convention of
   retrograde analysis for cyclic games).

   Algorithm: forward breadth-first enumeration of every position reachable from the roots
   (open-addressing hash of 60-bit keys), each position's number of distinct successors, then
   retrograde analysis by predecessor ("un-move") generation level by level: a position with
   a successor lost in d plies is won in d + 1, a position whose successors are all won is
   lost in 1 + the longest of them. Distances are plies to the end of the game. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef uint64_t u64;
typedef struct {
  uint8_t b[12];
  uint8_t h[6];
} Pos;

/* one position as 18 bytes (12 squares, then 6 hand counts) from Python */
static Pos from_bytes(const uint8_t *pos) {
  Pos p;
  memcpy(p.b, pos, 12);
  memcpy(p.h, pos + 12, 6);
  return p;
}

enum { EMPTY, LION, GIRAFFE, ELEPHANT, CHICK, HEN };
/* result codes: 0 unresolved (a draw at the end), else (distance << 2) | WIN or LOSS */
enum { WIN = 1, LOSS = 2 };

static const int DR[8] = {-1, -1, 0, 1, 1, 1, 0, -1}; /* N NE E SE S SW W NW */
static const int DC[8] = {0, 1, 1, 1, 0, -1, -1, -1};
/* directions each kind steps in, in its owner's frame (bit d) */
static const int MOVEMASK[6] = {0, 0xFF, 0x55, 0xAA, 0x01, 0xD7};
static int TO[8][12]; /* target square of a step, -1 off the board */

static void init_shifts(void);

static void init_geometry(void) {
  init_shifts();
  for (int d = 0; d < 8; d++)
    for (int s = 0; s < 12; s++) {
      int r = s / 3 + DR[d], c = s % 3 + DC[d];
      TO[d][s] = (r >= 0 && r < 4 && c >= 0 && c < 3) ? r * 3 + c : -1;
    }
}

static u64 encode(const Pos *p) {
  u64 k = 0;
  for (int s = 0; s < 12; s++) k = (k << 4) | p->b[s];
  for (int i = 0; i < 6; i++) k = (k << 2) | p->h[i];
  return k;
}

static u64 encode_mirror(const Pos *p) {
  u64 k = 0;
  for (int s = 0; s < 12; s++) k = (k << 4) | p->b[(s / 3) * 3 + 2 - s % 3];
  for (int i = 0; i < 6; i++) k = (k << 2) | p->h[i];
  return k;
}

static u64 canon(const Pos *p) {
  u64 a = encode(p), b = encode_mirror(p);
  return a < b ? a : b;
}

static void decode(u64 k, Pos *p) {
  for (int i = 5; i >= 0; i--, k >>= 2) p->h[i] = k & 3;
  for (int s = 11; s >= 0; s--, k >>= 4) p->b[s] = k & 15;
}

static uint8_t swap_colour(uint8_t c) { return c == 0 ? 0 : (c <= 5 ? c + 5 : c - 5); }

/* the same position seen by the other player (board turned, colours and hands swapped) */
static void rotate(const Pos *p, Pos *q) {
  for (int s = 0; s < 12; s++) q->b[11 - s] = swap_colour(p->b[s]);
  for (int i = 0; i < 3; i++) {
    q->h[i] = p->h[i + 3];
    q->h[i + 3] = p->h[i];
  }
}

/* squares the opponent (codes 6..10, moving rotated by 180 degrees) attacks */
static int opp_attacks(const Pos *p) {
  int m = 0;
  for (int s = 0; s < 12; s++) {
    if (p->b[s] < 6) continue;
    int mask = MOVEMASK[p->b[s] - 5];
    for (int d = 0; d < 8; d++)
      if (mask >> d & 1) {
        int t = TO[(d + 4) & 7][s];
        if (t >= 0) m |= 1 << t;
      }
  }
  return m;
}

/* the side to move has lost at once: the opponent's lion stands on the opponent's far rank */
static int tried(const Pos *p) {
  return p->b[9] == LION + 5 || p->b[10] == LION + 5 || p->b[11] == LION + 5;
}

static void sort_small(u64 *a, int n) {
  for (int i = 1; i < n; i++) {
    u64 k = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > k) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = k;
  }
}

static int unique_u64(u64 *a, int n) {
  sort_small(a, n);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || a[m - 1] != a[i]) a[m++] = a[i];
  return m;
}

/* Keys of positions one move away, built incrementally: the key of the position turned for
   the other player (R) and of its mirror (M), changed at up to two squares and one hand
   count given in the frame of the position that was turned. */
static int SHIFT[12], MSHIFT[12], HSHIFT[6];

static void init_shifts(void) {
  for (int s = 0; s < 12; s++) SHIFT[s] = 12 + 4 * (11 - s);
  for (int s = 0; s < 12; s++) MSHIFT[(s / 3) * 3 + 2 - s % 3] = SHIFT[s];
  for (int i = 0; i < 6; i++) HSHIFT[i] = 2 * (5 - i);
}

typedef struct {
  u64 r, m;
} Turned;

static Turned turned(const Pos *p) {
  Pos q;
  rotate(p, &q);
  Turned t = {encode(&q), encode_mirror(&q)};
  return t;
}

/* square sq (this frame) from code a to code b; hand slot (this frame) by dh */
static inline void change(Turned *k, int sq, int a, int b) {
  int rs = 11 - sq;
  int64_t d = (int64_t)swap_colour((uint8_t)b) - (int64_t)swap_colour((uint8_t)a);
  k->r += (u64)(d * ((int64_t)1 << SHIFT[rs]));
  k->m += (u64)(d * ((int64_t)1 << MSHIFT[rs]));
}

static inline void change_hand(Turned *k, int slot, int dh) {
  int rslot = slot < 3 ? slot + 3 : slot - 3;
  u64 d = (u64)((int64_t)dh * ((int64_t)1 << HSHIFT[rslot]));
  k->r += d;
  k->m += d;
}

static inline u64 least(Turned k) { return k.r < k.m ? k.r : k.m; }

/* the canonical key after the mover's piece k moves from s to t, capturing cap (a captured
   piece goes to the hand, a hen as a chick) and promoting a chick on the far rank */
static u64 after_move(Turned key, int s, int k, int t, int cap) {
  change(&key, s, k, EMPTY);
  change(&key, t, cap, (k == CHICK && t < 3) ? HEN : k);
  if (cap >= 6) change_hand(&key, cap - 5 >= CHICK ? 2 : cap - 5 - 2, 1);
  return least(key);
}

/* appends the canonical keys after every drop from the mover's hand to out[n..]; the new n */
static int drops(const Pos *p, Turned base, u64 *out, int n) {
  for (int i = 0; i < 3; i++)
    for (int t = 0; t < 12 && p->h[i]; t++) {
      if (p->b[t]) continue;
      Turned key = base;
      change(&key, t, EMPTY, i + 2);
      change_hand(&key, i, -1);
      out[n++] = least(key);
    }
  return n;
}

/* canonical keys of the positions after every legal move (repeats kept), or 0 moves when
   the position is already over (a try); out needs room for 128. Legality as
   rules.legal_action_mask: with no sliding pieces a non-lion move keeps the lion safe iff it
   is not attacked or the move captures its only attacker, a lion move iff its target is not
   attacked, a drop iff the lion is not attacked. */
static int children(const Pos *p, u64 *out) {
  int n = 0;
  if (tried(p)) return 0;
  int att = opp_attacks(p), lion = -1;
  for (int s = 0; s < 12; s++)
    if (p->b[s] == LION) lion = s;
  if (lion < 0) return 0;
  int checkers = 0, checker = -1;
  for (int s = 0; s < 12; s++) {
    if (p->b[s] < 6) continue;
    int mask = MOVEMASK[p->b[s] - 5];
    for (int d = 0; d < 8; d++)
      if ((mask >> d & 1) && TO[(d + 4) & 7][s] == lion) {
        checkers++;
        checker = s;
      }
  }
  Turned base = turned(p);
  for (int s = 0; s < 12; s++) {
    int k = p->b[s];
    if (k < 1 || k > 5) continue;
    for (int d = 0; d < 8; d++) {
      if (!(MOVEMASK[k] >> d & 1)) continue;
      int t = TO[d][s];
      if (t < 0 || (p->b[t] >= 1 && p->b[t] <= 5)) continue;
      int cap = p->b[t];
      if (cap == LION + 5) continue; /* only in positions no legal game reaches */
      if (k == LION ? (att >> t & 1) : (checkers > 1 || (checkers == 1 && t != checker)))
        continue;
      out[n++] = after_move(base, s, k, t, cap);
    }
  }
  return checkers ? n : drops(p, base, out, n);
}

/* the rules the forward enumeration plays: 0 jaxgames' (children()); 1 the official rules,
   under which any move is legal (a lion may be moved into attack or left there), capturing a
   lion ends the game, and a try stands unless the lion is captured at once (which ends the
   game too): positions after a game-ending capture are not positions, so a try has no
   successor; 2 as 1, and a position whose mover can capture the opponent's lion is over (the
   capture wins: its other moves are not followed) */
static int RULES;

void as_set_rules(int rules) { RULES = rules; }

/* the mover can capture the opponent's lion */
static int lion_en_prise(const Pos *p) {
  for (int s = 0; s < 12; s++) {
    int k = p->b[s];
    if (k < 1 || k > 5) continue;
    for (int d = 0; d < 8; d++) {
      int t = (MOVEMASK[k] >> d & 1) ? TO[d][s] : -1;
      if (t >= 0 && p->b[t] == LION + 5) return 1;
    }
  }
  return 0;
}

static int children_official(const Pos *p, u64 *out) {
  int n = 0;
  if (tried(p) || (RULES == 2 && lion_en_prise(p))) return 0;
  Turned base = turned(p);
  for (int s = 0; s < 12; s++) {
    int k = p->b[s];
    if (k < 1 || k > 5) continue;
    for (int d = 0; d < 8; d++) {
      int t = (MOVEMASK[k] >> d & 1) ? TO[d][s] : -1;
      if (t < 0 || (p->b[t] >= 1 && p->b[t] <= 5) || p->b[t] == LION + 5) continue;
      out[n++] = after_move(base, s, k, t, p->b[t]);
    }
  }
  return drops(p, base, out, n);
}

/* canonical keys of every position (in its own mover's frame) with a move to p: un-drops,
   un-moves with or without an un-capture, un-promotions; a superset of the legal
   predecessors (membership in the table filters it); out needs room for 512 */
static int parents(const Pos *p, u64 *out) {
  int n = 0;
  Turned base = turned(p);
  for (int t = 0; t < 12; t++) {
    int c = p->b[t];
    if (c < 6) continue;
    int k = c - 5;
    if (k >= GIRAFFE && k <= CHICK && p->h[3 + k - 2] < 2) { /* un-drop */
      Turned key = base;
      change(&key, t, c, EMPTY);
      change_hand(&key, 3 + k - 2, 1);
      out[n++] = least(key);
    }
    /* (from square, piece before) pairs; the opponent's step in its direction d is our
       direction d + 4, so it came from TO[d][t] */
    int from[9], before[9], m = 0;
    if (!(k == CHICK && t >= 9)) /* a chick moving onto the far rank would have promoted */
      for (int d = 0; d < 8; d++)
        if (MOVEMASK[k] >> d & 1) {
          from[m] = TO[d][t];
          before[m++] = k;
        }
    if (k == HEN && t >= 9) {
      from[m] = TO[0][t];
      before[m++] = CHICK;
    }
    for (int j = 0; j < m; j++) {
      int f = from[j];
      if (f < 0 || p->b[f] != EMPTY) continue;
      Turned moved = base;
      change(&moved, f, EMPTY, before[j] + 5);
      Turned key = moved;
      change(&key, t, c, EMPTY);
      out[n++] = least(key);
      for (int i = 0; i < 3; i++) { /* un-capture one of the mover's pieces */
        if (!p->h[3 + i]) continue;
        for (int v = 0; v < (i == 2 ? 2 : 1); v++) {
          key = moved;
          change(&key, t, c, i == 2 ? CHICK + v : i + 2);
          change_hand(&key, 3 + i, -1);
          out[n++] = least(key);
        }
      }
    }
  }
  return n;
}

/* ------------------------------------------------------------------------ the table */
static u64 *KEY; /* hash slots, 0 = free (no position has key 0: lions are never off) */
static uint16_t *RES;
static uint8_t *CNT;
static u64 MASK, NPOS;
static int VERBOSE;

static u64 mix(u64 x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ULL;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dULL;
  return x ^ (x >> 33);
}

static int64_t lookup(u64 k) {
  for (u64 i = mix(k) & MASK;; i = (i + 1) & MASK) {
    if (KEY[i] == k) return (int64_t)i;
    if (!KEY[i]) return -1;
  }
}

/* slot of k, inserted if new (*fresh = 1) */
static u64 insert(u64 k, int *fresh) {
  for (u64 i = mix(k) & MASK;; i = (i + 1) & MASK) {
    if (KEY[i] == k) {
      *fresh = 0;
      return i;
    }
    if (!KEY[i]) {
      KEY[i] = k;
      *fresh = 1;
      return i;
    }
  }
}

typedef struct {
  uint32_t *a;
  u64 n, cap;
} List;

static int push(List *l, uint32_t v) {
  if (l->n == l->cap) {
    u64 cap = l->cap ? 2 * l->cap : 1 << 16;
    uint32_t *a = realloc(l->a, cap * sizeof(uint32_t));
    if (!a) return -1;
    l->a = a;
    l->cap = cap;
  }
  l->a[l->n++] = v;
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* zeroed memory on transparent huge pages where the kernel offers them (the hash is read
   at random: fewer TLB misses) */
static void *big(size_t bytes) {
  size_t align = (size_t)1 << 21, size = (bytes + align - 1) / align * align;
  void *p = NULL;
  if (posix_memalign(&p, align, size)) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);
#endif
  memset(p, 0, size);
  return p;
}

void as_free(void) {
  free(KEY);
  free(RES);
  free(CNT);
  KEY = NULL;
  RES = NULL;
  CNT = NULL;
  NPOS = 0;
}

/* paired in-place sort of KEY[0..n) with RES */
static void sort_pairs(int64_t lo, int64_t hi) {
  while (hi - lo > 16) {
    u64 a = KEY[lo], b = KEY[(lo + hi) / 2], c = KEY[hi - 1];
    u64 piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int64_t i = lo, j = hi - 1;
    while (i <= j) {
      while (KEY[i] < piv) i++;
      while (KEY[j] > piv) j--;
      if (i <= j) {
        u64 tk = KEY[i];
        KEY[i] = KEY[j];
        KEY[j] = tk;
        uint16_t tr = RES[i];
        RES[i] = RES[j];
        RES[j] = tr;
        i++;
        j--;
      }
    }
    if (j - lo < hi - i) {
      sort_pairs(lo, j + 1);
      lo = i;
    } else {
      sort_pairs(i, hi);
      hi = j + 1;
    }
  }
  for (int64_t i = lo + 1; i < hi; i++) {
    u64 k = KEY[i];
    uint16_t r = RES[i];
    int64_t j = i - 1;
    while (j >= lo && KEY[j] > k) {
      KEY[j + 1] = KEY[j];
      RES[j + 1] = RES[j];
      j--;
    }
    KEY[j + 1] = k;
    RES[j + 1] = r;
  }
}

/* Solve every position reachable from the roots (n x 18 bytes: board[12], hands[6], each in
   its mover's frame) in a table of 2**log2_slots slots. Returns the number of positions
   (then as_keys / as_results point at them, sorted by key, until as_free), or -1 when out
   of memory, -2 when the table is too small, -3 when a distance overflows. stats[0..7]:
   positions, wins, losses, draws, longest distance, levels, seconds forward, seconds back. */
int64_t as_solve(const uint8_t *roots, int n_roots, int log2_slots, int verbose,
                 int64_t *stats) {
  init_geometry();
  as_free();
  VERBOSE = verbose;
  u64 slots = (u64)1 << log2_slots, limit = slots / 10 * 9;
  MASK = slots - 1;
  KEY = big(slots * sizeof(u64));
  RES = big(slots * sizeof(uint16_t));
  CNT = big(slots);
  List queue = {0}, level = {0}, next = {0};
  int err = 0;
  if (!KEY || !RES || !CNT) err = -1;
  double t0 = now();
  u64 buf[512];
  Pos p;
  int fresh;
  for (int i = 0; i < n_roots && !err; i++) {
    p = from_bytes(roots + 18 * i);
    u64 slot = insert(canon(&p), &fresh);
    if (fresh && push(&queue, (uint32_t)slot)) err = -1;
  }
  /* forward: enumerate, count distinct successors, mark the lost positions */
  for (u64 qi = 0; qi < queue.n && !err; qi++) {
    u64 slot = queue.a[qi];
    decode(KEY[slot], &p);
    int n = unique_u64(buf, RULES ? children_official(&p, buf) : children(&p, buf));
    CNT[slot] = (uint8_t)n;
    if (n == 0) {
      RES[slot] = LOSS;
      if (push(&level, (uint32_t)slot)) err = -1;
    }
    for (int j = 0; j < n && !err; j++) {
      u64 s = insert(buf[j], &fresh);
      if (fresh) {
        if (queue.n >= limit) err = -2;
        else if (push(&queue, (uint32_t)s)) err = -1;
      }
    }
    if (VERBOSE && (qi & 0xFFFFFF) == 0 && qi)
      fprintf(stderr, "forward: %llu expanded, %llu found, %.0f s\n", (unsigned long long)qi,
              (unsigned long long)queue.n, now() - t0);
  }
  NPOS = queue.n;
  free(queue.a);
  double t1 = now();
  if (VERBOSE && !err)
    fprintf(stderr, "forward done: %llu positions, %.0f s\n", (unsigned long long)NPOS, t1 - t0);
  if (RULES) level.n = 0; /* other rules: the reachable positions only, not solved */
  /* backward, one distance at a time */
  int64_t wins = 0, losses = (int64_t)level.n, longest = 0, levels = 0;
  for (int d = 0; level.n && !err; d++) {
    levels++;
    longest = d;
    if (d + 1 >= (1 << 14)) {
      err = -3;
      break;
    }
    next.n = 0;
    for (u64 li = 0; li < level.n && !err; li++) {
      u64 slot = level.a[li];
      int lost = (RES[slot] & 3) == LOSS;
      decode(KEY[slot], &p);
      int n = parents(&p, buf), m = 0;
      for (int j = 0; j < n; j++) { /* the parents' slots, each once */
        int64_t s = lookup(buf[j]);
        if (s >= 0 && !RES[s]) buf[m++] = (u64)s;
      }
      m = unique_u64(buf, m);
      for (int j = 0; j < m; j++) {
        u64 s = buf[j];
        if (lost) {
          RES[s] = (uint16_t)(((d + 1) << 2) | WIN);
          wins++;
          if (push(&next, (uint32_t)s)) err = -1;
        } else if (--CNT[s] == 0) {
          RES[s] = (uint16_t)(((d + 1) << 2) | LOSS);
          losses++;
          if (push(&next, (uint32_t)s)) err = -1;
        }
      }
    }
    if (VERBOSE)
      fprintf(stderr, "level %d: %llu resolved, next %llu, %.0f s\n", d,
              (unsigned long long)level.n, (unsigned long long)next.n, now() - t1);
    List tmp = level;
    level = next;
    next = tmp;
  }
  free(level.a);
  free(next.a);
  free(CNT);
  CNT = NULL;
  if (err) {
    as_free();
    return err;
  }
  /* compact to the front, sorted by key */
  u64 j = 0;
  for (u64 i = 0; i < slots; i++)
    if (KEY[i]) {
      KEY[j] = KEY[i];
      RES[j++] = RES[i];
    }
  sort_pairs(0, (int64_t)j);
  double t2 = now();
  if (stats) {
    stats[0] = (int64_t)NPOS;
    stats[1] = wins;
    stats[2] = losses;
    stats[3] = (int64_t)NPOS - wins - losses;
    stats[4] = longest;
    stats[5] = levels;
    stats[6] = (int64_t)(t1 - t0);
    stats[7] = (int64_t)(t2 - t1);
  }
  return (int64_t)NPOS;
}

u64 *as_keys(void) { return KEY; }
uint16_t *as_results(void) { return RES; }

/* one position (18 bytes) -> its canonical key */
u64 as_key(const uint8_t *pos) {
  Pos p = from_bytes(pos);
  return canon(&p);
}

/* distinct canonical keys of the successors (sorted; out: 128) or of the candidate
   predecessors (out: 512) of one position; their number */
int as_children(const uint8_t *pos, u64 *out) {
  init_geometry();
  Pos p = from_bytes(pos);
  return unique_u64(out, children(&p, out));
}

int as_parents(const uint8_t *pos, u64 *out) {
  init_geometry();
  Pos p = from_bytes(pos);
  return unique_u64(out, parents(&p, out));
}

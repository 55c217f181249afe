"""Multi-word bitboards (reversi and its engine): N*N bits (bit ``row * N + col``) in
``W = ceil(N*N / 32)`` uint32 words, bit b in word ``b // 32``. In jitted code a bitboard is a
*tuple of W uint32 scalars*: under ``vmap`` each word is one flat ``[batch]`` array and a
multi-word shift a few elementwise ops with static amounts (no gathers, no x64).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

Words = tuple  # a bitboard: tuple of W uint32 scalars (or [batch] arrays)


def num_words(size: int) -> int:
    """uint32 words per bitboard of a ``size`` x ``size`` board."""
    return -(-size * size // 32)


def pack_mask(bits: np.ndarray) -> np.ndarray:
    """bool[N*N] (numpy) -> uint32[W] (numpy) bitboard."""
    bits = np.asarray(bits, bool).reshape(-1)
    w = num_words(math.isqrt(bits.size))
    padded = np.zeros(32 * w, np.uint64)
    padded[: bits.size] = bits
    return (padded.reshape(w, 32) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)


def unpack(board: jax.Array, cells: int) -> jax.Array:
    """uint32[..., W] bitboard -> bool[..., cells] (bit b of the board at index b)."""
    bits = (board[..., :, None] >> jnp.arange(32, dtype=jnp.uint32)) & jnp.uint32(1)
    return bits.reshape(*board.shape[:-1], -1)[..., :cells].astype(jnp.bool_)


def pack(bits: jax.Array, words: int) -> Words:
    """bool[..., N*N] -> a bitboard of ``words`` words (bit b at square b), the inverse of
    :func:`unpack`."""
    padded = jnp.zeros((*bits.shape[:-1], 32 * words), jnp.uint32)
    padded = padded.at[..., : bits.shape[-1]].set(bits.astype(jnp.uint32))
    weighted = padded.reshape(*bits.shape[:-1], words, 32) << jnp.arange(32, dtype=jnp.uint32)
    return split_words(weighted.sum(axis=-1, dtype=jnp.uint32))  # distinct bits: sum = OR


def split_words(board: jax.Array) -> Words:
    """uint32[..., W] -> tuple of W uint32[...] words."""
    return tuple(board[..., i] for i in range(board.shape[-1]))


def stack_words(words: Words) -> jax.Array:
    """tuple of W uint32[...] words -> uint32[..., W]."""
    return jnp.stack(words, axis=-1)


def const(mask: np.ndarray) -> Words:
    return tuple(np.uint32(m) for m in mask)


def and_(a: Words, b: Words) -> Words:
    return tuple(x & y for x, y in zip(a, b))


def or_(a: Words, b: Words) -> Words:
    return tuple(x | y for x, y in zip(a, b))


def andnot(a: Words, b: Words) -> Words:
    return tuple(x & ~y for x, y in zip(a, b))


def any_(a: Words) -> jax.Array:
    acc = a[0]
    for x in a[1:]:
        acc = acc | x
    return acc != 0


def popcount(a: Words) -> jax.Array:
    return sum(jax.lax.population_count(x).astype(jnp.int32) for x in a)


def runtime_one(x: jax.Array) -> jax.Array:
    """uint32 1 computed from the non-negative int32 ``x`` in a way XLA cannot fold."""
    x = jnp.asarray(x, jnp.int32)
    return jnp.uint32(1) + (x.astype(jnp.uint32) >> np.uint32(31))


def materialize(a: Words, one: jax.Array) -> Words:
    """Identity (``one`` is 1) that XLA's CPU fusion treats as expensive, so the words are
    computed once and stored instead of fused into each of the N*N+1 mask outputs (a division
    by a runtime value; ``optimization_barrier`` is removed before fusion)."""
    return tuple(w // one for w in a)


def shift(a: Words, s: int) -> Words:
    """Shift a multi-word bitboard by ``s`` bits (static): s > 0 towards higher squares."""
    w = len(a)
    q, r = divmod(abs(s), 32)

    def word(i):
        return a[i] if 0 <= i < w else None

    out = []
    for i in range(w):
        if s >= 0:
            main, carry = word(i - q), word(i - q - 1)
            x = None if main is None else (main << np.uint32(r) if r else main)
            c = None if (carry is None or r == 0) else carry >> np.uint32(32 - r)
        else:
            main, carry = word(i + q), word(i + q + 1)
            x = None if main is None else (main >> np.uint32(r) if r else main)
            c = None if (carry is None or r == 0) else carry << np.uint32(32 - r)
        if x is None and c is None:
            out.append(jnp.zeros_like(a[0]))
        elif x is None:
            out.append(c)
        elif c is None:
            out.append(x)
        else:
            out.append(x | c)
    return tuple(out)


def fill(gen: Words, pro: Words, s: int, stages: int) -> Words:
    """Kogge-Stone occluded fill: ``gen`` plus every square reachable from it by steps of ``s``
    through squares of ``pro`` (which must already exclude squares a step could wrap onto)."""
    for k in range(stages):
        d = s << k
        gen = or_(gen, and_(pro, shift(gen, d)))
        if k + 1 < stages:
            pro = and_(pro, shift(pro, d))
    return gen


def where(c: jax.Array, a: Words, b: Words) -> Words:
    """Word-wise ``jnp.where(c, a, b)``."""
    return tuple(jnp.where(c, x, y) for x, y in zip(a, b))

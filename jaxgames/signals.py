"""Ctrl-C held back around work that must not be cut in half: importing the command modules
(an extension module interrupted mid-import), writing a checkpoint (orbax's threads left
half-way print tracebacks at exit). No heavy imports: the command line imports it first."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

_DEPTH = [0]  # holds open in the main thread


@contextlib.contextmanager
def interrupts_held() -> Iterator[list[int]]:
    """Hold back SIGINT inside the block; the yielded list records those that arrived (a
    thread other than the main one cannot hold them: the list stays empty). A hold inside
    another is part of it: its list stays empty and the outermost one records, so work made
    of several held pieces (each seed's checkpoint of a chunk) is interrupted after all."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread() or _DEPTH[0]:
        yield received
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    _DEPTH[0] += 1
    try:
        yield received
    finally:
        _DEPTH[0] -= 1
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)

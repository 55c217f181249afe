"""One writer per run directory: an exclusive lock held for the life of a training run.

``<run>/.lock`` is locked with ``flock``, which the kernel drops when its process ends, however
it ends, so a killed holder's file is stale by construction and taken over
(:attr:`RunLock.stale_pid`); it holds the holder's pid, host and start time for the error
message. Without ``flock``, an ``O_EXCL`` file with a pid liveness check does the same.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


class RunLockedError(ValueError):
    """Another live process holds the run directory's lock."""


def _read_holder(path: str) -> dict[str, str]:
    """``{"pid": ..., "host": ..., "since": ...}`` from a lock file (missing keys if unreadable)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(4096)
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in ("pid", "host", "since"):
            out[key.strip()] = value.strip()[:100]
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class RunLock:
    """Exclusive lock on the existing ``run_dir``, a context manager: :meth:`acquire` raises
    :class:`RunLockedError` naming a live holder."""

    def __init__(self, run_dir: str):
        self.run_dir = run_dir
        self.path = os.path.join(run_dir, LOCK_FILE)
        self.stale_pid: int | None = None
        self.stale_host: str | None = None  # the stale holder's machine, when not this one
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def _refuse(self) -> RunLockedError:
        holder = _read_holder(self.path)
        who = f"process {holder['pid']}" if "pid" in holder else "another process"
        if holder.get("host") and holder["host"] != socket.gethostname():
            who += f" on {holder['host']}"
        since = f" since {holder['since']}" if "since" in holder else ""
        return RunLockedError(
            f"run directory {self.run_dir!r} is in use by {who}{since} (lock {self.path}); "
            "only one process may train into a run: wait for it to finish, stop it, or use "
            "another run name"
        )

    def _note_stale(self) -> None:
        holder = _read_holder(self.path)
        pid = holder.get("pid", "")
        if pid.isdigit() and int(pid) != os.getpid():
            self.stale_pid = int(pid)
            if holder.get("host") and holder["host"] != socket.gethostname():
                self.stale_host = holder["host"]

    def _write_holder(self, fd: int) -> None:
        info = (
            f"pid={os.getpid()}\nhost={socket.gethostname()}\n"
            f"since={time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n"
        )
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, info.encode())
        os.fsync(fd)

    def acquire(self) -> RunLock:
        if self._fd is not None:
            return self
        if fcntl is None:  # pragma: no cover - not on POSIX
            return self._acquire_exclusive_file()
        for _ in range(100):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise self._refuse() from None
                raise
            # the holder we raced with may have removed the file after we opened it: the lock
            # must be on the file the path names now
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                if os.fstat(fd).st_size:
                    self._note_stale()  # a killed holder's file: its lock died with it
                self._write_holder(fd)
                self._fd = fd
                return self
            os.close(fd)
        raise RunLockedError(f"could not lock {self.path}: it keeps being replaced")

    def _acquire_exclusive_file(self) -> RunLock:  # pragma: no cover - not on POSIX
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                pid = _read_holder(self.path).get("pid", "")
                if pid.isdigit() and _pid_alive(int(pid)):
                    raise self._refuse() from None
                self._note_stale()
                os.unlink(self.path)
                continue
            self._write_holder(fd)
            self._fd = fd
            return self
        raise self._refuse()

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.unlink(self.path)  # while still locked: nobody can hold this file meanwhile
        except OSError:
            pass
        os.close(fd)  # drops the flock

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

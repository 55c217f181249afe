"""Small C programs beside their modules (the exact solvers), compiled with the system C
compiler (``$CC``, ``cc`` or ``gcc``) at first use and loaded with ctypes: no build step
beyond the package's install.

The compiled libraries and the tables the solvers write live in the solve cache:
``$JAXGAMES_SOLVE_CACHE``, else ``$XDG_CACHE_HOME/jaxgames/solved`` (or
``~/.cache/jaxgames/solved``); ``JAXGAMES_SOLVE_CACHE=0`` turns the tables off (libraries
then go to a temp folder of the process's own).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile

ENV_VAR = "JAXGAMES_SOLVE_CACHE"
_OFF = {"0", "off", "false", "no"}
_ON = {"", "1", "on", "true", "yes"}


class SolverUnavailable(RuntimeError):
    """No C compiler, or building or running a solver failed."""


def cache_dir() -> str | None:
    """The folder of solved tables and compiled solvers; ``None`` when turned off."""
    setting = os.environ.get(ENV_VAR, "").strip()
    if setting.lower() in _OFF:
        return None
    if setting.lower() not in _ON:
        return os.path.abspath(os.path.expanduser(setting))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxgames", "solved")


#: this process's own folder of libraries while the cache is off (removed at exit)
_PRIVATE: list[str] = []


def _library_folder() -> str:
    """Where compiled libraries go: the cache folder, else a folder of this process's own
    (never a shared temp path, where a file another user left would be loaded)."""
    folder = cache_dir()
    if folder is not None:
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise SolverUnavailable(
                f"the solve cache {folder} ({ENV_VAR}, or its default) is a file, not a folder"
            )
        return folder
    if not _PRIVATE:
        _PRIVATE.append(tempfile.mkdtemp(prefix="jaxgames_solvers_"))
        atexit.register(shutil.rmtree, _PRIVATE[0], ignore_errors=True)
    return _PRIVATE[0]


def _compiler() -> list[str] | None:
    """The C compiler's command line: ``$CC`` as make reads it, a command that may carry flags
    (``"gcc -m64"``), else ``cc`` or ``gcc`` found on the path; ``None`` without one."""
    cc = os.environ.get("CC")
    if not cc:
        found = shutil.which("cc") or shutil.which("gcc")
        return None if found is None else [found]
    try:
        argv = shlex.split(cc)
    except ValueError as e:  # an unclosed quote
        raise SolverUnavailable(f"CC={cc!r} is not a command line: {e}") from None
    if not argv:
        raise SolverUnavailable("CC is blank: unset it or name a C compiler")
    return argv


def build(source: str) -> str:
    """Compile the C file ``source`` once per content (into :func:`cache_dir`, else a private
    temp folder); the shared library's path. :class:`SolverUnavailable` naming the problem."""
    with open(source, "rb") as f:
        tag = hashlib.sha256(f.read()).hexdigest()[:12]
    folder = _library_folder()
    stem = os.path.splitext(os.path.basename(source))[0]
    lib = os.path.join(folder, f"{stem}_{tag}.so")
    if os.path.exists(lib):
        return lib
    compiler = _compiler()
    if compiler is None:
        raise SolverUnavailable(
            f"no C compiler found to build {os.path.basename(source)} (install gcc or set CC)"
        )
    cc = os.environ.get("CC") or compiler[0]  # as typed, for the messages
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise SolverUnavailable(
            f"cannot create the solve cache {folder} ({ENV_VAR}, or its default): {e.strerror or e}"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SolverUnavailable(
            f"the solve cache {folder} ({ENV_VAR}, or its default) is not writable: set "
            f"{ENV_VAR} to a folder you can write, or {ENV_VAR}=0 to build in a private one"
        )
    tmp = f"{lib}.{os.getpid()}"
    try:
        done = subprocess.run(
            [*compiler, "-O2", "-shared", "-fPIC", "-o", tmp, source],
            capture_output=True,
            text=True,
        )
    except OSError as e:  # CC names no program
        raise SolverUnavailable(f"cannot run the C compiler {cc!r}: {e.strerror or e}") from None
    if done.returncode != 0:
        why = " ".join(done.stderr.split())[:300] or "no message"
        raise SolverUnavailable(
            f"building {os.path.basename(source)} with {cc} failed (exit code "
            f"{done.returncode}): {why}"
        )
    os.replace(tmp, lib)  # atomic: a concurrent build leaves one whole library
    return lib


def load(source: str) -> ctypes.CDLL:
    """The C file ``source`` compiled (:func:`build`) and loaded; a cached library that does
    not load (a damaged file) is built again once, then :class:`SolverUnavailable` names it."""
    lib = build(source)
    try:
        return ctypes.CDLL(lib)
    except OSError:
        with contextlib.suppress(OSError):  # another process may have removed it first
            os.remove(lib)
    lib = build(source)
    try:
        return ctypes.CDLL(lib)
    except OSError as e:
        raise SolverUnavailable(f"the compiled solver {lib} does not load: {e}") from None


def has_compiler() -> bool:
    """A C compiler is on the path (or ``$CC`` is set)."""
    return bool(os.environ.get("CC")) or _compiler() is not None

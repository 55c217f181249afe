"""Small C programs beside their modules (the exact solvers), compiled with the system C
compiler (``$CC``, ``cc`` or ``gcc``) at first use and loaded with ctypes: no build step
beyond the package's install.

The compiled libraries and the tables the solvers write live in the solve cache:
``$JAXGAMES_SOLVE_CACHE``, else ``$XDG_CACHE_HOME/jaxgames/solved`` (or
``~/.cache/jaxgames/solved``); ``JAXGAMES_SOLVE_CACHE=0`` turns the tables off (libraries
then go to the temp folder).
"""

from __future__ import annotations

import hashlib
import os
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


def build(source: str) -> str:
    """Compile the C file ``source`` once per content (into :func:`cache_dir`, else the temp
    folder); the shared library's path. :class:`SolverUnavailable` naming the problem."""
    with open(source, "rb") as f:
        tag = hashlib.sha256(f.read()).hexdigest()[:12]
    folder = cache_dir() or tempfile.gettempdir()
    stem = os.path.splitext(os.path.basename(source))[0]
    lib = os.path.join(folder, f"{stem}_{tag}.so")
    if os.path.exists(lib):
        return lib
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SolverUnavailable(
            f"no C compiler found to build {os.path.basename(source)} (install gcc or set CC)"
        )
    os.makedirs(folder, exist_ok=True)
    tmp = f"{lib}.{os.getpid()}"
    done = subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", "-o", tmp, source], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SolverUnavailable(f"building the solver failed: {done.stderr.strip()[:300]}")
    os.replace(tmp, lib)  # atomic: a concurrent build leaves one whole library
    return lib


def has_compiler() -> bool:
    """A C compiler is on the path (or ``$CC`` is set)."""
    return bool(os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc"))

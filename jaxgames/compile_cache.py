"""A persistent XLA compilation cache, on by default for the command line and the experiments.

    from jaxgames.compile_cache import enable_compile_cache
    enable_compile_cache()          # before the first jit compilation of the process

Compiling a training chunk takes tens of seconds on a CPU (a third of a short run's wall
time); with JAX's persistent compilation cache a rerun of the same configuration loads the
compiled programs from disk instead. ``jaxgames`` (:func:`jaxgames.cli.main`) and the
experiment scripts that use ``experiments/common.py`` call :func:`enable_compile_cache`.

Where: ``$XDG_CACHE_HOME/jaxgames/xla/<host>`` (``~/.cache/jaxgames/xla/<host>`` without
``XDG_CACHE_HOME``), where ``<host>`` names the CPU (architecture, model and feature flags): the
entries are native code, and the key JAX gives them names the platform and its version, not
the instruction set, so machines sharing a home directory keep separate caches.

Off: ``JAXGAMES_COMPILE_CACHE=0`` (also ``off``, ``false``, ``no``) or ``jaxgames
--no-compile-cache``. ``JAXGAMES_COMPILE_CACHE=<directory>`` puts the cache there instead. A
directory set through JAX itself (``JAX_COMPILATION_CACHE_DIR``) is left as it is.

Concurrent runs. JAX (0.10, ``jax/_src/lru_cache.py``) does *not* write entries atomically:
without a size limit it writes ``<key>-cache`` in place (``Path.write_bytes``, no temporary
file, no lock) and skips a key whose file exists. What keeps concurrent runs correct is the read
side: an entry is a compressed stream (zlib, or zstd where installed) that fails to decompress
when it is cut short, and JAX turns any error reading an entry into a warning and compiles the
program itself (``jax/_src/compiler.py: _cache_read``). So a run never loads a half-written
program; it may recompile one that another run is writing at that moment, and an entry torn by
a process killed in the middle of a write costs that program's compilation (with a warning) in
later runs until the file is deleted (or the cache directory: it is only a cache).

The cache is trusted code: keep it in a directory only you can write (JAX's warning).
"""

from __future__ import annotations

import hashlib
import os
import platform

ENV_VAR = "JAXGAMES_COMPILE_CACHE"
_OFF = {"0", "off", "false", "no"}
_ON = {"", "1", "on", "true", "yes"}


def _host_key() -> str:
    """A short name of this machine's CPU: architecture + hash of the model and feature flags."""
    text = platform.machine() + platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features"))]
        text += "".join(sorted(set(lines)))
    except OSError:
        pass
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    return f"{platform.machine() or 'cpu'}-{digest}"


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/jaxgames/xla/<host>`` (``~/.cache/...`` without ``XDG_CACHE_HOME``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxgames", "xla", _host_key())


def enable_compile_cache(path: str | None = None, enabled: bool = True) -> str | None:
    """Turn on JAX's persistent compilation cache for this process and return its directory,
    or ``None`` if it stays off.

    path:     the cache directory (``None``: ``$JAXGAMES_COMPILE_CACHE`` if it names one, else
              :func:`default_cache_dir`)
    enabled:  ``False`` (``--no-compile-cache``) turns the persistent cache off, as does
              ``JAXGAMES_COMPILE_CACHE=0``

    Call it before the first compilation. A cache directory already configured through JAX
    (``JAX_COMPILATION_CACHE_DIR`` or ``jax.config``) is kept and returned.
    """
    import jax  # here, not at module level: the CLI imports this module before JAX (startup)

    setting = os.environ.get(ENV_VAR, "").strip()
    if not enabled or setting.lower() in _OFF:
        jax.config.update("jax_enable_compilation_cache", False)
        return None
    configured = jax.config.jax_compilation_cache_dir
    if configured:
        return configured
    if path is None:
        path = default_cache_dir() if setting.lower() in _ON else os.path.expanduser(setting)
    path = os.path.abspath(path)
    os.makedirs(path, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", path)
    return path

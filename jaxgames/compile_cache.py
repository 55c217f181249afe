"""JAX's persistent compilation cache, on by default for the command line
(:func:`enable_compile_cache` before the first compilation): a rerun of the same configuration
loads its compiled programs from disk. The ``experiments/`` scripts leave it off: several of
them report compile seconds.

The directory names the host's CPU model and flags (entries are native code, and JAX's key
does not name the instruction set). ``JAXGAMES_COMPILE_CACHE=0`` or ``--no-compile-cache``
turn it off, ``JAXGAMES_COMPILE_CACHE=<directory>`` moves it. Concurrent runs are safe (an
entry cut short fails to decompress and is compiled again). The cache is trusted code: keep
it in a directory only you can write.
"""

from __future__ import annotations

import hashlib
import os
import platform
import warnings

ENV_VAR = "JAXGAMES_COMPILE_CACHE"
_OFF = {"0", "off", "false", "no"}
_ON = {"", "1", "on", "true", "yes"}


def _host_key() -> str:
    """This machine's CPU: architecture + hash of the model and feature flags."""
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
    """Turn the cache on (or off) for this process; its directory, or ``None`` when off.
    ``path``: default ``$JAXGAMES_COMPILE_CACHE`` or :func:`default_cache_dir`; a directory
    set through JAX is kept, and so is JAX's own off switch (``JAX_ENABLE_COMPILATION_CACHE``).
    A directory that cannot be created leaves the cache off, with a warning."""
    import jax  # not at module level: the CLI imports this module before JAX

    setting = os.environ.get(ENV_VAR, "").strip()
    jax_off = os.environ.get("JAX_ENABLE_COMPILATION_CACHE", "").strip().lower() in _OFF
    if not enabled or setting.lower() in _OFF or jax_off:
        jax.config.update("jax_enable_compilation_cache", False)
        return None
    configured = jax.config.jax_compilation_cache_dir
    if not configured:
        if path is None:
            path = default_cache_dir() if setting.lower() in _ON else os.path.expanduser(setting)
        configured = os.path.abspath(path)
        try:
            os.makedirs(configured, exist_ok=True)
        except OSError as e:
            jax.config.update("jax_enable_compilation_cache", False)
            warnings.warn(
                f"the compilation cache is off: cannot create {configured} ({e.strerror}); "
                f"set {ENV_VAR} to a writable directory, or to 0"
            )
            return None
        jax.config.update("jax_compilation_cache_dir", configured)
    jax.config.update("jax_enable_compilation_cache", True)
    return configured

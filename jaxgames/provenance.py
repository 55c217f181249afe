"""Where a result was made: the machine and the code version, as run configs, ladders and
model cards record them."""

from __future__ import annotations

import os
import platform
import subprocess

import jax


def machine_description() -> str:
    """Hardware and software this process runs on (run configs, ladders, model cards)."""
    devs = jax.devices()
    return (
        f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs; "
        f"{len(devs)} x {devs[0].device_kind} ({jax.default_backend()}); "
        f"jax {jax.__version__}, python {platform.python_version()}"
    )


def git_version() -> str:
    """The short commit of the checkout jaxgames runs from ("" outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=os.path.dirname(os.path.abspath(__file__)),
            capture_output=True,
            text=True,
            timeout=5,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""

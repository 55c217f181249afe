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
    """The short commit of the jaxgames checkout this module runs from; "" when it runs from
    none, such as an installed copy inside another project's repository (whose commit is not
    jaxgames')."""
    here = os.path.dirname(os.path.abspath(__file__))

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=here, capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else ""

    try:
        if not git("ls-files", "--error-unmatch", os.path.basename(__file__)):
            return ""  # this file is not part of the repository around it
        return git("rev-parse", "--short", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return ""

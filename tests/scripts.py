"""The experiment scripts as modules for the tests: loaded by path, since nothing makes
``experiments/`` importable (the scripts import only the installed package)."""

import functools
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = os.path.join(ROOT, "experiments")


@functools.lru_cache(maxsize=None)
def script(name: str):
    """The module of ``experiments/<name>.py`` (loaded once per test process)."""
    spec = importlib.util.spec_from_file_location(f"experiment_{name}", f"{EXPERIMENTS}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look their module up
    spec.loader.exec_module(module)
    return module

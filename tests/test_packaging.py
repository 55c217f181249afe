"""The wheel: built from the sources, installed into a fresh virtual environment, it imports
from there (not from this checkout), carries its data files and runs the quick start."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile

import pytest

import jaxgames

ROOT = pathlib.Path(jaxgames.__file__).parent.parent
PACKAGE = ROOT / "jaxgames"

QUICK_START = """
import sys
import jax
import jaxgames

print(jaxgames.__file__)
print(jaxgames.__version__)
env = jaxgames.make("tic_tac_toe")
state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 64))
for key in jax.random.split(jax.random.PRNGKey(1), 5):
    action = jax.vmap(jaxgames.random_action)(jax.random.split(key, 64), state.legal_action_mask)
    state = jax.vmap(env.step)(state, action)
assert (state.step_count == 5).all()
from jaxgames.evaluation.ladder import load_ladder
print(len(load_ladder("tic_tac_toe").rungs))
"""


def _data_files() -> list[str]:
    """The package's non-Python files that must ship (relative to the repository root)."""
    globs = [
        "evaluation/ladders/*.json",
        "evaluation/*.c",
        "py.typed",
        "pretrained/**/*",
        "web/*.html",
    ]
    found = {p for g in globs for p in PACKAGE.glob(g) if p.is_file()}
    return sorted(str(p.relative_to(ROOT)) for p in found if "__pycache__" not in p.parts)


def test_wheel_installs_and_runs_the_quick_start(tmp_path):
    pytest.importorskip("setuptools")
    # build from a copy: an in-tree build would leave build/ and *.egg-info in the checkout
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(PACKAGE, src / "jaxgames", ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(dist)]
    subprocess.run([*build, str(src)], check=True, cwd=tmp_path)
    (wheel,) = dist.glob("jaxgames-*.whl")
    assert wheel.name.startswith(f"jaxgames-{jaxgames.__version__}-py3-none-any")

    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in _data_files() if f not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert "jaxgames/evaluation/ladders/tic_tac_toe.json" in names
    assert "jaxgames/py.typed" in names
    metadata = (
        zipfile.ZipFile(wheel).read(f"jaxgames-{jaxgames.__version__}.dist-info/METADATA").decode()
    )
    assert f"Version: {jaxgames.__version__}\n" in metadata
    assert "Classifier: Typing :: Typed" in metadata

    # a fresh environment that sees this one's libraries (jax, ...) through a .pth file but
    # not its jaxgames (an editable install's finder lives in a .pth that is not processed)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    pathlib.Path(purelib, "parent_env.pth").write_text(
        "\n".join({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}) + "\n"
    )
    subprocess.run([*pip, "--python", str(python), "install", "--no-deps", str(wheel)], check=True)

    run = subprocess.run(
        [python, "-c", QUICK_START],
        cwd=tmp_path,  # not the checkout: `import jaxgames` must find the installed wheel
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    where, version, rungs = run.stdout.split()
    assert pathlib.Path(where).is_relative_to(pathlib.Path(purelib)), where
    assert version == jaxgames.__version__
    assert int(rungs) > 1
    assert (env_dir / "bin" / "jaxgames").exists() or os.name == "nt"  # the console script

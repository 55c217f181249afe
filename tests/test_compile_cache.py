"""The persistent compilation cache (jaxgames.compile_cache): where it goes, how it is turned
off, and that a CLI run fills it (in a subprocess pointed at a temporary directory: the test
suite itself runs with the cache off, see conftest.py)."""

import os
import subprocess
import sys

import jax

from jaxgames import compile_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY_TRAIN = [
    "train",
    "ppo",
    "--game",
    "tic_tac_toe",
    "--total-steps=64",
    "--num-envs=8",
    "--num-steps=4",
    "--num-minibatches=1",
    "--update-epochs=1",
    "--updates-per-chunk=1",
    "--eval-games=0",
    "--net.hidden=8",
    "--net.layers=1",
    "--no-progress",
]


def test_default_directory_is_under_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = compile_cache.default_cache_dir()
    assert path.startswith(os.path.join(str(tmp_path), "jaxgames", "xla", ""))
    assert path == compile_cache.default_cache_dir()  # one directory per machine
    monkeypatch.delenv("XDG_CACHE_HOME")
    home = os.path.expanduser("~")
    assert compile_cache.default_cache_dir().startswith(os.path.join(home, ".cache", "jaxgames"))


def test_off_switches(monkeypatch, tmp_path):
    was_on = jax.config.jax_enable_compilation_cache
    try:
        for value in ("0", "off", "False", "no"):
            monkeypatch.setenv(compile_cache.ENV_VAR, value)
            assert compile_cache.enable_compile_cache(str(tmp_path)) is None
        monkeypatch.setenv(compile_cache.ENV_VAR, "1")
        assert compile_cache.enable_compile_cache(str(tmp_path), enabled=False) is None
        assert not jax.config.jax_enable_compilation_cache
        assert not os.listdir(tmp_path)
    finally:  # the rest of this worker's tests see the setting they had
        jax.config.update("jax_enable_compilation_cache", was_on)


def test_a_directory_set_through_jax_is_kept(monkeypatch, tmp_path):
    before = jax.config.jax_compilation_cache_dir
    try:
        jax.config.update("jax_compilation_cache_dir", str(tmp_path / "jax"))
        monkeypatch.setenv(compile_cache.ENV_VAR, str(tmp_path / "ours"))
        assert compile_cache.enable_compile_cache() == str(tmp_path / "jax")
        assert not (tmp_path / "ours").exists()
    finally:
        jax.config.update("jax_compilation_cache_dir", before)


def _run(args, cache_setting, tmp_path):
    env = dict(os.environ, JAXGAMES_COMPILE_CACHE=cache_setting)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)  # one set through JAX would be kept instead
    env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"  # cache even the quick compiles
    env["PYTHONPATH"] = ROOT
    runs = str(tmp_path / "runs")
    out = subprocess.run(
        [sys.executable, "-m", "jaxgames.cli", *args, "--runs-dir", runs],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]


def test_a_cli_run_fills_the_cache_and_the_flag_turns_it_off(tmp_path):
    cache = tmp_path / "xla"
    _run([*TINY_TRAIN, "--run-name", "a"], str(cache), tmp_path)
    entries = [f for f in os.listdir(cache) if f.endswith("-cache")]
    assert any(f.startswith("jit_chunk") for f in entries), entries
    off = tmp_path / "off"
    _run([*TINY_TRAIN, "--run-name", "b", "--no-compile-cache"], str(off), tmp_path)
    assert not off.exists()


def test_turned_on_again_after_off_and_jax_off_switch_kept(monkeypatch, tmp_path):
    was_on, was_dir = jax.config.jax_enable_compilation_cache, jax.config.jax_compilation_cache_dir
    monkeypatch.setenv(compile_cache.ENV_VAR, "1")
    monkeypatch.delenv("JAX_ENABLE_COMPILATION_CACHE", raising=False)
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        assert compile_cache.enable_compile_cache(str(tmp_path), enabled=False) is None
        assert compile_cache.enable_compile_cache(str(tmp_path)) == str(tmp_path)
        assert jax.config.jax_enable_compilation_cache  # what it says is what JAX does
        monkeypatch.setenv("JAX_ENABLE_COMPILATION_CACHE", "false")
        assert compile_cache.enable_compile_cache(str(tmp_path)) is None
        assert not jax.config.jax_enable_compilation_cache
    finally:
        jax.config.update("jax_enable_compilation_cache", was_on)
        jax.config.update("jax_compilation_cache_dir", was_dir)


def test_a_directory_that_cannot_be_made_is_one_warning_line(tmp_path):
    """The cache is optional: a path it cannot create turns it off with a one-line warning,
    and the command runs (here: to its own one-line error)."""
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    env = dict(os.environ, JAXGAMES_COMPILE_CACHE=str(blocker / "cache"), PYTHONPATH=ROOT)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    missing = str(tmp_path / "missing.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "jaxgames.cli", "replay", missing],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    err = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(err) == 2, proc.stderr
    assert err[0].startswith("warning: the compilation cache is off: cannot create")
    assert err[1].startswith("error:") and "missing.txt" in err[1]

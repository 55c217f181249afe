"""The throughput benchmark's main runs end to end on a tiny config (so it cannot rot)."""

import csv

import numpy as np
from scripts import script


def load_benchmark():
    return script("benchmark_throughput")


def test_benchmark_main_tiny(tmp_path):
    bench = load_benchmark()
    out = tmp_path / "throughput"
    rows = bench.main(
        [
            "--games",
            "reversi4",
            "tic_tac_toe",
            "--batch-sizes",
            "2",
            "--steps",
            "3",
            "--out",
            str(out),
            "--no-pgx",
        ]
    )
    assert {(r["game"], r["impl"]) for r in rows} == {
        ("reversi4", "jaxgames"),
        ("tic_tac_toe", "jaxgames"),
    }
    with open(out / "throughput.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 2 and all(
        float(r["steps_per_s"]) > 0 and float(r["compile_s"]) > 0 for r in table
    )
    assert (out / "throughput.png").exists() and (out / "throughput.pdf").exists()


def test_uniform_legal_action_is_legal_and_uniform():
    import jax
    import jax.numpy as jnp

    from jaxgames.training.experiment import uniform_legal_action

    mask = jnp.array([[False, True, False, True, True], [True, False, False, False, False]])
    pick = jax.jit(jax.vmap(lambda t: uniform_legal_action(jnp.uint32(7), t, mask)))
    picks = np.asarray(pick(jnp.arange(600, dtype=jnp.int32)))
    assert set(picks[:, 0]) == {1, 3, 4} and set(picks[:, 1]) == {0}
    counts = np.bincount(picks[:, 0], minlength=5)[[1, 3, 4]]
    assert counts.min() > 150, counts  # ~200 each


def test_compile_flags_runs_each_setting_in_its_own_process(tmp_path):
    """experiments/compile_flags.py: each setting's switches reach its subprocess (and only
    its: the suite's own flags are not inherited), and integer outputs agree exactly."""
    compile_flags = script("compile_flags")
    out = tmp_path / "cf"
    argv = ["--programs", "steps", "--settings", "default", "test-suite", "--repeats", "1"]
    rows = compile_flags.main(argv + ["--out", str(out)])
    by_setting = {r["setting"]: r for r in rows}
    assert set(by_setting) == {"default", "test-suite"}
    assert "fusion_emitters" not in by_setting["default"]["xla_flags"]
    assert not by_setting["default"]["few_optimizations"]
    assert "--xla_cpu_use_fusion_emitters=false" in by_setting["test-suite"]["xla_flags"]
    assert by_setting["test-suite"]["few_optimizations"]
    assert all(r["compile_s"] > 0 and r["run_s"] > 0 for r in rows)
    assert all(r["max_abs_diff"] == 0 for r in rows)  # games finished: an integer, the same
    with open(out / "compile_flags.csv") as f:
        assert len(list(csv.DictReader(f))) == 2

import os

# the test suite never writes the persistent compilation cache (jaxgames.compile_cache) into
# the user's home: the CLI and experiment code run here (also in subprocesses) see it off
os.environ["JAXGAMES_COMPILE_CACHE"] = "0"
# most tests run tiny programs once, so their time is XLA compile time: compiling with most
# optimisations off (the same programs, run slower) cuts that compile time;
# set before JAX is imported, so subprocesses started by the tests inherit it too
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
# and with XLA's older CPU code generator for fused loops: with optimisations off it compiles
# faster (its programs run slower); experiments/compile_flags.py measures both settings
# (docs/workflow.md, "Running the tests")
if "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false"
    ).strip()

import jax
import pytest

import jaxgames


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)


@pytest.fixture(scope="session")
def ttt():
    return jaxgames.make("tic_tac_toe")


# JAXGAMES_TEST_PROFILE=<file>: append one JSON line per test to <file> with its wall time and
# the seconds JAX spent tracing, lowering and compiling in this process (not in subprocesses),
# to see which tests are compile-bound: summarise with `python tests/profile_report.py <file>`
_PROFILE = os.environ.get("JAXGAMES_TEST_PROFILE")
if _PROFILE:
    import json
    import time

    from jax import monitoring

    _EVENTS = {
        "/jax/core/compile/jaxpr_trace_duration": "trace",
        "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
        "/jax/core/compile/backend_compile_duration": "compile",
    }
    _spent = dict.fromkeys(_EVENTS.values(), 0.0)

    def _listen(event, duration, **_):
        if event in _EVENTS:
            _spent[_EVENTS[event]] += duration

    monitoring.register_event_duration_secs_listener(_listen)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        for k in _spent:
            _spent[k] = 0.0
        start = time.perf_counter()
        began = time.time()
        yield
        row = {"test": item.nodeid, "wall": time.perf_counter() - start, **_spent}
        # which xdist worker ran it and when (epoch seconds): to see how evenly the work spread
        row.update(worker=os.environ.get("PYTEST_XDIST_WORKER", "main"), began=began)
        with open(_PROFILE, "a") as f:
            f.write(json.dumps(row) + "\n")


@pytest.fixture
def run_bound():
    """For a test whose time is its programs' run (training to a result, many games), not their
    compilation: compile with XLA's optimisations for the test, as training does. The setting
    is read when a program compiles, not part of jit's cache key: a jitted function already
    compiled in this worker keeps the setting it was compiled with."""
    before = jax.config.values["jax_disable_most_optimizations"]
    jax.config.update("jax_disable_most_optimizations", False)
    yield
    jax.config.update("jax_disable_most_optimizations", before)

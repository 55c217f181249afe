import os

# the test suite never writes the persistent compilation cache (jaxgames.compile_cache) into
# the user's home: the CLI and experiment code run here (also in subprocesses) see it off
os.environ["JAXGAMES_COMPILE_CACHE"] = "0"
# most tests run tiny programs once, so their time is XLA compile time: compiling with most
# optimisations off (the same programs, run slower) cuts the suite's time by a sixth or more;
# set before JAX is imported, so subprocesses started by the tests inherit it too
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")

import jax
import pytest

import jaxgames


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)


@pytest.fixture(scope="session")
def ttt():
    return jaxgames.make("tic_tac_toe")

import os

# the test suite never writes the persistent compilation cache (jaxgames.compile_cache) into
# the user's home: the CLI and experiment code run here (also in subprocesses) see it off
os.environ["JAXGAMES_COMPILE_CACHE"] = "0"

import jax
import pytest

import jaxgames


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)


@pytest.fixture(scope="session")
def ttt():
    return jaxgames.make("tic_tac_toe")

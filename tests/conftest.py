import jax
import pytest

import jaxgames


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)


@pytest.fixture(scope="session")
def ttt():
    return jaxgames.make("tic_tac_toe")

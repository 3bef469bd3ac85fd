"""The kernel tests run in a private Jupyter environment (see kernel_env)."""

import pytest

from .kernel_env import setup_jupyter_env


@pytest.fixture(scope="session", autouse=True)
def jupyter_env():
    return setup_jupyter_env()

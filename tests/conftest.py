"""Shared test setup: a seeded numpy per test and a CI hypothesis profile."""

import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.register_profile("dev", deadline=None, max_examples=25)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    yield


def pytest_collection_modifyitems(config, items):
    """Run the browser tests last: after the unit and notebook tests (issue 7), and after
    any test that starts its own Playwright (the e2e session keeps one running to the end)."""
    e2e_dir = os.path.join(os.path.dirname(__file__), "e2e") + os.sep
    items.sort(key=lambda item: str(item.path).startswith(e2e_dir))

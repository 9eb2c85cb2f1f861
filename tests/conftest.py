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


@pytest.fixture(scope="session")
def playwright_api():
    """The one Playwright of this test process, shared by every browser test (tests/e2e and
    the widget's page in tests/widgets): its sync API cannot start while another is running
    in the same process. Skips without the playwright package."""
    sync_api = pytest.importorskip("playwright.sync_api")
    pw = sync_api.sync_playwright().start()
    yield pw
    pw.stop()


def pytest_collection_modifyitems(config, items):
    """Run the browser tests last, after the unit and notebook tests (issue 7)."""
    e2e_dir = os.path.join(os.path.dirname(__file__), "e2e") + os.sep
    items.sort(key=lambda item: str(item.path).startswith(e2e_dir))

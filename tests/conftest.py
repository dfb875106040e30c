"""Project-wide pytest configuration.

Stress and fault tests (``tests/stress/``, marker ``stress``) are heavy: they run only
when ``GITODB_STRESS`` is set, and its value scales their size (trials, seconds,
writers): ``GITODB_STRESS=1`` is the short run ``.ci/run`` makes, ``GITODB_STRESS=50``
a long run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# gitodb run in-process reads the user's and the system's config as Git does; keep
# the tests isolated from them like Git's test-lib (a test sets its own).
os.environ.setdefault("GIT_CONFIG_GLOBAL", "/dev/null")
os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the test identity of ``helpers.GIT_ENV`` among the ``GIT_*`` variables, for
    gitodb run in-process and for ``git``."""
    from helpers import GIT_ENV

    for k in list(os.environ):
        if k.startswith("GIT_"):
            monkeypatch.delenv(k)
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


def stress_scale() -> int:
    """The size factor of the stress tests (0 when they are not to run)."""
    value = os.environ.get("GITODB_STRESS", "")
    try:
        return max(0, int(value)) if value else 0
    except ValueError:
        raise pytest.UsageError(f"GITODB_STRESS must be an integer, not {value!r}") from None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if stress_scale():
        return
    skip = pytest.mark.skip(reason="stress test: set GITODB_STRESS=<scale> to run")
    for item in items:
        if "stress" in item.keywords:
            item.add_marker(skip)

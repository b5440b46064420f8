"""Fixtures for the docker tier: the project's docker-compose.yml, started through
testcontainers under its own compose project name, on loopback ports Docker picks
(`harness.compose.started_project`; its reaper is disabled and the project removed
with `down --volumes` at the end of the session).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.compose import ComposeCluster, ComposeStartError, tier_cluster

REPO_ROOT = Path(__file__).resolve().parents[2]
SESSION_MS = 3000


@pytest.fixture(scope="session")
def compose_cluster() -> Iterator[ComposeCluster]:
    """The compose cluster, up and healthy, for the whole docker tier."""
    try:
        with tier_cluster(REPO_ROOT, "testbed-test", "docker-tier", SESSION_MS) as cluster:
            yield cluster
    except ComposeStartError as exc:
        pytest.fail(str(exc), pytrace=False)

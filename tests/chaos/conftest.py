"""Fixtures for the chaos tier: a compose project of its own, with the default cluster's
6 s ZooKeeper sessions (the scenarios' timings assume them), up for the whole session
(`harness.compose.started_project`), on ports picked once so that a broker killed and
started again keeps them and the workload's client still reaches it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.compose import ComposeCluster, ComposeStartError, tier_cluster

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The default compose cluster's session timeout, which the scenarios are timed for.
SESSION_MS = 6000


@pytest.fixture(scope="session")
def chaos_cluster() -> Iterator[ComposeCluster]:
    """The chaos tier's compose cluster, up and healthy."""
    try:
        with tier_cluster(
            REPO_ROOT, "testbed-chaos", "chaos-tier", SESSION_MS, stable_ports=True
        ) as cluster:
            yield cluster
    except ComposeStartError as exc:
        pytest.fail(str(exc), pytrace=False)

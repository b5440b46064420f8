"""Fixtures for the docker tier: the project's docker-compose.yml, started through
testcontainers under its own compose project name, on loopback ports Docker picks.

Testcontainers' reaper (Ryuk) cannot be pulled here, so it is disabled and the fixture
removes the project (`down --volumes`) itself.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker.client import DockerClient
from testcontainers.compose import DockerCompose

from harness.compose import ComposeCluster
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGES = ("testbed-base:latest", "testbed-zookeeper:latest", "testbed-broker:latest")
SESSION_MS = 3000


@pytest.fixture(scope="session")
def compose_cluster() -> Iterator[ComposeCluster]:
    """The compose cluster, up and healthy, for the whole docker tier."""
    client = DockerClient.from_env()
    missing = [image for image in IMAGES if not client.images.list(name=image)]
    if missing:
        pytest.fail(
            f"images missing: {', '.join(missing)}; run `make images` (or `make test`).",
            pytrace=False,
        )
    project = f"testbed-test-{os.getpid()}"
    run_id = f"docker-tier-{time.strftime('%Y%m%d-%H%M%S')}"
    overrides = {
        "COMPOSE_PROJECT_NAME": project,
        "RUN_ID": run_id,
        "ZK_SESSION_TIMEOUT_MS": str(SESSION_MS),
        "TESTCONTAINERS_RYUK_DISABLED": "true",
        **{f"ZK{i}_PORT": "" for i in (1, 2, 3)},
        **{f"BROKER{i}_PORT": "" for i in (1, 2, 3)},
        **{f"BROKER{i}_METRICS_PORT": "" for i in (1, 2, 3)},
    }
    saved = {key: os.environ.get(key) for key in overrides}
    os.environ.update(overrides)
    compose = DockerCompose(REPO_ROOT, compose_file_name="docker-compose.yml", wait=True)
    try:
        try:
            compose.start()
        except subprocess.CalledProcessError as exc:
            pytest.fail(_start_failure(exc, project), pytrace=False)
        ports = [compose.get_service_port(f"zk{i}", 2181) for i in (1, 2, 3)]
        cluster = ComposeCluster(
            compose,
            project,
            REPO_ROOT / "runs" / run_id,
            ",".join(f"127.0.0.1:{port}" for port in ports),
        )
        zk = cluster.zk()
        try:
            kzk = KafkaZkClient(zk)
            wait_until(
                lambda: (
                    len(kzk.get_all_brokers().brokers) == 3 and kzk.get_controller_id() is not None
                ),
                60,
                "compose cluster did not register 3 brokers and a controller",
            )
        finally:
            zk.stop()
            zk.close()
        yield cluster
    finally:
        compose.stop(down=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _start_failure(exc: subprocess.CalledProcessError, project: str) -> str:
    """What `docker compose up --wait` printed, and each container's state and last log
    lines, so that a failed start says why."""
    lines = [f"`{' '.join(map(str, exc.cmd))}` exited with {exc.returncode}"]
    for stream in (exc.stdout, exc.stderr):
        if stream:
            text = stream.decode(errors="replace") if isinstance(stream, bytes) else stream
            lines.append(text.strip())
    client = DockerClient.from_env()
    label = f"com.docker.compose.project={project}"
    for container in client.containers.list(all=True, filters={"label": label}):
        health = container.attrs.get("State", {}).get("Health", {}).get("Status", "-")
        lines.append(f"--- {container.name}: {container.status}, health {health}")
        lines.append(container.logs(tail=30).decode(errors="replace").rstrip())
    return "\n".join(lines)

"""A compose project of the testbed, reached from the host (docker tier)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from docker.client import DockerClient
from docker.models.containers import Container
from kazoo.client import KazooClient
from testcontainers.compose import DockerCompose


@dataclass
class ComposeCluster:
    """A running compose project and ways to reach it from the host."""

    compose: DockerCompose
    project: str
    run_dir: Path
    zk_connect: str

    def container(self, service: str) -> Container:
        """The docker SDK object of a service's container."""
        found = self.compose.get_container(service_name=service, include_all=True)
        return DockerClient.from_env().containers.get(found.ID)

    def broker_addresses(self) -> dict[str, str]:
        """Each broker's advertised address mapped to its published loopback port."""
        return {
            f"broker{i}:9092": f"127.0.0.1:{self.compose.get_service_port(f'broker{i}', 9092)}"
            for i in (1, 2, 3)
        }

    def zk(self) -> KazooClient:
        """A started kazoo client on the published ZooKeeper ports (caller stops it)."""
        client = KazooClient(hosts=self.zk_connect, timeout=10)
        client.start(timeout=30)
        return client

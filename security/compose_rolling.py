"""`security.rolling.RollingCluster` on a compose project, through the local docker
daemon: what `python -m security rotate` restarts.

The ZooKeeper servers are the project's containers with `ZK_MYID` in their environment,
the brokers those with `BROKER_ID`. A restart is `docker restart` with the container's
own stop timeout (compose's `stop_grace_period`: a broker's controlled shutdown), which
mounts the files anew: docker-compose.yml binds each file of `.secrets/tls` on its own,
and a bind mount keeps the file it was made with until the container starts again. A
server serves again when docker runs it, its health check passes (docker sets it back to
`starting` on every start) (a ZooKeeper server in the quorum, a broker registered with its gRPC port
open) and it accepts the host's client certificate and presents one the host's `ca.crt`
trusts (`security.tls_probe`, on its address on the project's network). The controller
is the broker whose Prometheus endpoint reports `ActiveControllerCount` 1. Caller's
thread.
"""

from __future__ import annotations

import re
import ssl
import urllib.request
from pathlib import Path

from docker.client import DockerClient
from docker.errors import DockerException
from docker.models.containers import Container

from security.rotation import rolling_order
from security.tls_files import CLIENT
from security.tls_probe import GRPC, ZOOKEEPER, Greeting, answer, client_context, refusal

__all__ = ["DEFAULT_STOP_TIMEOUT_S", "ComposeRolling"]

PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"
#: The stop timeout of a container whose configuration names none.
DEFAULT_STOP_TIMEOUT_S = 30
ZK_PORT = 2181
BROKER_PORT = 9092
METRICS_PORT = 9404
_ACTIVE = re.compile(r"^kafka_controller_KafkaController_ActiveControllerCount\s+1(\.0)?\s*$", re.M)


def _health_check(container: Container) -> str | None:
    """Run the image's health check in the container now: None when it passes."""
    test = (container.attrs["Config"].get("Healthcheck") or {}).get("Test") or []
    if not test or test[0] not in ("CMD", "CMD-SHELL"):
        return None
    argv = test[1:] if test[0] == "CMD" else ["/bin/sh", "-c", test[1]]
    try:
        result = container.exec_run(argv)
    except DockerException as exc:
        return f"health check not run: {exc}"
    return None if result.exit_code == 0 else f"health check exit code {result.exit_code}"


class ComposeRolling:
    """The ZooKeeper servers and brokers of compose project `project`; the host's TLS
    material in `tls_dir`."""

    def __init__(self, project: str, tls_dir: Path, docker: DockerClient) -> None:
        self.project = project
        self.tls_dir = tls_dir
        self._docker = docker

    def _members(self) -> dict[str, Container]:
        found = self._docker.containers.list(
            all=True, filters={"label": f"{PROJECT_LABEL}={self.project}"}
        )
        return {str(c.labels.get(SERVICE_LABEL, "")): c for c in found}

    def _with_env(self, variable: str) -> tuple[str, ...]:
        services = [
            service
            for service, container in self._members().items()
            if any(e.startswith(f"{variable}=") for e in container.attrs["Config"]["Env"] or ())
        ]
        return rolling_order(services, None)

    def zookeepers(self) -> tuple[str, ...]:
        """The services with `ZK_MYID`."""
        return self._with_env("ZK_MYID")

    def brokers(self) -> tuple[str, ...]:
        """The services with `BROKER_ID`."""
        return self._with_env("BROKER_ID")

    def _ip(self, container: Container) -> str | None:
        networks = container.attrs["NetworkSettings"]["Networks"] or {}
        preferred = networks.get(f"{self.project}_default") or {}
        for network in (preferred, *networks.values()):
            if network.get("IPAddress"):
                return str(network["IPAddress"])
        return None

    def _context(self) -> ssl.SSLContext:
        return client_context(self.tls_dir, CLIENT)

    def zk_leader(self) -> str | None:
        """The server whose `srvr` says `Mode: leader`."""
        members = self._members()
        for service in self.zookeepers():
            ip = self._ip(members[service])
            try:
                reply = answer((ip or "", ZK_PORT), service, self._context(), ZOOKEEPER, whole=True)
            except OSError:
                continue
            if b"Mode: leader" in reply:
                return service
        return None

    def controller(self) -> str | None:
        """The broker reporting `ActiveControllerCount` 1."""
        members = self._members()
        for service in self.brokers():
            url = f"http://{self._ip(members[service])}:{METRICS_PORT}/metrics"
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    text = reply.read().decode("utf-8", errors="replace")
            except OSError:
                continue
            if _ACTIVE.search(text):
                return service
        return None

    def restart(self, service: str) -> None:
        """`docker restart` with the container's stop timeout."""
        container = self._members()[service]
        timeout = container.attrs["Config"].get("StopTimeout") or DEFAULT_STOP_TIMEOUT_S
        try:
            container.restart(timeout=int(timeout))
        except DockerException as exc:
            raise OSError(f"docker restart {service}: {exc}") from exc

    def not_serving(self, service: str) -> str | None:
        """See the module docstring."""
        container = self._members().get(service)
        if container is None:
            return "no container"
        state = container.attrs["State"]
        if state["Status"] != "running":
            return f"container {state['Status']}"
        problem = _health_check(container)
        if problem is not None:
            return problem
        ip = self._ip(container)
        if ip is None:
            return "no address"
        greeting: Greeting = ZOOKEEPER if service in self.zookeepers() else GRPC
        port = ZK_PORT if greeting is ZOOKEEPER else BROKER_PORT
        return refusal((ip, port), service, self._context(), greeting)

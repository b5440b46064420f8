"""One compose project seen from the host: its containers through the docker SDK, its
ZooKeeper state through `KafkaZkClient`, its ZooKeeper servers' modes through `srvr`.
`ClusterHandle` is the `FaultTarget` every fault acts through, and the `ClusterFacts`
that roles are resolved against (`resolve`).

Every action and every read of a container looks the container up afresh by the project
and service labels and checks the labels of what it got before acting. A name that is
not a service of the project but names a container outside it (by container name or id)
is refused with `ForeignContainer`; any other unknown name with `UnknownTarget`. Docker
and ZooKeeper failures surface as `FaultFailed`.

CPU and memory limits: `chaos.cluster.resources`; files copied out of and into containers:
`chaos.cluster.container_files`; commands run in them: `chaos.cluster.container_exec`.

Roles of containers: a container whose environment sets `BROKER_ID` is that broker, one
that sets `ZK_MYID` is that ZooKeeper server (both set by docker-compose.yml).

The ZooKeeper connect string is the one given, or else the zk servers' published ports,
looked up again whenever the session must be (re)made, since a restarted container can be
published on another port. The session authenticates with the cluster's digest
credentials (`for_project`: the repository's `.secrets/zk-digest`, which
docker-compose.yml mounts into the brokers), so what it writes (reassignments, a run's
topic) gets Kafka's secure ACLs. Blocking; runs on the caller's thread (the injector's, or a
CLI's main thread); one kazoo session at a time, guarded by a lock.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from docker.client import DockerClient
from docker.errors import DockerException, NotFound
from docker.models.containers import Container
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from chaos.cluster import endpoints, role_resolution
from chaos.cluster.container_exec import ContainerExec
from chaos.cluster.container_files import ContainerFiles
from chaos.cluster.resources import ResourceControls
from chaos.cluster.zk_servers import ZkServers
from chaos.errors import FaultFailed, ForeignContainer, UnknownTarget
from domain import LeaderAndIsr, TopicPartition
from security.secret_files import SecretFileError
from security.tls_files import TlsMaterialError
from security.zk_credentials import ZkDigestCredentials, kazoo_options, repo_digest_file
from security.zk_credentials import load as load_zk_credentials
from security.zk_tls import ZkTls, repo_zk_tls
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError

if TYPE_CHECKING:
    from harness.compose import ComposeCluster

PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"
ONEOFF_LABEL = "com.docker.compose.oneoff"
ZK_START_TIMEOUT_S = 15.0
#: The session timeout of the handle's own ZooKeeper session (s): the brokers' fast
#: profile. A client notices a frozen server after two thirds of it and goes on with
#: another, so an admin action issued as the server under it is frozen still gets its
#: answer within `chaos.cluster.zk_off_loop.ACTION_READ_S`.
ZK_SESSION_S = 6.0

T = TypeVar("T")


class ClusterHandle(ResourceControls, ContainerFiles, ContainerExec, ZkServers):
    """The containers and ZooKeeper state of one compose project (see the module doc)."""

    def __init__(
        self,
        project: str,
        client: DockerClient,
        zk_connect: str | None = None,
        zk_credentials: ZkDigestCredentials | None = None,
        zk_tls: ZkTls | None = None,
    ) -> None:
        if not project:
            raise UnknownTarget("a compose project name is required")
        self._project = project
        self._docker = client
        self._given_connect = zk_connect
        self._zk_credentials = zk_credentials
        self._zk_tls = zk_tls
        self._zk_lock = threading.Lock()
        self._kazoo: KazooClient | None = None
        self._kazoo_connect = ""

    @classmethod
    def for_project(cls, project: str, zk_connect: str | None = None) -> ClusterHandle:
        """A handle on `project` through the local docker daemon (`docker.from_env()`),
        authenticated to ZooKeeper with the repository's `.secrets/zk-digest`, over TLS with
        its `.secrets/tls`, if set up."""
        path, tls = repo_digest_file(), repo_zk_tls()
        try:
            credentials = load_zk_credentials(path) if path is not None else None
            tls = tls.check() if tls is not None else None
        except (SecretFileError, TlsMaterialError) as exc:
            raise FaultFailed(str(exc)) from None
        try:
            client = DockerClient.from_env()
        except DockerException as exc:
            raise FaultFailed(f"cannot reach the docker daemon: {exc}") from exc
        return cls(project, client, zk_connect, credentials, tls)

    @classmethod
    def for_compose(cls, cluster: ComposeCluster) -> ClusterHandle:
        """A handle on the docker tier's compose project (its ZooKeeper ports are looked up
        from docker, so restarts of zk servers are followed)."""
        return cls.for_project(cluster.project)

    def close(self) -> None:
        """Stop the ZooKeeper session and the docker client."""
        with self._zk_lock:
            self._stop_kazoo()
        self._docker.close()

    def __enter__(self) -> ClusterHandle:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- containers ----------------------------------------------------------------------

    @property
    def project(self) -> str:
        """The compose project name."""
        return self._project

    def services(self) -> tuple[str, ...]:
        """Every service of the project, sorted."""
        return tuple(sorted({_service_of(c) for c in self._members()}))

    def brokers(self) -> dict[int, str]:
        """Broker id -> service, from each container's `BROKER_ID`."""
        return self._ids_from_env("BROKER_ID")

    def zk_servers(self) -> dict[int, str]:
        """ZooKeeper myid -> service, from each container's `ZK_MYID`."""
        return self._ids_from_env("ZK_MYID")

    def inspect(self, service: str) -> Mapping[str, Any]:
        """The container's docker inspection (labels checked), for reading only."""
        attrs: Mapping[str, Any] = self._container(service).attrs
        return attrs

    def status(self, service: str) -> str:
        """Docker's state of the container: `running`, `paused`, `exited`, ..."""
        return str(self._container(service).attrs["State"]["Status"])

    def started_at(self, service: str) -> str:
        """When the container's current (or last) run started (docker's `StartedAt`)."""
        return str(self._container(service).attrs["State"]["StartedAt"])

    def pid(self, service: str) -> int:
        """The host pid of the container's main process; `FaultFailed` if it has none."""
        state = self._container(service).attrs["State"]
        if not state.get("Pid"):
            raise FaultFailed(f"{service} has no process ({state['Status']})")
        return int(state["Pid"])

    def ip(self, service: str) -> str:
        """The container's address on the project's network (`<project>_default` first)."""
        networks: dict[str, Any] = self._container(service).attrs["NetworkSettings"]["Networks"]
        preferred = networks.get(f"{self._project}_default")
        ordered = [preferred, *networks.values()] if preferred else list(networks.values())
        for network in ordered:
            if network and network.get("IPAddress"):
                return str(network["IPAddress"])
        raise FaultFailed(f"{service} has no address on any network (is it running?)")

    def kill(self, service: str, signal: str = "SIGKILL") -> None:
        """Send `signal` to the container's main process."""
        self._act(service, "kill", lambda c: c.kill(signal=signal))

    def stop(self, service: str, timeout_s: float) -> None:
        """`docker stop`: SIGTERM, SIGKILL after `timeout_s` (whole seconds, rounded up)."""
        self._act(service, "stop", lambda c: c.stop(timeout=max(1, math.ceil(timeout_s))))

    def start(self, service: str) -> None:
        """Start the stopped container."""
        self._act(service, "start", lambda c: c.start())

    def pause(self, service: str) -> None:
        """Freeze the container's processes."""
        self._act(service, "pause", lambda c: c.pause())

    def unpause(self, service: str) -> None:
        """Thaw the paused container."""
        self._act(service, "unpause", lambda c: c.unpause())

    def _act(self, service: str, verb: str, action: Callable[[Container], None]) -> None:
        container = self._container(service)
        try:
            action(container)
        except DockerException as exc:
            raise FaultFailed(f"docker {verb} {service}: {exc}") from exc

    def _members(self) -> list[Container]:
        """Every container of the project (compose's one-off `run` containers aside)."""
        try:
            found = self._docker.containers.list(
                all=True, filters={"label": f"{PROJECT_LABEL}={self._project}"}
            )
        except DockerException as exc:
            raise FaultFailed(f"docker: cannot list project {self._project}: {exc}") from exc
        return [c for c in found if c.labels.get(ONEOFF_LABEL, "False") != "True"]

    def _container(self, service: str) -> Container:
        """The service's container, freshly inspected, its labels checked."""
        labels = [f"{PROJECT_LABEL}={self._project}", f"{SERVICE_LABEL}={service}"]
        try:
            found = self._docker.containers.list(all=True, filters={"label": labels})
        except NotFound:
            found = []  # removed between the listing and its inspection
        except DockerException as exc:
            raise FaultFailed(f"docker: cannot look up {service}: {exc}") from exc
        found = [c for c in found if c.labels.get(ONEOFF_LABEL, "False") != "True"]
        if not found:
            self._refuse_foreign(service)
            have = ", ".join(self.services()) or "no containers"
            raise UnknownTarget(f"project {self._project} has no service {service!r} ({have})")
        if len(found) > 1:
            names = ", ".join(c.name for c in found)
            raise FaultFailed(f"service {service} has {len(found)} containers: {names}")
        container = found[0]
        owned = container.labels.get(PROJECT_LABEL) == self._project
        if not owned or _service_of(container) != service:
            raise ForeignContainer(_foreign(container, self._project))
        return container

    def _refuse_foreign(self, name: str) -> None:
        """`ForeignContainer` when `name` is a container (by name or id) outside the
        project; a container of the project named that way is told to use its service."""
        try:
            other = self._docker.containers.get(name)
        except DockerException:
            return
        if other.labels.get(PROJECT_LABEL) != self._project:
            raise ForeignContainer(_foreign(other, self._project))
        raise UnknownTarget(f"{name!r} is a container; name its service {_service_of(other)!r}")

    def _ids_from_env(self, variable: str) -> dict[int, str]:
        found: dict[int, str] = {}
        for container in self._members():
            env = container.attrs.get("Config", {}).get("Env") or []
            for entry in env:
                key, _, value = entry.partition("=")
                if key == variable and value.isdigit():
                    found[int(value)] = _service_of(container)
        return found

    # -- ZooKeeper -----------------------------------------------------------------------

    def controller_id(self) -> int | None:
        """The broker that holds `/controller`, or None."""
        return self._zk_read(lambda zk: zk.get_controller_id())

    def tls_dir(self) -> Path | None:
        """The host directory of the brokers' TLS material (`endpoints.tls_dir`)."""
        return endpoints.tls_dir(self)

    def broker_registered(self, broker_id: int) -> bool:
        """Whether `/brokers/ids/<broker_id>` exists now."""

        def registered(zk: KafkaZkClient) -> bool:
            try:
                return zk.get_broker(broker_id) is not None
            except ZnodeFormatError:
                return True  # there, though it does not decode

        return self._zk_read(registered)

    def partition_state(self, topic: str, partition: int) -> LeaderAndIsr:
        """The partition's leader, leader epoch and ISR; `UnknownTarget` if it has no state."""
        tp = TopicPartition(topic, partition)
        reads = self._zk_read(lambda zk: zk.get_partition_states([tp]))
        if tp in reads.malformed:
            raise FaultFailed(f"state of {tp} does not decode: {reads.malformed[tp]}")
        if tp not in reads.found:
            raise UnknownTarget(f"partition {tp} has no state in ZooKeeper")
        return reads.found[tp].leader_and_isr

    def partition_leader(self, topic: str, partition: int) -> int | None:
        """The partition's leader, None when it has none (-1)."""
        leader = self.partition_state(topic, partition).leader
        return leader if leader >= 0 else None

    def partition_isr(self, topic: str, partition: int) -> tuple[int, ...]:
        """The partition's in-sync replicas."""
        return self.partition_state(topic, partition).isr

    def leader_counts(self) -> dict[int, int]:
        """Broker id -> partitions it leads, for every broker of the project."""

        def leaders(zk: KafkaZkClient) -> list[int]:
            assignments = zk.get_topic_assignments(zk.get_all_topics()).found
            partitions = [
                TopicPartition(topic, p) for topic, a in assignments.items() for p in a.partitions
            ]
            states = zk.get_partition_states(partitions).found.values()
            return [state.leader_and_isr.leader for state in states]

        counts = dict.fromkeys(self.brokers(), 0)
        for leader in self._zk_read(leaders):
            if leader >= 0:
                counts[leader] = counts.get(leader, 0) + 1
        return counts

    def resolve(self, role: str, rng: random.Random) -> tuple[str, ...]:
        """The services `role` names now (`chaos.cluster.role_resolution`)."""
        return role_resolution.resolve(role, self, rng)

    def read_zk(self, read: Callable[[KafkaZkClient], T]) -> T:
        """`read(client)` on the handle's ZooKeeper session (opened on first use, on the
        published ports); `FaultFailed` when ZooKeeper cannot be reached."""
        return self._zk_read(read)

    def _zk_read(self, read: Callable[[KafkaZkClient], T]) -> T:
        with self._zk_lock:
            connect = self._given_connect or self.published_zk_connect()
            try:
                if self._kazoo is None or connect != self._kazoo_connect:
                    self._stop_kazoo()
                    options = kazoo_options(self._zk_credentials, self._zk_tls)
                    kazoo = KazooClient(hosts=connect, timeout=ZK_SESSION_S, **options)
                    kazoo.start(timeout=ZK_START_TIMEOUT_S)
                    self._kazoo, self._kazoo_connect = kazoo, connect
                return read(KafkaZkClient(self._kazoo))
            except (KazooException, KazooTimeoutError) as exc:
                self._stop_kazoo()
                raise FaultFailed(f"ZooKeeper at {connect}: {exc!r}") from exc

    def _stop_kazoo(self) -> None:
        if self._kazoo is not None:
            kazoo, self._kazoo = self._kazoo, None
            try:
                kazoo.stop()
                kazoo.close()
            except KazooException:
                pass


def _service_of(container: Container) -> str:
    return str(container.labels.get(SERVICE_LABEL, ""))


def _foreign(container: Container, project: str) -> str:
    theirs = container.labels.get(PROJECT_LABEL)
    return (
        f"container {container.name} ({container.short_id}) is not part of compose project "
        f"{project} (its project label: {theirs or 'none'}); refusing to touch it"
    )

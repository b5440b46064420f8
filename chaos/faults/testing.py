"""Test doubles for faults and the cluster they act on: `FakeCluster` (an in-memory
`FaultTarget` that also answers role resolution's `ClusterFacts`) and `FakeFault` (a fault
that takes effect, or never does, as told, and reports each call). For tests only; any
single thread.

`FakeCluster`'s cgroups are folders under `cgroup_root` (`<root>/<controller>/<service>`),
written by its limit methods as the kernel would, so the resource faults' checks read
files there.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chaos.cluster.container_files import archived_files, file_archive
from chaos.cluster.resources import CPU_PERIOD_US, ResourceLimits
from chaos.errors import FaultFailed, ForeignContainer, UnknownTarget
from chaos.faults.base import Check, FaultTarget
from chaos.faults.process import RUNNING, UP


class FakeCluster:
    """Containers as a dict of service -> docker state. Brokers are `broker<n>`, ZooKeeper
    servers `zk<n>`; names in `foreign` are containers outside the project. Every call is
    appended to `calls` as `(method, service)`."""

    def __init__(
        self,
        project: str = "fake",
        brokers: int = 3,
        zk_servers: int = 3,
        foreign: tuple[str, ...] = (),
        cgroup_root: Path | None = None,
    ) -> None:
        self.project = project
        self.state = {f"broker{i}": RUNNING for i in range(1, brokers + 1)}
        self.state.update({f"zk{i}": RUNNING for i in range(1, zk_servers + 1)})
        self.foreign = set(foreign)
        self.calls: list[tuple[str, str]] = []
        self.controller: int | None = 1 if brokers else None
        self.modes = {f"zk{i}": "follower" for i in range(1, zk_servers + 1)}
        if zk_servers:
            self.modes["zk1"] = "leader"
        #: Each server's `cons` listing (`zk_connections`).
        self.cons: dict[str, str] = {}
        self.leaders: dict[tuple[str, int], int] = {}
        self.registered = set(range(1, brokers + 1))
        self._starts = itertools.count(1)
        self.started = {service: "start-0" for service in self.state}
        self.tls: Path | None = None
        self.cgroup_root = cgroup_root
        #: Docker's limits per service (none unless set).
        self.limits = {service: ResourceLimits(0, 0, 0, 0, 0, False) for service in self.state}
        #: Answers `exec` (service, argv, env) -> output; None answers every exec with "".
        self.exec_reply: Callable[[str, Sequence[str], Mapping[str, str]], str] | None = None
        #: Files written with `copy_in` (or set by a test), by service and path.
        self.files: dict[tuple[str, str], bytes] = {}

    # -- FaultTarget ---------------------------------------------------------------------

    def services(self) -> tuple[str, ...]:
        """Every service, sorted."""
        return tuple(sorted(self.state))

    def status(self, service: str) -> str:
        """The service's state."""
        return self.state[self._known(service, "status")]

    def started_at(self, service: str) -> str:
        """A token that changes on each start."""
        return self.started[self._known(service, "started_at")]

    def zk_mode(self, service: str) -> str:
        """`modes[service]`, `unreachable` unless it runs."""
        self._known(service, "zk_mode")
        return self.modes[service] if self.state[service] == RUNNING else "unreachable"

    def zk_connections(self, service: str) -> str | None:
        """`cons[service]` (empty unless set), None unless it runs."""
        self._known(service, "zk_connections")
        return self.cons.get(service, "") if self.state[service] == RUNNING else None

    def pid(self, service: str) -> int:
        """A made-up pid."""
        return 10_000 + self.services().index(self._known(service, "pid"))

    def ip(self, service: str) -> str:
        """A made-up address; `FaultFailed` for a container not running, which docker
        gives none."""
        if self.status(service) not in UP:
            raise FaultFailed(f"{service} has no address on any network (is it running?)")
        return f"10.0.0.{2 + self.services().index(self._known(service, 'ip'))}"

    def kill(self, service: str, signal: str = "SIGKILL") -> None:
        """Running -> exited."""
        self._transition(service, "kill", RUNNING, "exited")

    def stop(self, service: str, timeout_s: float) -> None:
        """Running -> exited."""
        self._transition(service, "stop", RUNNING, "exited")

    def start(self, service: str) -> None:
        """Exited -> running, with a new start time."""
        self._transition(service, "start", "exited", RUNNING)
        self.started[service] = f"start-{next(self._starts)}"

    def pause(self, service: str) -> None:
        """Running -> paused."""
        self._transition(service, "pause", RUNNING, "paused")

    def unpause(self, service: str) -> None:
        """Paused -> running."""
        self._transition(service, "unpause", "paused", RUNNING)

    def broker_registered(self, broker_id: int) -> bool:
        """Whether `broker_id` is in `registered`."""
        return broker_id in self.registered

    def tls_dir(self) -> Path | None:
        """`tls` (None: a plaintext cluster)."""
        return self.tls

    def set_cpu_quota(self, service: str, quota_us: int) -> None:
        """Docker's quota and the cgroup's `cpu.cfs_quota_us`."""
        limits = self.limits[self._known(service, "set_cpu_quota")]
        self.limits[service] = replace(limits, cpu_quota_us=quota_us, cpu_period_us=CPU_PERIOD_US)
        self._write_cgroup(service, "cpu", "cpu.cfs_quota_us", quota_us)

    def set_memory_limit(self, service: str, limit_bytes: int) -> None:
        """Docker's limit and the cgroup's `memory.limit_in_bytes`."""
        limits = self.limits[self._known(service, "set_memory_limit")]
        self.limits[service] = replace(
            limits, memory_bytes=limit_bytes, memory_swap_bytes=limit_bytes
        )
        self._write_cgroup(service, "memory", "memory.limit_in_bytes", limit_bytes)

    def resource_limits(self, service: str) -> ResourceLimits:
        """`limits[service]`."""
        return self.limits[self._known(service, "resource_limits")]

    def cgroup_dir(self, service: str, controller: str) -> Path:
        """`<cgroup_root>/<controller>/<service>`; `FaultFailed` without a root."""
        self._known(service, "cgroup_dir")
        if self.cgroup_root is None:
            raise FaultFailed(f"{service}: no cgroup {controller} (no cgroup_root)")
        return self.cgroup_root / controller / service

    def _write_cgroup(self, service: str, controller: str, name: str, value: int) -> None:
        if self.cgroup_root is not None and self.state[service] == RUNNING:
            directory = self.cgroup_root / controller / service
            directory.mkdir(parents=True, exist_ok=True)
            (directory / name).write_text(f"{value}\n")

    def exec(self, service: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
        """`exec_reply(service, argv, env)` when set, else empty output; a service that
        does not run fails as docker's exec does."""
        self._known(service, "exec")
        if self.state[service] != RUNNING:
            raise FaultFailed(f"{service} is {self.state[service]}, cannot exec")
        return self.exec_reply(service, argv, env or {}) if self.exec_reply else ""

    def copy_in(self, service: str, directory: str, archive: bytes) -> None:
        """Every regular file of the tar `archive` into `files`, running or not."""
        self._known(service, "copy_in")
        for name, data in archived_files([archive]).items():
            self.files[(service, f"{directory.rstrip('/')}/{name}")] = data

    def copy_out(self, service: str, path: str) -> Iterator[bytes]:
        """The file `path` of `files` as a one-member tar stream; `FaultFailed` when none."""
        self._known(service, "copy_out")
        data = self.files.get((service, path))
        if data is None:
            raise FaultFailed(f"docker cp {service}:{path}: no such file")
        return iter([file_archive(path.rsplit("/", 1)[-1], data)])

    # -- ClusterFacts --------------------------------------------------------------------

    def brokers(self) -> dict[int, str]:
        """Broker id -> service."""
        return {int(s[6:]): s for s in self.state if s.startswith("broker")}

    def zk_servers(self) -> dict[int, str]:
        """myid -> service."""
        return {int(s[2:]): s for s in self.state if s.startswith("zk")}

    def controller_id(self) -> int | None:
        """`controller`."""
        return self.controller

    def partition_leader(self, topic: str, partition: int) -> int | None:
        """`leaders[(topic, partition)]` (-1 is no leader)."""
        try:
            leader = self.leaders[(topic, partition)]
        except KeyError:
            raise UnknownTarget(f"partition {topic}-{partition} has no state") from None
        return leader if leader >= 0 else None

    def leader_counts(self) -> dict[int, int]:
        """Partitions led per broker."""
        counts = dict.fromkeys(self.brokers(), 0)
        for leader in self.leaders.values():
            if leader >= 0:
                counts[leader] += 1
        return counts

    def _known(self, service: str, method: str) -> str:
        self.calls.append((method, service))
        if service in self.foreign:
            raise ForeignContainer(f"{service} is not part of project {self.project}")
        if service not in self.state:
            raise UnknownTarget(f"no service {service!r}")
        return service

    def _transition(self, service: str, method: str, before: str, after: str) -> None:
        if self.state[self._known(service, method)] != before:
            raise FaultFailed(f"{method} {service}: it is {self.state[service]}")
        self.state[service] = after


@dataclass(frozen=True)
class FakeFault:
    """A fault of kind `fake` on `targets`: `start` and `stop` call `on_start`/`on_stop`
    (for ordering checks) and flip `applied`; it takes effect only if `takes_effect`, and
    `start` raises `FaultFailed` if `start_fails`. Not in the catalog."""

    targets: tuple[str, ...] = ("broker1",)
    takes_effect: bool = True
    start_fails: bool = False
    on_start: Callable[[], None] = lambda: None
    on_stop: Callable[[], None] = lambda: None
    applied: list[bool] = field(default_factory=lambda: [False], compare=False)

    @property
    def kind(self) -> str:
        """`fake`."""
        return "fake"

    def describe(self) -> Mapping[str, Any]:
        """`{"targets": [...]}`."""
        return {"targets": list(self.targets)}

    def start(self, cluster: FaultTarget) -> None:
        """Call `on_start`; apply, or fail."""
        self.on_start()
        if self.start_fails:
            raise FaultFailed("the fake mechanism failed")
        self.applied[0] = True

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Holds when applied and `takes_effect`."""
        return Check(self.applied[0] and self.takes_effect, f"applied={self.applied[0]}")

    def stop(self, cluster: FaultTarget) -> None:
        """Call `on_stop`; un-apply."""
        self.on_stop()
        self.applied[0] = False

    def undone(self, cluster: FaultTarget) -> Check:
        """Holds when not applied."""
        return Check(not self.applied[0], f"applied={self.applied[0]}")

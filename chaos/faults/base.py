"""What every fault is, and what a fault may do to the cluster.

A fault is a frozen dataclass that names its kind and its targets (compose service names,
resolved from roles before the fault is built) and implements `Fault`:

    start(cluster)       make it happen (idempotent where the mechanism allows)
    took_effect(cluster) a `Check` measured on the cluster, not assumed: the process is
                         gone or frozen, the connection is refused, the delay is there
    stop(cluster)        undo it (idempotent: stopping a fault that is half applied, or
                         whose target restarted meanwhile, must not fail)
    undone(cluster)      a `Check` that nothing of it is left: no rule, no qdisc, the
                         container running and unpaused
    describe()           a JSON object for `faults.jsonl` and the heal state; together
                         with `kind` it is enough to rebuild the fault (`fault_from_json`
                         in `chaos.faults.registry`)

A fault that cuts links between services (a grudge: `partition`, `zk-isolate`,
`broker-isolate`, `session-expire`) also implements `CutsLinks`: it names the links it cuts,
and measures its two checks *beside* the links other faults active at the same time cut.
Those links are expected to go unanswered rather than to answer, so a second cut laid over
a first can prove it took effect, and the first can prove it is undone while the second
still holds (the injector passes what the other active faults cut).

Faults act only through `FaultTarget`, which checks on every call that the container
belongs to the run's compose project (`chaos.cluster.handle.ClusterHandle` implements it).

Errors are `chaos.errors.FaultError`s: `ForeignContainer` (the target does not carry the
run's compose project label), `UnknownTarget` (no container/role of that name in the
project), `FaultFailed` (the mechanism failed: docker API, nsenter, iptables, tc).

Thread-safety: fault values are immutable; their methods run on the injector's thread,
the thread that drives the injector for that fault (in a run, the step's own thread:
faults of overlapping steps start and stop at once on different threads).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from chaos.cluster.resources import ResourceLimits


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of a measured check: `ok`, and what was seen (for `faults.jsonl`)."""

    ok: bool
    detail: str

    @staticmethod
    def all(checks: Sequence[Check]) -> Check:
        """One check that holds when every check holds; details joined."""
        return Check(all(c.ok for c in checks), "; ".join(c.detail for c in checks))


class FaultTarget(Protocol):
    """What a fault may do to the project's containers. Every method refuses a container
    outside the project (`ForeignContainer`) and an unknown service (`UnknownTarget`)."""

    @property
    def project(self) -> str:
        """The compose project name."""
        ...

    def services(self) -> tuple[str, ...]:
        """Every service of the project, sorted (`zk1`.., `broker1`..)."""
        ...

    def pid(self, service: str) -> int:
        """The host pid of the service's main process (for `nsenter --net`)."""
        ...

    def ip(self, service: str) -> str:
        """The service's address on the project network."""
        ...

    def status(self, service: str) -> str:
        """Docker's state of the container: `running`, `paused`, `exited`, ..."""
        ...

    def started_at(self, service: str) -> str:
        """When the container's current (or last) run started, as docker reports it (an
        RFC 3339 timestamp); it changes on every start, so a restart can be measured."""
        ...

    def zk_mode(self, service: str) -> str:
        """A ZooKeeper server's mode from `srvr`: `leader`, `follower`, `standalone`,
        `not serving` or `unreachable`."""
        ...

    def zk_connections(self, service: str) -> str | None:
        """A ZooKeeper server's `cons` listing (its client connections, each with the
        requests it has not answered yet); None when it does not answer in time."""
        ...

    def kill(self, service: str, signal: str = "SIGKILL") -> None:
        """Send a signal to the container's main process."""
        ...

    def stop(self, service: str, timeout_s: float) -> None:
        """`docker stop`: SIGTERM, SIGKILL after `timeout_s`."""
        ...

    def start(self, service: str) -> None:
        """Start a stopped container."""
        ...

    def pause(self, service: str) -> None:
        """Freeze the container's processes (cgroup freezer)."""
        ...

    def unpause(self, service: str) -> None:
        """Thaw a paused container."""
        ...

    def broker_registered(self, broker_id: int) -> bool:
        """Whether `/brokers/ids/<broker_id>` exists in ZooKeeper now (read from the host)."""
        ...

    def controller_id(self) -> int | None:
        """The broker that holds `/controller` now, or None (read from the host)."""
        ...

    def tls_dir(self) -> Path | None:
        """The host directory of the brokers' TLS material; None for a plaintext cluster."""
        ...

    def set_cpu_quota(self, service: str, quota_us: int) -> None:
        """Set the container's CFS quota per `CPU_PERIOD_US` (`docker update`); -1 lifts it."""
        ...

    def set_memory_limit(self, service: str, limit_bytes: int) -> None:
        """Set the container's memory limit, with no swap beyond it (`docker update`);
        `NO_MEMORY_LIMIT` lifts it."""
        ...

    def resource_limits(self, service: str) -> ResourceLimits:
        """Docker's CPU and memory limits of the container and its `OOMKilled`."""
        ...

    def cgroup_dir(self, service: str, controller: str) -> Path:
        """The host directory of the cgroup v1 `controller` the container's process is in."""
        ...

    def exec(self, service: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
        """Run `argv` as root in the running container, with `env` added to its
        environment, and wait: its output. `FaultFailed` when it exits other than 0."""
        ...

    def copy_in(self, service: str, directory: str, archive: bytes) -> None:
        """Unpack the tar `archive` into `directory` of the service's container, running or
        not (`docker cp`). `FaultFailed` when docker refuses."""
        ...

    def copy_out(self, service: str, path: str) -> Iterator[bytes]:
        """`path` of the service's container, running or not, as a tar stream (`docker
        cp`). `FaultFailed` when docker cannot give it."""
        ...


#: Links cut, as a grudge (`chaos.faults.grudge`): service -> the services it drops.
Cuts = Mapping[str, frozenset[str]]


class Fault(Protocol):
    """A fault with a verified undo (see the module docstring)."""

    @property
    def kind(self) -> str:
        """The fault's kind name (`chaos.faults.registry.FAULT_TYPES`)."""
        ...

    @property
    def targets(self) -> tuple[str, ...]:
        """The services the fault acts on."""
        ...

    def start(self, cluster: FaultTarget) -> None:
        """Make the fault happen."""
        ...

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Measure that the fault is in effect."""
        ...

    def stop(self, cluster: FaultTarget) -> None:
        """Undo the fault; safe to call on a half-applied fault or a restarted target."""
        ...

    def undone(self, cluster: FaultTarget) -> Check:
        """Measure that nothing of the fault is left."""
        ...

    def describe(self) -> Mapping[str, Any]:
        """JSON-able fields that rebuild the fault with its kind."""
        ...


@runtime_checkable
class Traced(Protocol):
    """A fault that keeps what it observed while it worked (samples, decisions) for
    whoever wants to know why it did or did not catch what it aimed at; the injector
    writes it to `<run_dir>/traces/<fault id>.jsonl` once the fault proved its effect."""

    def trace(self) -> Sequence[Mapping[str, Any]]:
        """JSON-able records, oldest first."""
        ...


@runtime_checkable
class CutsLinks(Protocol):
    """A fault that cuts links (see the module docstring); its checks take the links
    already cut by other active faults (`already_cut`) as cut, not as broken."""

    def cut_links(self, cluster: FaultTarget) -> Cuts:
        """The links this fault cuts, over the project's services."""
        ...

    def took_effect_beside(self, cluster: FaultTarget, already_cut: Cuts) -> Check:
        """`took_effect`, with the links of `already_cut` expected to be cut too."""
        ...

    def undone_beside(self, cluster: FaultTarget, already_cut: Cuts) -> Check:
        """`undone`, with the links of `already_cut` expected to stay cut."""
        ...

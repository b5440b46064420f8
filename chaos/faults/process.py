"""Faults on the processes of brokers and ZooKeeper servers, through docker: `Kill`
(SIGKILL), `Stop` (`docker stop`: SIGTERM, so a broker does a controlled shutdown),
`Pause` (cgroup freezer) and `Bounce` (SIGKILL and start at once, before the broker's
ZooKeeper session expires).

Every check is measured: a killed or stopped target's container is not running; a paused
one is `paused` in docker *and* its process's cgroup reports FROZEN (`freezer`); undone
means running, and for a pause, thawed. A killed broker's registration may outlive it
until its session expires; nothing here waits for that.

The building blocks (`kill_running`, `start_stopped`, `pause_running`, `unpause_paused` and
the checks) are shared with the ZooKeeper faults. Runs on the injector's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from chaos.errors import FaultError, FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import TargetedFault, no_extra_fields, number_from, targets_from
from chaos.faults.freezer import freezer_state

RUNNING = "running"
PAUSED = "paused"
#: Docker's states of a container whose processes exist (running, or frozen): it has an
#: address and a network namespace.
UP = frozenset({RUNNING, PAUSED})
#: Docker states of a container whose process is gone.
NOT_RUNNING = frozenset({"created", "exited", "dead"})
#: How long `Bounce` waits for a killed container to be seen as exited before starting it.
EXIT_WAIT_S = 10.0


def for_each(targets: tuple[str, ...], act: Callable[[str], None]) -> None:
    """Apply `act` to every target, even after one fails; then raise one `FaultFailed`
    naming every failure (a `ForeignContainer` or `UnknownTarget` alone is raised as is)."""
    errors: list[tuple[str, FaultError]] = []
    for target in targets:
        try:
            act(target)
        except FaultError as exc:
            errors.append((target, exc))
    if len(errors) == 1 and not isinstance(errors[0][1], FaultFailed):
        raise errors[0][1]
    if errors:
        raise FaultFailed("; ".join(f"{target}: {exc}" for target, exc in errors))


def kill_running(cluster: FaultTarget, targets: tuple[str, ...]) -> None:
    """SIGKILL every target that runs (a stopped one is already what a kill makes)."""
    for_each(targets, lambda t: cluster.kill(t) if cluster.status(t) == RUNNING else None)


def start_stopped(cluster: FaultTarget, targets: tuple[str, ...]) -> None:
    """Start every target whose container is not running (one restarted meanwhile is left)."""
    for_each(targets, lambda t: cluster.start(t) if cluster.status(t) in NOT_RUNNING else None)


def pause_running(cluster: FaultTarget, targets: tuple[str, ...]) -> None:
    """Freeze every running target."""
    for_each(targets, lambda t: cluster.pause(t) if cluster.status(t) == RUNNING else None)


def unpause_paused(cluster: FaultTarget, targets: tuple[str, ...]) -> None:
    """Thaw every paused target."""
    for_each(targets, lambda t: cluster.unpause(t) if cluster.status(t) == PAUSED else None)


def not_running(cluster: FaultTarget, targets: tuple[str, ...]) -> Check:
    """Every target's container has no process (exited, dead or never started)."""
    return Check.all([_state(cluster, t, lambda s: s in NOT_RUNNING) for t in targets])


def running(cluster: FaultTarget, targets: tuple[str, ...]) -> Check:
    """Every target's container runs and is not paused."""
    return Check.all([_state(cluster, t, lambda s: s == RUNNING) for t in targets])


def frozen(cluster: FaultTarget, targets: tuple[str, ...]) -> Check:
    """Every target is `paused` in docker and its process's cgroup is FROZEN."""
    return Check.all([_freezer(cluster, t, want_frozen=True) for t in targets])


def thawed(cluster: FaultTarget, targets: tuple[str, ...]) -> Check:
    """Every target runs, and its process's cgroup is not frozen."""
    return Check.all([_freezer(cluster, t, want_frozen=False) for t in targets])


def _state(cluster: FaultTarget, target: str, wanted: Callable[[str], bool]) -> Check:
    status = cluster.status(target)
    return Check(wanted(status), f"{target} {status}")


def _freezer(cluster: FaultTarget, target: str, *, want_frozen: bool) -> Check:
    status = cluster.status(target)
    if status != (PAUSED if want_frozen else RUNNING):
        return Check(False, f"{target} {status}")
    measured = freezer_state(cluster.pid(target))
    return Check(measured.frozen == want_frozen, f"{target} {status}, {measured.detail}")


@dataclass(frozen=True, slots=True)
class ProcessDown(TargetedFault):
    """The checks and the undo of a fault that takes its targets' processes down: took
    effect when no target runs; undone by starting the ones that do not run."""

    def took_effect(self, cluster: FaultTarget) -> Check:
        """No target's container runs."""
        return not_running(cluster, self.targets)

    def stop(self, cluster: FaultTarget) -> None:
        """Start every target that does not run."""
        start_stopped(cluster, self.targets)

    def undone(self, cluster: FaultTarget) -> Check:
        """Every target runs."""
        return running(cluster, self.targets)


@dataclass(frozen=True, slots=True)
class Kill(ProcessDown):
    """SIGKILL the targets' main processes; undone by starting them again."""

    KIND: ClassVar[str] = "kill"

    def start(self, cluster: FaultTarget) -> None:
        """Kill every target that runs."""
        kill_running(cluster, self.targets)


@dataclass(frozen=True, slots=True)
class Stop(ProcessDown):
    """`docker stop` the targets (SIGTERM, SIGKILL after `timeout_s`); undone by starting."""

    timeout_s: float = 30.0
    KIND: ClassVar[str] = "stop"

    def __post_init__(self) -> None:
        super(Stop, self).__post_init__()
        number_from({"timeout_s": self.timeout_s}, "timeout_s", 30.0, self.KIND)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "timeout_s"}, cls.KIND)
        return cls(targets_from(data, cls.KIND), number_from(data, "timeout_s", 30.0, cls.KIND))

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "timeout_s": ...}`."""
        return {"targets": list(self.targets), "timeout_s": self.timeout_s}

    def start(self, cluster: FaultTarget) -> None:
        """Stop every running target; blocks until each has exited."""
        for_each(
            self.targets,
            lambda t: cluster.stop(t, self.timeout_s) if cluster.status(t) == RUNNING else None,
        )


@dataclass(frozen=True, slots=True)
class Pause(TargetedFault):
    """Freeze the targets' processes (`docker pause`); undone by thawing them."""

    KIND: ClassVar[str] = "pause"

    def start(self, cluster: FaultTarget) -> None:
        """Pause every running target."""
        pause_running(cluster, self.targets)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target is paused and its cgroup FROZEN."""
        return frozen(cluster, self.targets)

    def stop(self, cluster: FaultTarget) -> None:
        """Unpause every paused target."""
        unpause_paused(cluster, self.targets)

    def undone(self, cluster: FaultTarget) -> Check:
        """Every target runs, thawed."""
        return thawed(cluster, self.targets)


@dataclass(frozen=True, slots=True)
class Bounce(ProcessDown):
    """SIGKILL each target and start it again at once, so a broker comes back before its
    ZooKeeper session expires. Took effect when each target runs with a start time other
    than the one seen before the kill (kept in a memo that is not part of the value);
    stopping it starts a target whose bounce was interrupted."""

    KIND: ClassVar[str] = "bounce"
    _started_before: dict[str, str] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def start(self, cluster: FaultTarget) -> None:
        """Remember each target's start time, kill it, wait until docker sees it exited
        (at most `EXIT_WAIT_S`), start it."""
        for_each(self.targets, lambda t: self._bounce(cluster, t))

    def _bounce(self, cluster: FaultTarget, target: str) -> None:
        self._started_before[target] = cluster.started_at(target)
        if cluster.status(target) == RUNNING:
            cluster.kill(target)
        deadline = time.monotonic() + EXIT_WAIT_S
        while (status := cluster.status(target)) not in NOT_RUNNING:
            if time.monotonic() > deadline:
                raise FaultFailed(f"{target} still {status} {EXIT_WAIT_S:.0f}s after SIGKILL")
            time.sleep(0.02)
        cluster.start(target)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target runs with a new start time."""
        return Check.all([self._restarted(cluster, t) for t in self.targets])

    def _restarted(self, cluster: FaultTarget, target: str) -> Check:
        before = self._started_before.get(target)
        status = cluster.status(target)
        now = cluster.started_at(target)
        if before is None:
            return Check(False, f"{target} {status}; its start time before the bounce is unknown")
        changed = now != before
        return Check(
            status == RUNNING and changed,
            f"{target} {status}, started {now}" + ("" if changed else " (unchanged)"),
        )

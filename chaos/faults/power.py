"""A power loss of brokers, through their disk layers (`harness.disk_layer`): what a
broker wrote since its files' last fsync sat in a page cache that the power cut takes
(lazyfs's model; metadata survives, data does not).

- `disk-volatile` (lasting): the targets' layers journal every change since each file's
  last fsync (`lose_unsynced`), which a power loss can then take back. Took effect once
  every target's layer keeps the journal (an idle broker may write nothing for a while:
  no operation is waited for); undone when the rules are cleared.
- `power-loss` (instant): SIGKILL every target at once, wait until none runs and their
  ZooKeeper registrations are gone (a machine whose power was cut comes back long after
  its session expired, so a registration seen later is the new one), have each layer
  take back its unsynced changes (`lose`), start the targets again. It needs the
  layers armed by `disk-volatile` (start fails otherwise, before killing anything). Took
  effect once every target was cut and runs again, the detail naming what each layer
  took back (files, bytes); undone when every target runs, is registered in ZooKeeper,
  and its layer holds no rule (the volatile mode is cleared too). Like every fault it
  survives the runner's death: `python -m chaos heal` starts the targets that do not run
  and clears the layers' rules.

Whether a lost write is acknowledged depends on the brokers' flush policy
(`domain.flush`): with Kafka's default (never) a power loss of a majority of a
partition's replicas can take acknowledged writes; with 1, none. Runs on the injector's
thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

from chaos.errors import FaultFailed
from chaos.faults import disk
from chaos.faults.base import Check, FaultTarget
from chaos.faults.disk import DiskFault
from chaos.faults.fields import TargetedFault
from chaos.faults.links import broker_id
from chaos.faults.params import ParamRule
from chaos.faults.process import EXIT_WAIT_S, NOT_RUNNING, RUNNING, kill_running, start_stopped
from harness.disk_layers import DiskLayerError
from harness.disk_rules import LayerRules

#: How long a power loss waits for its targets' ZooKeeper sessions to expire.
SESSION_WAIT_S = 60.0


@dataclass(frozen=True, slots=True)
class DiskVolatile(DiskFault):
    """The targets' layers journal unsynced changes, so that a power loss can lose them."""

    KIND: ClassVar[str] = "disk-volatile"
    PROOF: ClassVar[str] = "seen"
    PARAMS: ClassVar[tuple[ParamRule, ...]] = ()

    def rules(self) -> LayerRules:
        """Journal; fail and hold nothing."""
        return LayerRules(lose_unsynced=True)

    def params(self) -> dict[str, object]:
        """None."""
        return {}

    def _effect(self, cluster: FaultTarget, target: str) -> Check:
        """The target's layer keeps the journal."""
        stats = disk._stats(cluster, target)
        if stats is None:
            return Check(False, f"{target}: no disk layer answers")
        seen = stats.counters.seen
        return Check(
            stats.rules == self.rules(),
            f"{target} ({cluster.status(target)}): layer journals unsynced writes, "
            f"{seen['write']} writes and {seen['fsync']} fsyncs since",
        )

    def stop(self, cluster: FaultTarget) -> None:
        """Clear the rules (the journal with them); nothing failed, nothing restarts."""
        for target in self.targets:
            try:
                disk._control(cluster, target).reset()
            except DiskLayerError:
                continue


@dataclass(frozen=True, slots=True)
class PowerLoss(TargetedFault):
    """Cut the targets' power at once: kill, lose the unsynced writes, start again."""

    KIND: ClassVar[str] = "power-loss"
    #: target -> (files, bytes) its layer took back; not part of the value
    _lost: dict[str, tuple[int, int]] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def start(self, cluster: FaultTarget) -> None:
        """Check every layer is armed, kill every target, wait until none runs or is
        registered, `lose` on every layer, start the targets again."""
        controls = {target: disk._layer(cluster, target) for target in self.targets}
        for target, control in controls.items():
            try:
                armed = control.stats().rules.lose_unsynced
            except DiskLayerError as exc:
                raise FaultFailed(f"{self.KIND} on {target}: {exc}") from None
            if not armed:
                raise FaultFailed(
                    f"{self.KIND} on {target}: its disk layer keeps no journal of unsynced "
                    f"writes (a disk-volatile fault arms it)"
                )
        kill_running(cluster, self.targets)
        deadline = time.monotonic() + EXIT_WAIT_S
        for target in self.targets:
            while (status := cluster.status(target)) not in NOT_RUNNING:
                if time.monotonic() > deadline:
                    raise FaultFailed(f"{target} still {status} {EXIT_WAIT_S:.0f}s after SIGKILL")
                time.sleep(0.02)
        deadline = time.monotonic() + SESSION_WAIT_S
        while left := [t for t in self.targets if cluster.broker_registered(broker_id(t))]:
            if time.monotonic() > deadline:
                raise FaultFailed(f"{left} still registered {SESSION_WAIT_S:.0f}s after SIGKILL")
            time.sleep(0.1)
        for target, control in controls.items():
            try:
                lost = control.lose().lost
            except DiskLayerError as exc:
                raise FaultFailed(f"{self.KIND} on {target}: {exc}") from None
            self._lost[target] = lost or (0, 0)
        start_stopped(cluster, self.targets)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target was cut (its layer answered the `lose`) and runs again."""
        checks = []
        for target in self.targets:
            status = cluster.status(target)
            lost = self._lost.get(target)
            if lost is None:
                checks.append(Check(False, f"{target} {status}: its power was not cut"))
                continue
            files, size = lost
            detail = f"{target} {status}: layer took back {size} bytes of {files} files"
            checks.append(Check(status == RUNNING, detail))
        return Check.all(checks)

    def stop(self, cluster: FaultTarget) -> None:
        """Start every target that does not run; clear the rules of every layer."""
        start_stopped(cluster, self.targets)
        for target in self.targets:
            try:
                disk._control(cluster, target).reset()
            except DiskLayerError:
                continue

    def undone(self, cluster: FaultTarget) -> Check:
        """Every target runs and is registered, its layer without rules."""
        checks = []
        for target in self.targets:
            stats = disk._stats(cluster, target)
            status = cluster.status(target)
            registered = cluster.broker_registered(broker_id(target))
            clear = stats is None or stats.rules.transparent
            rules = "no layer" if stats is None else f"rules {stats.rules.to_json()}"
            checks.append(
                Check(
                    clear and status == RUNNING and registered,
                    f"{target} {status}, {'registered' if registered else 'not registered'}, "
                    f"{rules}",
                )
            )
        return Check.all(checks)

"""The bug hunt's builds on its own compose project: the brokers recreated with one
historical bug switch on (`BUG_SWITCHES=<switch>`, `BUG_SWITCHES_CONTEXT=chaos`) or with
none (the fixed build), then the cluster waited for until it is settled.

Settled means: every broker container runs with exactly the switches asked for (read
back through `ClusterHandle.inspect`, label-checked), every broker is registered, and
the same controller with the same epoch has held `/controller` for `STABLE_S`. The
decision is `settled` (pure); `ComposeBuilds` does the I/O on the caller's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.compare.builds import switch_env
from chaos.errors import FaultError
from chaos.run.setup import RunSetupError
from harness.compose import ComposeCluster, ComposeStartError
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient

__all__ = ["STABLE_S", "ComposeBuilds", "Observation", "settled", "switch_env"]

#: Seconds the controller must hold still before runs start; the deadline to settle.
STABLE_S = 5.0
SETTLE_TIMEOUT_S = 120.0
POLL_S = 1.0


@dataclass(frozen=True, slots=True)
class Observation:
    """One look at the cluster: each broker's switches, who is unregistered, the
    controller and its epoch, when (monotonic seconds)."""

    at_s: float
    switches: Mapping[str, tuple[str, ...]]
    unregistered: tuple[int, ...]
    controller: int | None
    epoch: int | None


def settled(
    wanted: tuple[str, ...], first: Observation | None, now: Observation
) -> tuple[bool, str]:
    """Whether the cluster is settled at `now`, given `first`, the earliest observation
    of the same controller and epoch; and if not, why."""
    wrong = {s: n for s, n in now.switches.items() if n != tuple(sorted(wanted))}
    if wrong or not now.switches:
        return False, f"brokers run with other switches: {wrong or 'no brokers'}"
    if now.unregistered:
        return False, f"brokers {list(now.unregistered)} are not registered"
    if now.controller is None:
        return False, "no controller"
    if first is None or (first.controller, first.epoch) != (now.controller, now.epoch):
        return False, f"controller {now.controller} (epoch {now.epoch}) just elected"
    held = now.at_s - first.at_s
    if held < STABLE_S:
        return False, f"controller {now.controller} held for {held:.1f} s of {STABLE_S:.0f} s"
    return True, ""


class ComposeBuilds:
    """`chaos.hunt.hunt.Builds` on a compose project started by `harness.compose`."""

    def __init__(self, cluster: ComposeCluster, say: Callable[[str], None] = print) -> None:
        self._cluster = cluster
        self._say = say

    def use(self, switches: tuple[str, ...]) -> None:
        """Recreate the brokers with `switches` and wait until settled (`RunSetupError`
        when they do not come up or settle)."""
        label = ", ".join(switches) or "no switch (the fixed build)"
        self._say(f"brokers of {self._cluster.project}: recreating with {label}")
        try:
            self._cluster.recreate_brokers(switch_env(switches))
        except ComposeStartError as exc:
            raise RunSetupError(f"recreating the brokers with {label}: {exc}") from None
        with ClusterHandle.for_project(self._cluster.project) as handle:
            self._settle(handle, switches)
        self._say(f"brokers of {self._cluster.project}: settled with {label}")

    def _settle(self, handle: ClusterHandle, switches: tuple[str, ...]) -> None:
        first: Observation | None = None
        why = ["not looked at yet"]

        def ready() -> bool:
            nonlocal first
            try:
                now = _observe(handle)
            except FaultError as exc:
                why[0] = str(exc)
                return False
            if first is None or (first.controller, first.epoch) != (now.controller, now.epoch):
                first = now
            done, why[0] = settled(switches, first, now)
            return done

        try:
            wait_until(ready, SETTLE_TIMEOUT_S, lambda: f"not settled: {why[0]}", POLL_S)
        except TimeoutError as exc:
            raise RunSetupError(str(exc)) from None


def _observe(handle: ClusterHandle) -> Observation:
    brokers = handle.brokers()

    def controller(zk: KafkaZkClient) -> tuple[int | None, int | None]:
        found = zk.get_controller_epoch()
        return zk.get_controller_id(), None if found is None else found.epoch

    controller_id, epoch = handle.read_zk(controller)
    return Observation(
        time.monotonic(),
        endpoints.bug_switches(handle),
        tuple(b for b in sorted(brokers) if not handle.broker_registered(b)),
        controller_id,
        epoch,
    )

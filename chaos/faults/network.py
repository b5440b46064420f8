"""Network faults that cut links: partitions, and isolation from ZooKeeper or from the
other brokers, applied from the host inside the containers' network namespaces
(`chaos.faults.netns`) as a grudge (`chaos.faults.grudge`) of INPUT drops.

- `partition` (`Partition`): a named grudge; measured: every cut link fails to connect,
  every other link connects.
- `zk-isolate` (`ZkIsolate`): broker and every zk server drop each other; measured alike,
  over all services.
- `broker-isolate` (`BrokerIsolate`): broker and the other brokers drop each other; alike.
- `session-expire` (`SessionExpire`): a zk-isolate; measured: `/brokers/ids/<id>`
  disappears (deadline longer than the session timeout); undone: it comes back.

The faults on packets rather than links (`zk-deaf`, `loss`, `bandwidth`) are in
`chaos.faults.packets`; `latency`, `zk-lost-reply` and `zk-reset` have modules of their
own; `chaos.faults.registry` builds every kind. Every rule is tagged with `fault_id`
(derived from the kind and the description), so `stop` deletes exactly the fault's rules
on every service and `undone` proves that none is left. See docs/chaos-network.md.

Thread-safety: fault values are immutable; their methods run on the injector's thread.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from chaos.faults.base import Check, Cuts, FaultTarget
from chaos.faults.grudge import GRUDGES, Grudge, GrudgeError, complete, merge
from chaos.faults.links import apply_grudge, broker_id, measure_links, of_role, running_services
from chaos.faults.netfault import NetworkFault
from harness.waiting import wait_until


def _wait(condition: Callable[[], bool], deadline_s: float, failed: str, held: str) -> Check:
    started = time.monotonic()
    try:
        wait_until(condition, deadline_s, failed, interval=0.2)
    except TimeoutError as exc:
        return Check(False, str(exc))
    return Check(True, f"{held} after {time.monotonic() - started:.1f} s")


@dataclass(frozen=True, slots=True)
class _GrudgeFault(NetworkFault):
    """What the grudge-based faults share: start applies the grudge, took_effect measures
    every link, stop deletes the tagged rules everywhere, undone finds none and every
    link between running services connects again. Each check also comes `_beside` the
    links other active faults cut (`chaos.faults.base.CutsLinks`): those must stay cut."""

    def grudge(self, cluster: FaultTarget) -> Grudge:
        """The grudge over the project's current services."""
        raise NotImplementedError

    def cut_links(self, cluster: FaultTarget) -> Cuts:
        """The links the fault cuts: its grudge."""
        return self.grudge(cluster)

    def start(self, cluster: FaultTarget) -> None:
        """Add the grudge's drop rules."""
        apply_grudge(cluster, self.fault_id, self.grudge(cluster))

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Cut links fail to connect, the others connect (between running services)."""
        return self.took_effect_beside(cluster, {})

    def took_effect_beside(self, cluster: FaultTarget, already_cut: Cuts) -> Check:
        """Links cut by the fault or by `already_cut` fail to connect, the others connect."""
        cuts = merge([self.grudge(cluster), already_cut])
        return _beside(measure_links(cluster, cuts, running_services(cluster)), already_cut)

    def stop(self, cluster: FaultTarget) -> None:
        """Delete the fault's rules from every service."""
        self.remove_rules(cluster)

    def undone(self, cluster: FaultTarget) -> Check:
        """No rule of the fault anywhere, and the running services all connect."""
        return self.undone_beside(cluster, {})

    def undone_beside(self, cluster: FaultTarget, already_cut: Cuts) -> Check:
        """No rule of the fault anywhere; between running services the links of
        `already_cut` still fail to connect and every other link connects."""
        left = self.no_rules_left(cluster)
        if not left.ok:
            return left
        links = measure_links(cluster, already_cut, running_services(cluster))
        return Check.all([left, _beside(links, already_cut)])


def _beside(check: Check, already_cut: Cuts) -> Check:
    """`check`, its detail naming the services whose links other faults cut."""
    cutting = sorted(node for node, dropped in already_cut.items() if dropped)
    if not cutting:
        return check
    return Check(check.ok, f"{check.detail} (beside links other faults cut at {cutting})")


@dataclass(frozen=True, slots=True)
class Partition(_GrudgeFault):
    """Cut the services (`targets`, in order) by a named grudge (`halves`, `isolate`,
    `majorities-ring`, `bridge`); `seed` shuffles `halves`."""

    grudge_name: str = "halves"
    seed: int | None = None
    KIND: ClassVar[str] = "partition"

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        if self.grudge_name not in GRUDGES:
            raise GrudgeError(f"unknown grudge {self.grudge_name!r}; one of {sorted(GRUDGES)}")
        self.grudge_of(self.targets)

    def grudge_of(self, services: Sequence[str]) -> Grudge:
        """The grudge over the given services (pure)."""
        rng = random.Random(self.seed) if self.seed is not None else None
        return GRUDGES[self.grudge_name](services, rng)

    def grudge(self, cluster: FaultTarget) -> Grudge:
        """The grudge over the fault's services."""
        return self.grudge_of(self.targets)

    def params(self) -> dict[str, Any]:
        """Grudge name and seed."""
        return {"grudge": self.grudge_name, "seed": self.seed}


@dataclass(frozen=True, slots=True)
class ZkIsolate(_GrudgeFault):
    """Cut each target broker from every ZooKeeper server (both sides drop); the brokers
    still reach each other and the ensemble stays whole."""

    KIND: ClassVar[str] = "zk-isolate"

    def grudge(self, cluster: FaultTarget) -> Grudge:
        """Brokers and zk servers drop each other."""
        zks = of_role(cluster.services(), "zk")
        return {
            **{b: frozenset(zks) for b in self.targets},
            **{zk: frozenset(self.targets) for zk in zks},
        }


@dataclass(frozen=True, slots=True)
class BrokerIsolate(_GrudgeFault):
    """Cut each target broker from every other broker; ZooKeeper stays reachable."""

    KIND: ClassVar[str] = "broker-isolate"

    def grudge(self, cluster: FaultTarget) -> Grudge:
        """Each target alone; the other brokers together."""
        others = [b for b in of_role(cluster.services(), "broker") if b not in self.targets]
        return complete([*([b] for b in self.targets), others])


@dataclass(frozen=True, slots=True)
class SessionExpire(ZkIsolate):
    """Cut brokers from ZooKeeper until their registrations are gone (their sessions
    expired), then heal; undone waits until they registered again."""

    expire_deadline_s: float = 30.0
    register_deadline_s: float = 60.0
    KIND: ClassVar[str] = "session-expire"

    def took_effect_beside(self, cluster: FaultTarget, already_cut: Cuts) -> Check:
        """The brokers' links to ZooKeeper are cut (the links of `already_cut` too), and
        (deadline longer than the session timeout) no target is registered any more."""
        cut = _GrudgeFault.took_effect_beside(self, cluster, already_cut)
        if not cut.ok:
            return cut
        ids = [broker_id(b) for b in self.targets]
        gone = _wait(
            lambda: not any(cluster.broker_registered(i) for i in ids),
            self.expire_deadline_s,
            f"brokers {ids} still registered",
            f"/brokers/ids/{ids} gone",
        )
        return Check.all([cut, gone])

    def undone_beside(self, cluster: FaultTarget, already_cut: Cuts) -> Check:
        """No rule left, and every target registered again within the deadline (other
        faults' cuts do not matter to a registration)."""
        left = self.no_rules_left(cluster)
        if not left.ok:
            return left
        ids = [broker_id(b) for b in self.targets]
        back = _wait(
            lambda: all(cluster.broker_registered(i) for i in ids),
            self.register_deadline_s,
            f"brokers {ids} did not register again",
            f"/brokers/ids/{ids} registered again",
        )
        return Check.all([left, back])

    def params(self) -> dict[str, Any]:
        """The deadlines."""
        return {
            "expire_deadline_s": self.expire_deadline_s,
            "register_deadline_s": self.register_deadline_s,
        }

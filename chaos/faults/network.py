"""Network faults: partitions, isolation from ZooKeeper or from the other brokers, session
expiry, packet loss and a bandwidth limit, applied from the host inside the containers'
network namespaces (`chaos.faults.netns`).

- `partition` (`Partition`): a grudge (`chaos.faults.grudge`) as INPUT drops; measured:
  every cut link fails to connect, every other link connects.
- `zk-isolate` (`ZkIsolate`): broker and every zk server drop each other; measured alike,
  over all services.
- `broker-isolate` (`BrokerIsolate`): broker and the other brokers drop each other; alike.
- `zk-deaf` (`ZkDeaf`): the broker drops the data the zk servers send, not their ACKs;
  its requests still arrive and are applied, their answers lost. Measured: its rules.
- `session-expire` (`SessionExpire`): a zk-isolate; measured: `/brokers/ids/<id>`
  disappears (deadline longer than the session timeout); undone: it comes back.
- `loss` (`PacketLoss`): an iptables `statistic --mode random` drop on arrival; measured:
  the drop fraction of a UDP burst from a peer, from the rule counters.
- `bandwidth` (`Bandwidth`): tc tbf as eth0's root qdisc (egress); measured: the qdisc and
  its rate, and the rate at which a UDP flood leaves.
- `latency` (`chaos.faults.latency.Latency`): a delaying proxy; built here too.
- `zk-lost-reply` (`chaos.faults.lost_reply.ZkLostReply`): a write applied by the
  ensemble whose answer the broker never gets; built here too.
- `zk-reset` (`chaos.faults.zk_reset.ZkReset`): the broker's ZooKeeper connection reset
  (`ss -K`); what was in flight on it fails, the session lives on; built here too.

Every rule is tagged with `fault_id` (derived from the kind and the description), so
`stop` deletes exactly the fault's rules on every service and `undone` proves that none
is left. `NETWORK_KINDS` builds each kind from its `describe()` JSON. See
docs/chaos-network.md.

Thread-safety: fault values are immutable; their methods run on the injector's thread.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from chaos.faults.base import Check, Cuts, Fault, FaultTarget
from chaos.faults.grudge import GRUDGES, Grudge, GrudgeError, complete, merge
from chaos.faults.latency import Latency
from chaos.faults.links import apply_grudge, broker_id, measure_links, of_role, running_netns
from chaos.faults.lost_reply import ZkLostReply
from chaos.faults.netfault import NetworkFault
from chaos.faults.netns import netns_of
from chaos.faults.probe import run_all, udp_burst_argv, udp_flood_argv
from chaos.faults.rules import (
    count_arrivals,
    drop_data_from,
    drop_randomly,
    packet_counts,
    tagged_lines,
)
from chaos.faults.zk_reset import ZkReset
from harness.waiting import wait_until

DISCARD_PORT = 9


def _running(cluster: FaultTarget) -> list[str]:
    return [s for s in cluster.services() if cluster.status(s) == "running"]


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
        return _beside(measure_links(cluster, cuts, _running(cluster)), already_cut)

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
        links = measure_links(cluster, already_cut, _running(cluster))
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
class ZkDeaf(NetworkFault):
    """Each target broker drops the data the ZooKeeper servers send it (TCP segments long
    enough to hold a reply), but not their ACKs: its requests keep flowing and are
    applied, their answers are lost. A one-way cut that also dropped the ACKs would stall
    the broker's TCP after its first retransmission timeout, and requests made later
    would never leave."""

    KIND: ClassVar[str] = "zk-deaf"

    def start(self, cluster: FaultTarget) -> None:
        """One drop rule per zk server on each target broker's INPUT."""
        zks = of_role(cluster.services(), "zk")
        rules = tuple(drop_data_from(cluster.ip(zk)) for zk in zks)
        for broker in self.targets:
            running_netns(cluster, broker).add_rules(self.fault_id, rules)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Each target carries one tagged rule per zk server. (The links still connect:
        handshakes pass; what is dropped shows as the broker's lost ZooKeeper connection.)"""
        want = len(of_role(cluster.services(), "zk"))
        checks = []
        for broker in self.targets:
            listing = running_netns(cluster, broker).listing("filter")
            have = len(tagged_lines(listing, self.fault_id))
            checks.append(Check(have == want, f"{broker}: {have} of {want} drop rules in place"))
        return Check.all(checks)

    def stop(self, cluster: FaultTarget) -> None:
        """Delete the rules."""
        self.remove_rules(cluster)

    def undone(self, cluster: FaultTarget) -> Check:
        """No rule of the fault left."""
        return self.no_rules_left(cluster)


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


@dataclass(frozen=True, slots=True)
class PacketLoss(NetworkFault):
    """Drop each packet arriving at the target brokers from other hosts with
    `percent`/100."""

    percent: float = 20.0
    burst: int = 2000
    KIND: ClassVar[str] = "loss"

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        drop_randomly(self.percent / 100)

    def start(self, cluster: FaultTarget) -> None:
        """A counting rule, then the random drop, on each broker's INPUT."""
        rules = (count_arrivals(), drop_randomly(self.percent / 100))
        for broker in self.targets:
            running_netns(cluster, broker).add_rules(self.fault_id, rules)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """A peer sends a UDP burst to each broker; the rule counters show the drop
        fraction near the configured one."""
        peers = [s for s in _running(cluster) if s not in self.targets]
        if not peers:
            return Check(False, "no running service outside the targets to send a burst from")
        probes = []
        for broker in self.targets:
            peer = peers[0]
            address = (cluster.ip(broker), DISCARD_PORT)
            probes.append((running_netns(cluster, peer), udp_burst_argv(address, self.burst)))
        run_all(probes)
        checks = []
        expected = self.percent / 100
        for broker in self.targets:
            netns = running_netns(cluster, broker)
            arrived, dropped = packet_counts(netns.listing("filter", verbose=True), self.fault_id)
            seen = dropped / arrived if arrived else 0.0
            spread = max(0.05, 4 * math.sqrt(expected * (1 - expected) / max(arrived, 1)))
            ok = arrived >= self.burst * 0.9 and abs(seen - expected) <= spread
            checks.append(
                Check(ok, f"{broker}: {dropped} of {arrived} arrivals dropped ({seen:.1%}, "
                          f"want {expected:.0%} +- {spread:.1%})")
            )  # fmt: skip
        return Check.all(checks)

    def stop(self, cluster: FaultTarget) -> None:
        """Delete the rules."""
        self.remove_rules(cluster)

    def undone(self, cluster: FaultTarget) -> Check:
        """No rule of the fault left."""
        return self.no_rules_left(cluster)

    def params(self) -> dict[str, Any]:
        """The percent."""
        return {"percent": self.percent}


@dataclass(frozen=True, slots=True)
class Bandwidth(NetworkFault):
    """Limit what the target brokers send (eth0 egress) to `rate_kbit` with a token
    bucket (our root qdisc, handle `7e57:`)."""

    rate_kbit: int = 256
    flood_s: float = 2.0
    KIND: ClassVar[str] = "bandwidth"

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        if self.rate_kbit < 8:
            raise ValueError(f"rate_kbit must be at least 8, got {self.rate_kbit}")

    @property
    def burst_bytes(self) -> int:
        """The bucket: 100 ms at the rate, at least a few full frames."""
        return max(4096, self.rate_kbit * 1000 // 8 // 10)

    def qdisc(self) -> tuple[str, ...]:
        """The tc qdisc arguments."""
        return ("tbf", "rate", f"{self.rate_kbit}kbit", "burst", str(self.burst_bytes),
                "latency", "200ms")  # fmt: skip

    def start(self, cluster: FaultTarget) -> None:
        """Install the token bucket as each broker's root qdisc."""
        for broker in self.targets:
            running_netns(cluster, broker).set_root_qdisc(self.qdisc())

    def took_effect(self, cluster: FaultTarget) -> Check:
        """The qdisc is there with the rate, and a UDP flood leaves at about the rate."""
        return Check.all([self._measure(cluster, broker) for broker in self.targets])

    def _measure(self, cluster: FaultTarget, broker: str) -> Check:
        netns = running_netns(cluster, broker)
        before = netns.root_qdisc()
        want = self.rate_kbit * 1000 // 8
        if before is None or before.get("options", {}).get("rate") != want:
            return Check(False, f"{broker}: root qdisc is {before}, want tbf at {want} B/s")
        peer = next((s for s in _running(cluster) if s != broker), None)
        if peer is None:
            return Check(False, f"{broker}: no running peer to flood")
        started = time.monotonic()
        run_all([(netns, udp_flood_argv((cluster.ip(peer), DISCARD_PORT), self.flood_s))])
        after = netns.root_qdisc()
        took = time.monotonic() - started
        sent = (after or {}).get("bytes", 0) - before.get("bytes", 0)
        rate = sent * 8 / 1000 / took
        ceiling = self.rate_kbit * 1.25 + self.burst_bytes * 8 / 1000 / took
        ok = self.rate_kbit * 0.5 <= rate <= ceiling
        return Check(ok, f"{broker}: tbf {self.rate_kbit} kbit; flood left at {rate:.0f} kbit/s")

    def stop(self, cluster: FaultTarget) -> None:
        """Remove our qdisc where it is."""
        for broker in self.targets:
            netns = netns_of(cluster, broker)
            if netns is not None:
                netns.remove_root_qdisc()

    def undone(self, cluster: FaultTarget) -> Check:
        """No qdisc of ours on any target."""
        left = []
        for broker in self.targets:
            netns = netns_of(cluster, broker)
            if netns is not None and netns.root_qdisc() is not None:
                left.append(broker)
        if left:
            return Check(False, f"our root qdisc still on {left}")
        return Check(True, f"no qdisc of ours on {list(self.targets)}")

    def params(self) -> dict[str, Any]:
        """The rate."""
        return {"rate_kbit": self.rate_kbit}


def _targets(description: Mapping[str, Any]) -> tuple[str, ...]:
    targets = description.get("targets")
    if not isinstance(targets, list | tuple) or not all(isinstance(t, str) for t in targets):
        raise ValueError(f"a network fault needs 'targets' as a list of services: {description}")
    return tuple(targets)


def _seed(description: Mapping[str, Any]) -> int | None:
    seed = description.get("seed")
    return None if seed is None else int(seed)


NETWORK_KINDS: dict[str, Callable[[Mapping[str, Any]], Fault]] = {
    "partition": lambda d: Partition(_targets(d), str(d.get("grudge", "")), _seed(d)),
    "zk-isolate": lambda d: ZkIsolate(_targets(d)),
    "zk-deaf": lambda d: ZkDeaf(_targets(d)),
    "broker-isolate": lambda d: BrokerIsolate(_targets(d)),
    "session-expire": lambda d: SessionExpire(
        _targets(d),
        float(d.get("expire_deadline_s", 30.0)),
        float(d.get("register_deadline_s", 60.0)),
    ),
    "loss": lambda d: PacketLoss(_targets(d), float(d.get("percent", 20))),
    "bandwidth": lambda d: Bandwidth(_targets(d), int(d.get("rate_kbit", 256))),
    "latency": lambda d: Latency(_targets(d), int(d.get("delay_ms", 100))),
    "zk-lost-reply": ZkLostReply.from_json,
    "zk-reset": lambda d: ZkReset(_targets(d)),
}
"""Each network kind's builder from its `describe()` JSON (with `targets`)."""

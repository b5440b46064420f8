"""Network faults on packets rather than links, applied from the host inside the
containers' network namespaces (`chaos.faults.netns`):

- `zk-deaf` (`ZkDeaf`): the broker drops the data the zk servers send, not their ACKs;
  its requests still arrive and are applied, their answers lost. Measured: its rules.
- `loss` (`PacketLoss`): an iptables `statistic --mode random` drop on arrival; measured:
  the drop fraction of a UDP burst from a peer, from the rule counters.
- `bandwidth` (`Bandwidth`): tc tbf as eth0's root qdisc (egress); measured: the qdisc and
  its rate, and the rate at which a UDP flood leaves.

Every rule is tagged with `fault_id`, so `stop` deletes exactly the fault's rules and
`undone` proves that none is left. See docs/chaos-network.md.

Thread-safety: fault values are immutable; their methods run on the injector's thread.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData
from chaos.faults.links import addresses, of_role, running_netns, running_services
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

#: The UDP port the measuring bursts and floods are sent to (nothing listens).
DISCARD_PORT = 9


@dataclass(frozen=True, slots=True)
class ZkDeaf(NetworkFault):
    """Each target broker drops the data the ZooKeeper servers send it (TCP segments long
    enough to hold a reply), but not their ACKs: its requests keep flowing and are
    applied, their answers are lost. A one-way cut that also dropped the ACKs would stall
    the broker's TCP after its first retransmission timeout, and requests made later
    would never leave."""

    KIND: ClassVar[str] = "zk-deaf"

    def start(self, cluster: FaultTarget) -> None:
        """One drop rule per zk server on each target broker's INPUT (per server that
        has an address: one another fault stopped has none, and is not cut)."""
        zks = addresses(cluster, of_role(cluster.services(), "zk"))
        rules = tuple(drop_data_from(ip) for ip in zks.values())
        for broker in self.targets:
            running_netns(cluster, broker).add_rules(self.fault_id, rules)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Each target carries one tagged rule per zk server. (The links still connect:
        handshakes pass; what is dropped shows as the broker's lost ZooKeeper connection.)"""
        want = len(addresses(cluster, of_role(cluster.services(), "zk")))
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
class PacketLoss(NetworkFault):
    """Drop each packet arriving at the target brokers from other hosts with
    `percent`/100."""

    percent: float = 20.0
    burst: int = 2000
    KIND: ClassVar[str] = "loss"

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        if not 0 < self.percent <= 100:
            raise BadFaultData(f"percent must be in (0, 100], got {self.percent}")

    def start(self, cluster: FaultTarget) -> None:
        """A counting rule, then the random drop, on each broker's INPUT."""
        rules = (count_arrivals(), drop_randomly(self.percent / 100))
        for broker in self.targets:
            running_netns(cluster, broker).add_rules(self.fault_id, rules)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """A peer sends a UDP burst to each broker; the rule counters show the drop
        fraction near the configured one."""
        peers = [s for s in running_services(cluster) if s not in self.targets]
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
            raise BadFaultData(f"rate_kbit must be at least 8, got {self.rate_kbit}")

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
        peer = next((s for s in running_services(cluster) if s != broker), None)
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

"""Links between the project's services: which port a service listens on, how a grudge
lands on the services' packet filters, and how a cut is measured.

A link is measured by a TCP connect from inside one service's network namespace to the
other's port (ZooKeeper 2181, broker gRPC 9092): a cut link goes unanswered (the connect
times out), a link the grudge allows answers (connects, or is refused by a peer whose
server is not up yet: the packets still pass). Every ordered pair of the measured
services is tried, all at once, so a check costs about one connect timeout.

Thread-safety: runs on the caller's thread (the injector's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chaos.errors import FaultFailed, UnknownTarget
from chaos.faults.base import Check, FaultTarget
from chaos.faults.grudge import Grudge, cut, drop_rules
from chaos.faults.netns import Netns, netns_of
from chaos.faults.probe import connects

ZK_PORT = 2181
BROKER_PORT = 9092
CONNECT_TIMEOUT_S = 2.0
REFUSED = "ConnectionRefusedError"
_SERVICE = re.compile(r"^(zk|broker)(\d+)$")


def role(service: str) -> str:
    """`zk` or `broker`, from the service's name (`zk1`, `broker3`)."""
    found = _SERVICE.match(service)
    if found is None:
        raise UnknownTarget(f"{service!r} is neither a zk server nor a broker")
    return found.group(1)


def port(service: str) -> int:
    """The port the service serves its clients on."""
    return ZK_PORT if role(service) == "zk" else BROKER_PORT


def broker_id(service: str) -> int:
    """The broker id of a broker service (`broker2` -> 2; compose sets BROKER_ID so)."""
    found = _SERVICE.match(service)
    if found is None or found.group(1) != "broker":
        raise UnknownTarget(f"{service!r} is not a broker")
    return int(found.group(2))


def of_role(services: Iterable[str], wanted: str) -> tuple[str, ...]:
    """The services of one role, in the given order."""
    return tuple(s for s in services if role(s) == wanted)


def running_services(cluster: FaultTarget) -> list[str]:
    """The project's services whose containers are running now."""
    return [s for s in cluster.services() if cluster.status(s) == "running"]


def addresses(cluster: FaultTarget, services: Iterable[str]) -> dict[str, str]:
    """Each of `services` by its address, but for those with none (a stopped container
    has none, and holds no connection)."""
    found = {}
    for service in services:
        try:
            found[service] = cluster.ip(service)
        except FaultFailed:
            continue
    return found


def running_netns(cluster: FaultTarget, service: str) -> Netns:
    """The namespace of a service that must be running for the fault to act on it."""
    netns = netns_of(cluster, service)
    if netns is None:
        raise UnknownTarget(f"{service} is not running ({cluster.status(service)})")
    return netns


def apply_grudge(cluster: FaultTarget, fault_id: str, grudge: Grudge) -> None:
    """Add the grudge's drop rules to each dropping service, tagged with the fault id.
    A service another fault stopped has no address and no namespace: the grudge is laid
    among the services that run (one that starts again meanwhile is not cut)."""
    ips = addresses(cluster, {node for dst, srcs in grudge.items() for node in (dst, *srcs)})
    present = {dst: srcs & ips.keys() for dst, srcs in grudge.items() if dst in ips}
    for dst, rules in drop_rules(present, ips).items():
        try:
            netns = running_netns(cluster, dst)
        except UnknownTarget:  # stopped by another fault since its address was read
            continue
        netns.add_rules(fault_id, rules)


def measure_links(
    cluster: FaultTarget,
    grudge: Grudge,
    services: Sequence[str],
    timeout_s: float = CONNECT_TIMEOUT_S,
) -> Check:
    """Connect over every ordered pair of `services`: the pairs the grudge cuts must go
    unanswered (the connect times out), every other pair must answer: connect, or be
    refused by a peer that is not listening yet (a restarting broker), which proves the
    packets pass."""
    ips = {s: cluster.ip(s) for s in services}
    spaces = {s: running_netns(cluster, s) for s in services}
    wanted = {spaces[a]: [(ips[b], port(b)) for b in services if b != a] for a in services}
    seen = connects(wanted, timeout_s)
    wrong: list[str] = []
    blocked = allowed = 0
    for a in services:
        for b in services:
            if a == b:
                continue
            connected, took, err = seen[spaces[a]][(ips[b], port(b))]
            answered = connected or err == REFUSED
            if cut(grudge, a, b):
                blocked += 1
                if answered:
                    wrong.append(f"{a}->{b} answered in {took * 1000:.0f} ms but is cut")
            else:
                allowed += 1
                if not answered:
                    wrong.append(f"{a}->{b} failed ({err}, {took:.1f} s) but is allowed")
    detail = f"{blocked} cut links went unanswered, {allowed} allowed links answered"
    return Check(not wrong, "; ".join(wrong) if wrong else detail)

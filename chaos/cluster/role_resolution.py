"""Resolving target roles (`chaos.cluster.roles` parses them; `controller`, `zk-leader`,
`leader:orders:0`, ...) to compose services against what the
cluster looks like now (`ClusterFacts`). Seeded picks use the caller's `random.Random`
over sorted candidates, so a seed resolves the same way against the same cluster.

The roles that pick brokers by what they do (`non-controller`, `random-broker`,
`busiest-leader`) and the groups (`all-brokers`, `non-controllers`) name only brokers
whose container runs: a fault aimed at a broker another fault has killed, stopped or
paused would do nothing, or fail to start where it must act inside the container.
`controller`, `broker:<id>`, `brokers:...`, `non-controller:<n>` and
`leader:<topic>:<partition>` name their broker whatever its state: a schedule that uses
them means that one.

Pure apart from the facts it asks for; runs on the caller's thread.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Protocol

from chaos.errors import NoTargetNow, UnknownTarget

#: Every role, with what it resolves to.
ROLES: Mapping[str, str] = {
    "controller": "the broker that holds /controller",
    "non-controller": "a seeded pick among the running brokers that are not the controller",
    "non-controller:<n>": "the n-th broker by id that is not the controller",
    "broker:<id>": "the broker with that id",
    "brokers:<id>,<id>": "the brokers with those ids",
    "random-broker": "a seeded pick among the running brokers",
    "busiest-leader": "the running broker that leads the most partitions (lowest id on a tie)",
    "leader:<topic>:<partition>": "the leader of that partition",
    "all-brokers": "every running broker",
    "non-controllers": "every running broker that is not the controller",
    "zk-leader": "the ZooKeeper server in mode leader",
    "zk-follower": "a seeded pick among the ZooKeeper followers",
    "zk-followers": "every ZooKeeper follower",
    "all": "every service of the project",
    "zk:<n>": "the ZooKeeper server with myid n",
}


class ClusterFacts(Protocol):
    """What role resolution reads from the cluster (`chaos.cluster.handle.ClusterHandle`)."""

    def services(self) -> tuple[str, ...]:
        """Every service of the project, sorted."""
        ...

    def brokers(self) -> Mapping[int, str]:
        """Broker id -> service."""
        ...

    def zk_servers(self) -> Mapping[int, str]:
        """ZooKeeper myid -> service."""
        ...

    def controller_id(self) -> int | None:
        """The broker that holds `/controller`, or None."""
        ...

    def partition_leader(self, topic: str, partition: int) -> int | None:
        """The partition's leader (None when it has none); `UnknownTarget` when the
        partition has no state."""
        ...

    def leader_counts(self) -> Mapping[int, int]:
        """Broker id -> how many partitions it leads (every broker, zero included)."""
        ...

    def zk_mode(self, service: str) -> str:
        """A ZooKeeper server's mode (`leader`, `follower`, ...)."""
        ...

    def status(self, service: str) -> str:
        """The service's container state: `running`, `paused`, `exited`, ..."""
        ...


def resolve(role: str, facts: ClusterFacts, rng: random.Random) -> tuple[str, ...]:
    """The services `role` names now; `UnknownTarget` for an unknown role, or a role that
    names nobody (no controller, no such broker, a partition without a leader)."""
    name, _, arg = role.partition(":")
    match name:
        case "non-controller" if arg:
            return (_nth_non_controller(_number(arg, role), facts),)
        case "controller" | "non-controller" | "random-broker" | "busiest-leader":
            return _broker_role(name, facts, rng)
        case "all-brokers":
            return tuple(sorted(_running(facts, "all-brokers").values()))
        case "non-controllers":
            return _non_controllers(facts)
        case "all":
            return facts.services()
        case "broker" if arg:
            return (_by_id(facts.brokers(), _number(arg, role), "broker"),)
        case "brokers" if arg:
            ids = sorted({_number(part, role) for part in arg.split(",")})
            return tuple(_by_id(facts.brokers(), i, "broker") for i in ids)
        case "zk" if arg:
            return (_by_id(facts.zk_servers(), _number(arg, role), "ZooKeeper server"),)
        case "leader" if arg:
            return (_partition_leader(arg, role, facts),)
        case "zk-leader" | "zk-follower" | "zk-followers":
            return _zk_role(name, facts, rng)
    raise UnknownTarget(f"unknown role {role!r}; roles: {', '.join(ROLES)}")


def _running(facts: ClusterFacts, role: str) -> Mapping[int, str]:
    """Broker id -> service of the brokers whose container runs; `UnknownTarget` if none."""
    brokers = _need(facts.brokers(), "brokers")
    running = {i: s for i, s in brokers.items() if facts.status(s) == "running"}
    if not running:
        raise NoTargetNow(f"role {role!r}: no broker of the project runs now")
    return running


def _broker_role(name: str, facts: ClusterFacts, rng: random.Random) -> tuple[str, ...]:
    if name == "controller":
        brokers = _need(facts.brokers(), "brokers")
        controller = facts.controller_id()
        if controller is None or controller not in brokers:
            raise NoTargetNow(
                f"role 'controller': no broker of the project is controller now "
                f"(/controller names {controller})"
            )
        return (brokers[controller],)
    brokers = _running(facts, name)
    ids = sorted(brokers)
    if name == "random-broker":
        return (brokers[rng.choice(ids)],)
    if name == "busiest-leader":
        counts = facts.leader_counts()
        return (brokers[max(ids, key=lambda i: (counts.get(i, 0), -i))],)
    controller = facts.controller_id()
    others = [i for i in ids if i != controller]
    if not others:
        raise NoTargetNow("role 'non-controller': no running broker but the controller")
    return (brokers[rng.choice(others)],)


def _non_controllers(facts: ClusterFacts) -> tuple[str, ...]:
    """Every running broker that is not the controller, by id."""
    brokers = _running(facts, "non-controllers")
    controller = facts.controller_id()
    others = tuple(brokers[i] for i in sorted(brokers) if i != controller)
    if not others:
        raise NoTargetNow("role 'non-controllers': no running broker but the controller")
    return others


def _nth_non_controller(n: int, facts: ClusterFacts) -> str:
    """The `n`-th (from 1) broker by id that is not the controller, dead or alive: a
    schedule that kills two of them in turn names them `non-controller:1` and `:2`."""
    brokers = _need(facts.brokers(), "brokers")
    controller = facts.controller_id()
    others = [i for i in sorted(brokers) if i != controller]
    if not 1 <= n <= len(others):
        raise UnknownTarget(
            f"role 'non-controller:{n}': there are {len(others)} brokers besides the controller"
        )
    return brokers[others[n - 1]]


def _zk_role(name: str, facts: ClusterFacts, rng: random.Random) -> tuple[str, ...]:
    servers = sorted(_need(facts.zk_servers(), "ZooKeeper servers").values())
    modes = {server: facts.zk_mode(server) for server in servers}
    wanted = "leader" if name == "zk-leader" else "follower"
    found = [server for server in servers if modes[server] == wanted]
    if not found:
        raise NoTargetNow(f"role {name!r}: no ZooKeeper server is {wanted} now: {modes}")
    if name == "zk-followers":
        return tuple(found)
    return (found[0],) if wanted == "leader" else (rng.choice(found),)


def _partition_leader(arg: str, role: str, facts: ClusterFacts) -> str:
    topic, _, partition = arg.rpartition(":")
    if not topic:
        raise UnknownTarget(f"role {role!r}: expected leader:<topic>:<partition>")
    leader = facts.partition_leader(topic, _number(partition, role))
    if leader is None:
        raise UnknownTarget(f"role {role!r}: the partition has no leader now")
    return _by_id(facts.brokers(), leader, "broker")


def _by_id(members: Mapping[int, str], member_id: int, what: str) -> str:
    try:
        return members[member_id]
    except KeyError:
        have = ", ".join(map(str, sorted(members))) or "none"
        raise UnknownTarget(f"no {what} with id {member_id} (the project has {have})") from None


def _number(text: str, role: str) -> int:
    if not text.isdigit():
        raise UnknownTarget(f"role {role!r}: {text!r} is not a non-negative integer")
    return int(text)


def _need(members: Mapping[int, str], what: str) -> Mapping[int, str]:
    if not members:
        raise UnknownTarget(f"the project has no {what}")
    return members

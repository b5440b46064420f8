"""The `vacate` action: move every replica off one broker, as an operator does before
retiring it (`kafka-reassign-partitions.sh --generate --broker-list` without the broker,
then `--execute`), so that the broker stays registered and hosts nothing.

`vacated_assignment` is the pure decision: each replica on the broker is replaced by the
live broker not already among the partition's replicas that holds the fewest replicas of
the topic so far (ties by id), and dropped when every live broker holds one already (a
topic of three replicas on three brokers keeps two). `vacate` resolves the broker
(`broker:<id>`, or `non-controller:<n>`: the n-th registered broker by id that is not
the controller), waits up to `WAIT_S` for a running reassignment to end, and writes one
`/admin/reassign_partitions` for the partitions of every topic not queued for deletion
(Kafka's controller refuses to reassign those) that have a replica on it. Runs on the
caller's thread (the runner's action step); raises what the ZooKeeper reads and
writes raise, `ValueError` for a role that is not a broker's, and `NoTargetNow` for a
broker that is not registered now (other faults took it away).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence

from chaos.errors import NoTargetNow
from chaos.generator.action_kinds import VACATED_BROKER
from domain import TopicPartition
from harness.waiting import wait_until
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.model import PartitionReassignment
from zkdata.reassignment import ReassignmentZk

__all__ = ["WAIT_S", "resolve_broker", "vacate", "vacated_assignment"]

#: How long a running reassignment may hold the action up.
WAIT_S = 10.0
_POLL_S = 0.2


def vacated_assignment(
    assignment: Mapping[int, Sequence[int]], broker: int, live: Sequence[int]
) -> dict[int, tuple[int, ...]]:
    """The partitions of one topic that have a replica on `broker`, each with that
    replica replaced (or dropped, when no live broker is left to take it). Pure."""
    load = Counter(b for replicas in assignment.values() for b in replicas)
    moved: dict[int, tuple[int, ...]] = {}
    for p in sorted(assignment):
        replicas = tuple(assignment[p])
        if broker not in replicas:
            continue
        free = [b for b in sorted(live) if b != broker and b not in replicas]
        if not free:
            moved[p] = tuple(b for b in replicas if b != broker)
            continue
        taker = min(free, key=lambda b: (load[b], b))
        load[taker] += 1
        moved[p] = tuple(taker if b == broker else b for b in replicas)
    return moved


def resolve_broker(role: str, live: Sequence[int], controller: int | None) -> int:
    """The broker id `role` names among the registered brokers `live`."""
    found = VACATED_BROKER.fullmatch(role)
    if found is None:
        raise ValueError(f"vacate: broker must be broker:<id> or non-controller:<n>, not {role!r}")
    if found.group(1) is not None:
        broker = int(found.group(1))
        if broker not in live:
            raise NoTargetNow(f"vacate: broker {broker} is not registered")
        return broker
    others = [b for b in sorted(live) if b != controller]
    n = int(found.group(2))
    if n > len(others):
        raise NoTargetNow(
            f"vacate: {role}: {len(others)} registered brokers besides the controller"
        )
    return others[n - 1]


def vacate(zk: KafkaZkClient, role: str, wait_s: float = WAIT_S) -> str:
    """Reassign every replica off the broker `role` names; a one-line description."""
    live = sorted(zk.get_all_brokers().brokers)
    broker = resolve_broker(role, live, zk.get_controller_id())
    deleting = set(TopicDeletionZk(zk).get_topic_deletions())
    topics = sorted(zk.get_all_topics() - deleting)
    found = zk.get_topic_assignments(topics).found
    requests: list[PartitionReassignment] = []
    for topic in topics:
        if topic not in found:
            continue
        current = {p: a.replicas for p, a in found[topic].partitions.items()}
        for p, replicas in sorted(vacated_assignment(current, broker, live).items()):
            requests.append(PartitionReassignment(TopicPartition(topic, p), replicas))
    if not requests:
        return f"vacate broker {broker}: it hosts no replica"
    _wait_for_no_reassignment(zk, wait_s)
    ReassignmentZk(zk).create_reassignments(requests)
    return f"vacate broker {broker}: {len(requests)} partitions of " + ", ".join(
        sorted({r.topic_partition.topic for r in requests})
    )


def _wait_for_no_reassignment(zk: KafkaZkClient, wait_s: float) -> None:
    """Until no reassignment runs, for `wait_s` at most: past it, `create_reassignments`
    names the running one."""
    with contextlib.suppress(TimeoutError):
        wait_until(
            lambda: zk.kazoo.retry(zk.kazoo.exists, paths.REASSIGN_PARTITIONS) is None,
            wait_s,
            "a reassignment is still running",
            interval=_POLL_S,
        )

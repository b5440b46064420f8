"""The admin operations a schedule performs besides faults (`chaos.kinds.ACTION_KINDS`).

`reassign(topic, shift)`: move every replica on the i-th of the sorted live broker ids to
the (i + shift)-th, through `/admin/reassign_partitions`, as
`kafka-reassign-partitions.sh --execute --zookeeper` would. `shifted_assignment` is the
pure decision; `perform` does the ZooKeeper write on the caller's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from chaos.schedule import Action
from zkdata.client import KafkaZkClient
from zkdata.model import PartitionReassignment, TopicPartition
from zkdata.reassignment import ReassignmentZk


class ActionFailed(Exception):
    """An action could not be performed (unknown topic, a reassignment already running)."""


def shifted_assignment(
    assignment: Mapping[int, Sequence[int]], live: Sequence[int], shift: int
) -> dict[int, tuple[int, ...]]:
    """Each partition's replicas with broker `live[i]` replaced by `live[(i + shift) % n]`
    (replicas on brokers that are not live stay). Pure."""
    ids = sorted(live)
    moved = {b: ids[(i + shift) % len(ids)] for i, b in enumerate(ids)} if ids else {}
    return {p: tuple(moved.get(b, b) for b in replicas) for p, replicas in assignment.items()}


def perform(
    action: Action,
    read_zk: Callable[[Callable[[KafkaZkClient], str]], str],
    topic_names: Mapping[str, str],
) -> str:
    """Perform `action` through `read_zk` (a ZooKeeper session runner, e.g.
    `ClusterHandle.read_zk`); `topic_names` maps a scenario's topic name to this run's.
    Returns a one-line description; raises `ActionFailed`."""
    if action.kind != "reassign":
        raise ActionFailed(f"unknown action {action.kind!r}")
    scenario_topic = str(action.param("topic"))
    topic = topic_names.get(scenario_topic, scenario_topic)
    shift = action.param("shift")
    if not isinstance(shift, int):
        raise ActionFailed(f"reassign: shift must be an integer, got {shift!r}")

    def reassign(zk: KafkaZkClient) -> str:
        found = zk.get_topic_assignments([topic]).found.get(topic)
        if found is None:
            raise ActionFailed(f"reassign: topic {topic} does not exist")
        live = sorted(zk.get_all_brokers().brokers)
        current = {p: a.replicas for p, a in found.partitions.items()}
        target = shifted_assignment(current, live, shift)
        requests = [
            PartitionReassignment(TopicPartition(topic, p), replicas)
            for p, replicas in sorted(target.items())
        ]
        try:
            ReassignmentZk(zk).create_reassignments(requests)
        except Exception as exc:  # a running reassignment, a lost session: the action failed
            raise ActionFailed(f"reassign {topic}: {exc}") from exc
        return f"reassign {topic}: " + ", ".join(
            f"p{p} {list(current[p])}->{list(r)}" for p, r in sorted(target.items())
        )

    return read_zk(reassign)

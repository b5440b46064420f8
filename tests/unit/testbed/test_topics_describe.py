"""`testbed topics describe` rendering: Kafka's layout, with the adding and removing
replicas of a partition being reassigned and the offline replicas."""

from __future__ import annotations

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from testbed.topics import PartitionDescription, render_description


def state(leader: int, isr: tuple[int, ...]) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 3, isr), 1)


def test_a_partition_being_reassigned_shows_what_is_added_and_removed() -> None:
    moving = PartitionDescription(
        TopicPartition("t", 0),
        (2, 3, 1),
        state(1, (1, 2)),
        adding_replicas=(3,),
        removing_replicas=(1,),
    )
    settled = PartitionDescription(TopicPartition("t", 1), (2, 1), state(2, (2, 1)))
    text = render_description({"t": [moving, settled]}, live={1, 2})
    assert text.splitlines() == [
        "Topic: t\tPartitionCount: 2\tReplicationFactor: 3",
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 2,3,1\tIsr: 1,2"
        "\tAdding Replicas: 3\tRemoving Replicas: 1\tOffline: 3",
        "\tTopic: t\tPartition: 1\tLeader: 2\tReplicas: 2,1\tIsr: 2,1",
    ]


def test_a_partition_without_a_leadership_shows_none() -> None:
    text = render_description(
        {"t": [PartitionDescription(TopicPartition("t", 0), (1,), None)]}, live={1}
    )
    assert text.splitlines()[1] == "\tTopic: t\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: "

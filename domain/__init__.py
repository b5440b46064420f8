"""Domain values shared by the ZooKeeper layer, the wire formats, the controller, the broker
and the tools: `TopicPartition`, `EndPoint`, `LeaderAndIsr`,
`LeaderIsrAndControllerEpoch` and Kafka's sentinel numbers (`NO_LEADER`, `NO_EPOCH`,
`EPOCH_DURING_DELETE`, `UNKNOWN_BROKER_EPOCH`). `domain.profiles` names the broker's timing
profiles (`kafka`, `fast`) and resolves a setting's effective value.

The lowest package: it imports nothing of the project, and every other package may import
it. Any thread."""

from domain.values import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    NO_LEADER,
    UNKNOWN_BROKER_EPOCH,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)

__all__ = [
    "EPOCH_DURING_DELETE",
    "NO_EPOCH",
    "NO_LEADER",
    "UNKNOWN_BROKER_EPOCH",
    "EndPoint",
    "LeaderAndIsr",
    "LeaderIsrAndControllerEpoch",
    "TopicPartition",
]

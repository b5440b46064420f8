"""Admin rules that the controller, the command line, the chaos workload and the benchmarks
share: topic names (`topic_names`), Kafka's replica assignment (`replica_assignment`), the
racks it may use (`racks`), reassignment targets and proposals (`reassignment`), leader
imbalance (`leader_imbalance`), and their errors (`errors`).

Every function is pure (no I/O, logging or metrics) and may run on any thread. Nothing here
imports the controller, the broker or a tool.
"""

from admin.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
)
from admin.leader_imbalance import imbalance_ratios
from admin.racks import RackAwareMode, broker_racks, rack_alternated_brokers
from admin.reassignment import (
    current_replicas,
    propose_assignment,
    reassignment_problems,
    target_error,
)
from admin.replica_assignment import (
    assign_replicas_to_brokers,
    validate_partition_replicas,
    validate_replica_assignment,
)
from admin.topic_names import (
    MAX_TOPIC_NAME_LENGTH,
    colliding_candidates,
    colliding_topics,
    collision_message,
    has_collision,
    refused_topics,
    validate_topic_creation,
    validate_topic_name,
)

__all__ = [
    "MAX_TOPIC_NAME_LENGTH",
    "AdminOperationError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidTopicError",
    "RackAwareMode",
    "assign_replicas_to_brokers",
    "broker_racks",
    "colliding_candidates",
    "colliding_topics",
    "collision_message",
    "current_replicas",
    "has_collision",
    "imbalance_ratios",
    "propose_assignment",
    "rack_alternated_brokers",
    "reassignment_problems",
    "refused_topics",
    "target_error",
    "validate_partition_replicas",
    "validate_replica_assignment",
    "validate_topic_creation",
    "validate_topic_name",
]

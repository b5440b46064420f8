"""Admin rules and operations that the controller, the command line, the chaos workload and
the benchmarks share: topic names (`topic_names`), Kafka's replica assignment
(`replica_assignment`), the racks it may use (`racks`), reassignment targets and proposals
(`reassignment`), leader imbalance (`leader_imbalance`), topic creation, deletion and
partition addition through ZooKeeper (`topics`), and their errors (`errors`).

The rules are pure (no I/O, logging or metrics) and may run on any thread; the operations
of `topics` block the calling thread on its ZooKeeper session. Nothing here imports the
controller, the broker or a tool.

Errors, each with a message phrased like Kafka's:

    ValueError
    └── AdminError                          the root
        ├── InvalidTopicError               Kafka's InvalidTopicException
        ├── InvalidPartitionsError          Kafka's InvalidPartitionsException
        ├── InvalidReplicationFactorError   Kafka's InvalidReplicationFactorException
        ├── InvalidReplicaAssignmentError   Kafka's InvalidReplicaAssignmentException
        ├── AdminOperationError             Kafka's AdminOperationException (racks known
        │                                   for only some brokers)
        ├── TopicExistsError                Kafka's TopicExistsException
        ├── InvalidTopicConfigError         Kafka's InvalidConfigurationException
        └── TopicOperationError             the topic is missing, marked for deletion,
            │                               being reassigned or changed meanwhile
            └── ReassignmentInProgressError its reassignment is still in progress
"""

from admin.errors import (
    AdminError,
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicConfigError,
    InvalidTopicError,
    ReassignmentInProgressError,
    TopicExistsError,
    TopicOperationError,
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
    "AdminError",
    "AdminOperationError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidTopicConfigError",
    "InvalidTopicError",
    "RackAwareMode",
    "ReassignmentInProgressError",
    "TopicExistsError",
    "TopicOperationError",
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

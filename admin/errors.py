"""The errors of the admin rules, each carrying a message phrased like Kafka's.

    ValueError
    ├── InvalidTopicError               Kafka's InvalidTopicException
    ├── InvalidPartitionsError          Kafka's InvalidPartitionsException
    ├── InvalidReplicationFactorError   Kafka's InvalidReplicationFactorException
    ├── InvalidReplicaAssignmentError   Kafka's InvalidReplicaAssignmentException
    └── AdminOperationError             Kafka's AdminOperationException (racks known for
                                        only some brokers)

They derive from `ValueError` so that a command line can report any of them as bad input.
"""

from __future__ import annotations

__all__ = [
    "AdminOperationError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidTopicError",
]


class InvalidTopicError(ValueError):
    """The topic name breaks Kafka's naming rules."""


class InvalidPartitionsError(ValueError):
    """The number of partitions is not positive."""


class InvalidReplicationFactorError(ValueError):
    """The replication factor is not positive or exceeds the available brokers."""


class InvalidReplicaAssignmentError(ValueError):
    """An explicit replica assignment is malformed or names unknown brokers."""


class AdminOperationError(ValueError):
    """The brokers' rack information does not allow the requested assignment."""

"""The errors of the admin rules and topic operations, each carrying a message phrased like
Kafka's; the tree is drawn in the package docstring. The root derives from `ValueError` so
that a command line can report any of them as bad input. Any thread.
"""

from __future__ import annotations

__all__ = [
    "AdminError",
    "AdminOperationError",
    "InvalidPartitionsError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidTopicConfigError",
    "InvalidTopicError",
    "ReassignmentInProgressError",
    "TopicExistsError",
    "TopicOperationError",
]


class AdminError(ValueError):
    """The root of every error the admin rules and topic operations raise."""


class InvalidTopicError(AdminError):
    """The topic name breaks Kafka's naming rules."""


class InvalidPartitionsError(AdminError):
    """The number of partitions is not positive."""


class InvalidReplicationFactorError(AdminError):
    """The replication factor is not positive or exceeds the available brokers."""


class InvalidReplicaAssignmentError(AdminError):
    """An explicit replica assignment is malformed or names unknown brokers."""


class AdminOperationError(AdminError):
    """The brokers' rack information does not allow the requested assignment."""


class TopicExistsError(AdminError):
    """The topic to create exists (Kafka's TopicExistsException)."""


class InvalidTopicConfigError(AdminError):
    """A new topic's config names an unknown key or a value Kafka would refuse (Kafka's
    InvalidConfigurationException)."""


class TopicOperationError(AdminError):
    """A topic operation that cannot be carried out on the topic as it stands: it does not
    exist, is marked for deletion, is being reassigned or changed during the operation."""


class ReassignmentInProgressError(TopicOperationError):
    """The topic has a partition reassignment in progress, which the operation must wait
    for (partitions are not added to a topic being reassigned)."""

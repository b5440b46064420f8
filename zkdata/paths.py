"""Every ZooKeeper path the testbed uses, laid out as Kafka 2.x lays them out.

No other module spells a path: callers ask this module.  Pure functions, any thread.
"""

from __future__ import annotations

ROOT = "/"
BROKERS = "/brokers"
BROKER_IDS = "/brokers/ids"
BROKER_TOPICS = "/brokers/topics"
BROKER_SEQID = "/brokers/seqid"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
ADMIN = "/admin"
DELETE_TOPICS = "/admin/delete_topics"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"
ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENT_NOTIFICATION = "/log_dir_event_notification"
LOG_DIR_EVENT_PREFIX = "log_dir_event_"
CONFIG = "/config"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CONFIG_USERS = "/config/users"
DELEGATION_TOKEN = "/delegation_token"
CONSUMERS = "/consumers"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = "config_change_"

#: Persistent paths a broker creates at start-up (Kafka's `ZkData.PersistentZkPaths`).
PERSISTENT_PATHS: tuple[str, ...] = (
    CONSUMERS,
    BROKER_IDS,
    BROKER_TOPICS,
    BROKER_SEQID,
    DELETE_TOPICS,
    ISR_CHANGE_NOTIFICATION,
    LOG_DIR_EVENT_NOTIFICATION,
    CONFIG_TOPICS,
    CONFIG_BROKERS,
    CONFIG_CHANGES,
)


def broker_id(broker: int) -> str:
    """`/brokers/ids/N`: the ephemeral registration of broker N."""
    return f"{BROKER_IDS}/{broker}"


def broker_id_child(child: str) -> str:
    """`/brokers/ids/<child>` for a raw child name (which may not be an integer)."""
    return f"{BROKER_IDS}/{child}"


def topic(name: str) -> str:
    """`/brokers/topics/T`: the topic's replica assignment."""
    return f"{BROKER_TOPICS}/{name}"


def topic_partitions(name: str) -> str:
    """`/brokers/topics/T/partitions`."""
    return f"{topic(name)}/partitions"


def topic_partition(name: str, partition: int) -> str:
    """`/brokers/topics/T/partitions/P`."""
    return f"{topic_partitions(name)}/{partition}"


def partition_state(name: str, partition: int) -> str:
    """`/brokers/topics/T/partitions/P/state`: leader, ISR and epochs (one format, not
    three calls: the controller names 100,000 of them in a failover)."""
    return f"{BROKER_TOPICS}/{name}/partitions/{partition}/state"


def delete_topic(name: str) -> str:
    """`/admin/delete_topics/T`: a request to delete topic T."""
    return f"{DELETE_TOPICS}/{name}"


def topic_config(name: str) -> str:
    """`/config/topics/T`: per-topic configuration overrides."""
    return f"{CONFIG_TOPICS}/{name}"


def isr_change_notification(sequence_node: str) -> str:
    """`/isr_change_notification/isr_change_<seq>` for a child name."""
    return f"{ISR_CHANGE_NOTIFICATION}/{sequence_node}"


def isr_change_prefix() -> str:
    """Prefix for creating a sequential ISR change notification."""
    return f"{ISR_CHANGE_NOTIFICATION}/{ISR_CHANGE_PREFIX}"


def log_dir_event_notification(sequence_node: str) -> str:
    """`/log_dir_event_notification/log_dir_event_<seq>` for a child name."""
    return f"{LOG_DIR_EVENT_NOTIFICATION}/{sequence_node}"


def log_dir_event_prefix() -> str:
    """Prefix for creating a sequential log-directory event notification."""
    return f"{LOG_DIR_EVENT_NOTIFICATION}/{LOG_DIR_EVENT_PREFIX}"


def config_change_notification(sequence_node: str) -> str:
    """`/config/changes/config_change_<seq>` for a child name."""
    return f"{CONFIG_CHANGES}/{sequence_node}"


def config_change_prefix() -> str:
    """Prefix for creating a sequential config change notification."""
    return f"{CONFIG_CHANGES}/{CONFIG_CHANGE_PREFIX}"


def split_chroot(connect: str) -> tuple[str, str]:
    """Split `host:port,host:port/chroot` into the host list and the chroot ('' if none)."""
    slash = connect.find("/")
    if slash < 0:
        return connect, ""
    chroot = connect[slash:].rstrip("/")
    return connect[:slash], chroot

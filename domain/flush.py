"""The brokers' flush policy (Kafka's `log.flush.interval.messages`,
`--log-flush-interval-messages`, `LOG_FLUSH_INTERVAL_MESSAGES`): after how many appended
messages a replica fsyncs its log. Kafka's default, Long.MAX_VALUE, never does: the
operating system flushes and replication keeps the data, so a power loss of a majority of
replicas can lose acknowledged writes. With 1, every append is fsynced before it counts.
The broker (`broker_node.config`) and the tools that start, record and judge runs read it
here. Pure values; any thread.
"""

from __future__ import annotations

FLUSH_INTERVAL_FLAG = "--log-flush-interval-messages"
#: The interval that never flushes (Kafka's Long.MAX_VALUE, its default).
NEVER_FLUSH = 2**63 - 1
#: The broker setting's name in a run's `config.json` (`broker_settings`).
FLUSH_INTERVAL_SETTING = FLUSH_INTERVAL_FLAG.lstrip("-")


def flush_interval(raw: str | None) -> int:
    """The interval a broker runs with, from its environment's value (unset or blank: the
    default); ValueError when it is no integer in [1, NEVER_FLUSH]."""
    if raw is None or not raw.strip():
        return NEVER_FLUSH
    value = int(raw.strip())
    if not 1 <= value <= NEVER_FLUSH:
        raise ValueError(f"{FLUSH_INTERVAL_FLAG} must be in [1, {NEVER_FLUSH}], got {value}")
    return value


def flushes_every_message(interval: int | None) -> bool:
    """Whether no acknowledged write waits for the operating system to reach the disk."""
    return interval == 1

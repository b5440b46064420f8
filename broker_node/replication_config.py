"""`ReplicationConfig`: the broker-wide settings its replica manager, the partitions' logs,
the replica fetchers and the ISR threads follow; `replication_config` derives them from the
process's `BrokerConfig`. Frozen values, built on the main thread as the broker starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from broker_node.alter_isr_manager import AlterIsrManager
from broker_node.config import BrokerConfig
from broker_node.fetch_session import DEFAULT_EVICTION_S, DEFAULT_MAX_SESSIONS
from bugs import NO_BUGS, BugSwitches
from rpc.wire import ChannelIdentity

#: The ISR change check runs at least this often (Kafka's `ZkIsrManager`: every 2500 ms).
ISR_CHANGE_CHECK_MAX_MS = 2_500


@dataclass(frozen=True, slots=True)
class ReplicationConfig:
    """Broker-wide replication settings."""

    data_dir: Path
    lag_time_max_ms: int = 10_000
    min_insync_replicas: int = 1
    #: Kafka's `log.flush.interval.messages` (a topic's `flush.messages` overrides it);
    #: None: never.
    flush_interval_messages: int | None = None
    isr_change_check_ms: int = ISR_CHANGE_CHECK_MAX_MS
    isr_change_blackout_ms: int = 5_000
    isr_change_max_delay_ms: int = 60_000
    fetch_max_wait_ms: int = 500
    #: Incremental fetch sessions (KIP-227) this broker keeps as a leader, and how long
    #: one stays idle before a new one may take its slot (Kafka's defaults).
    fetch_session_slots: int = DEFAULT_MAX_SESSIONS
    fetch_session_eviction_s: float = DEFAULT_EVICTION_S
    #: Kafka's `replica.high.watermark.checkpoint.interval.ms`: a log writes a rising high
    #: watermark to its `hw-checkpoint` at most this often.
    hw_checkpoint_interval_ms: int = 5_000
    #: Historical bugs the data plane re-introduces (`bugs/`); none by default.
    bug_switches: BugSwitches = NO_BUGS
    #: The broker's TLS identity for its fetchers' channels to leaders; None: plaintext.
    tls: ChannelIdentity | None = None
    #: Where leaders send ISR changes at IBP 2.7; None (2.6): they write them to ZooKeeper.
    alter_isr: AlterIsrManager | None = None


def replication_config(
    cfg: BrokerConfig, tls: ChannelIdentity | None, alter_isr: AlterIsrManager | None
) -> ReplicationConfig:
    """The replication settings of a broker configured by `cfg`; the ISR change check runs
    every half blackout, between 100 ms and `ISR_CHANGE_CHECK_MAX_MS`."""
    return ReplicationConfig(
        data_dir=cfg.log_dir,
        lag_time_max_ms=cfg.replica_lag_time_max_ms,
        min_insync_replicas=cfg.min_insync_replicas,
        flush_interval_messages=cfg.log_flush_interval_messages,
        isr_change_check_ms=min(ISR_CHANGE_CHECK_MAX_MS, max(100, cfg.isr_change_blackout_ms // 2)),
        isr_change_blackout_ms=cfg.isr_change_blackout_ms,
        fetch_session_slots=cfg.max_incremental_fetch_session_cache_slots,
        fetch_session_eviction_s=cfg.min_incremental_fetch_session_eviction_ms / 1000,
        hw_checkpoint_interval_ms=cfg.replica_high_watermark_checkpoint_interval_ms,
        bug_switches=cfg.bug_switches,
        tls=tls,
        alter_isr=alter_isr,
    )

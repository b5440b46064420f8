"""`replication_config`: the replication settings a broker's options give, among them
Kafka's `replica.high.watermark.checkpoint.interval.ms` (5000, the `fast` profile 1000),
which reaches every log the replica manager opens."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from broker_node.config import load_config
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig, replication_config
from broker_node.storage.checkpoints import HW_CHECKPOINT
from broker_node.testing import FakeIsrStore
from domain import TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m

BASE_ENV = {"BROKER_ID": "1", "ZK_CONNECT": "zk1:2181", "ADVERTISED_HOST": "broker1"}
FLAG = "--replica-high-watermark-checkpoint-interval-ms"
TP = TopicPartition("orders", 0)


@pytest.mark.parametrize(
    ("argv", "env", "interval_ms"),
    [
        pytest.param([], BASE_ENV, 5000, id="kafka-profile"),
        pytest.param(["--profile", "fast"], BASE_ENV, 1000, id="fast-profile"),
        pytest.param(
            [],
            {
                **BASE_ENV,
                "TESTBED_PROFILE": "fast",
                "REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS": "250",
            },
            250,
            id="environment-over-profile",
        ),
        pytest.param([FLAG, "0"], BASE_ENV, 0, id="flag"),
    ],
)
def test_the_hw_checkpoint_interval_comes_from_the_profile_unless_given(
    argv: list[str], env: dict[str, str], interval_ms: int
) -> None:
    config = load_config(argv, env)
    assert config.replica_high_watermark_checkpoint_interval_ms == interval_ms
    assert replication_config(config, None, None).hw_checkpoint_interval_ms == interval_ms


def test_the_other_settings_are_carried_over() -> None:
    config = load_config(
        ["--isr-change-blackout-ms", "600", "--replica-lag-time-max-ms", "700"],
        {**BASE_ENV, "DATA_DIR": "/data", "MIN_INSYNC_REPLICAS": "2"},
    )
    settings = replication_config(config, None, None)
    assert settings == ReplicationConfig(
        data_dir=Path("/data"),
        lag_time_max_ms=700,
        min_insync_replicas=2,
        isr_change_check_ms=300,
        isr_change_blackout_ms=600,
        hw_checkpoint_interval_ms=5000,
    )


@pytest.mark.parametrize(
    ("interval_ms", "written_after_s"), [(1000, 1.0), (5000, 5.0)], ids=["fast", "kafka"]
)
def test_the_replica_managers_logs_write_a_rising_hw_once_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interval_ms: int, written_after_s: float
) -> None:
    def no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
        return {}

    replicas = ReplicaManager(
        1,
        ReplicationConfig(data_dir=tmp_path, hw_checkpoint_interval_ms=interval_ms),
        FakeIsrStore(),
        RecordingEventLog("b1"),
        no_overrides,
    )
    state = m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 1, 1, 1, (1,), 0, (1,))
    assert replicas.become_leader_or_follower([state], []) == {}
    partition = replicas.partition(TP)
    assert partition is not None
    log = partition.log
    now = [100.0]
    monkeypatch.setattr(log._checkpoints, "_clock", lambda: now[0])
    log.append_as_leader([(b"k", b"v", 1)] * 3, 1)
    log.set_high_watermark(1)
    now[0] += written_after_s - 0.01
    log.set_high_watermark(2)
    assert (log.directory / HW_CHECKPOINT).read_text().strip() == "1"
    now[0] += 0.01
    log.set_high_watermark(3)
    assert (log.directory / HW_CHECKPOINT).read_text().strip() == "3"
    replicas.shutdown()

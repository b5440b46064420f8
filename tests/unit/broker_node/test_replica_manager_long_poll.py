"""`ReplicaManager.fetch` as a long poll of an incremental fetch session: woken by a
change, it reads again only the partitions that changed, and answers them.

Setup: broker 1 leads 50 partitions of topic "orders" (replicas 1, 2; ISR 1, 2), and
follower 2 holds a session of all of them at their log end, so that an incremental fetch
naming nothing waits.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from broker_node.partition import Partition
from broker_node.replica_manager import ReplicaManager, ReplicationConfig
from broker_node.testing import FakeIsrStore
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import TopicPartition

PARTITIONS = 50
TPS = [TopicPartition("orders", p) for p in range(PARTITIONS)]


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[ReplicaManager]:
    def no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
        return {}

    manager = ReplicaManager(
        1,
        ReplicationConfig(data_dir=tmp_path),
        FakeIsrStore(),
        RecordingEventLog("b1"),
        no_overrides,
    )
    states = [
        m.LeaderAndIsrPartitionState(tp.topic, tp.partition, 1, 1, 1, (1, 2), 0, (1, 2))
        for tp in TPS
    ]
    manager.become_leader_or_follower(states, [])
    yield manager
    manager.shutdown()


def _open_session(replicas: ReplicaManager) -> int:
    asks = tuple(m.FetchPartition(tp.topic, tp.partition, 0, 1) for tp in TPS)
    reply = replicas.fetch(m.FetchRequest(asks, 2, 0, session_epoch=m.INITIAL_EPOCH))
    assert reply.error is Errors.NONE
    assert len(reply.partitions) == PARTITIONS
    return reply.session_id


def test_a_woken_session_fetch_reads_only_the_partition_that_changed(
    replicas: ReplicaManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = _open_session(replicas)
    reads: list[TopicPartition] = []
    lock = threading.Lock()
    original = Partition.read_if_changed

    def counted(self: Partition, *args: object, **kwargs: object) -> object:
        with lock:
            reads.append(self.tp)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Partition, "read_if_changed", counted)
    waiting = m.FetchRequest((), 2, 10_000, session_id=session_id, session_epoch=1)
    with ThreadPoolExecutor(1) as pool:
        reply = pool.submit(replicas.fetch, waiting)
        wait_until(lambda: len(reads) >= PARTITIONS, 10, "the fetch never read its session")
        assert not reply.done()  # nothing changed: it waits
        record = (m.ProducedRecord(None, b"v"),)
        produced = replicas.produce(m.ProduceRequest("orders", 7, record, acks=1)).result(10)
        assert produced.error is Errors.NONE
        answer = reply.result(10)
    assert [p.topic_partition for p in answer.partitions] == [TPS[7]]
    assert answer.partitions[0].has_records
    assert reads[:PARTITIONS] == TPS  # the first pass reads the whole session
    assert reads[PARTITIONS:] == [TPS[7]]  # woken, it reads only what changed

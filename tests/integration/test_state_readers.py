"""Partition states read by helper processes (`zkdata.state_readers`) against the real
ensemble: the same states, malformed znodes and kept unknown fields as one process's read;
a helper that cannot connect leaves its share to the caller; a controller loading its
context with a helper after a failover elects the dead broker's partitions as usual.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from zkdata import paths, state_readers
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.state_readers import ReaderSettings, StateReaders

pytestmark = pytest.mark.integration

TOPICS = 3
PARTITIONS = 40  # of each topic
MALFORMED = TopicPartition("t1", 7)
MISSING = TopicPartition("t2", 39)
WITH_EXTRA = TopicPartition("t0", 3)


def _write_states(zk_client: KazooClient) -> list[TopicPartition]:
    """Every partition's state znode (leader and ISR vary with the partition), one of them
    garbage, one with a field this project does not know, one absent."""
    tps = [TopicPartition(f"t{t}", p) for t in range(TOPICS) for p in range(PARTITIONS)]
    tx = zk_client.transaction()
    for tp in tps:
        if tp == MISSING:
            continue
        body: dict[str, object] = {
            "controller_epoch": 2,
            "leader": tp.partition % 3 + 1,
            "version": 1,
            "leader_epoch": tp.partition,
            "isr": [tp.partition % 3 + 1, (tp.partition + 1) % 3 + 1],
        }
        if tp == WITH_EXTRA:
            body["leader_recovery_state"] = 0
        data = b"{not json" if tp == MALFORMED else json.dumps(body).encode()
        path = paths.partition_state(tp.topic, tp.partition)
        zk_client.ensure_path(path.rsplit("/", 1)[0])
        tx.create(path, data)
    tx.commit()
    return tps


def test_helpers_read_what_one_process_reads(
    zk_client: KazooClient, zk_connect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tps = _write_states(zk_client)
    monkeypatch.setattr(state_readers, "CHUNK", 25)  # 5 chunks for 2 helpers
    alone = KafkaZkClient(zk_client).get_partition_states(tps)
    readers = StateReaders(ReaderSettings(zk_connect, helpers=2, min_partitions=1))
    helped_client = KafkaZkClient(zk_client)

    helped = helped_client.get_partition_states(tps, readers)

    assert helped.found == alone.found
    assert len(helped.found) == len(tps) - 2
    assert MISSING not in helped.found
    assert MISSING not in helped.malformed
    assert list(helped.malformed) == [MALFORMED]
    assert helped.malformed[MALFORMED].path == paths.partition_state("t1", 7)
    assert readers.last.helpers_started == 2  # (whether they answered before the caller
    # read every chunk depends on the box: the next test makes them read)


def test_only_helpers_read_when_the_caller_does_not(
    zk_client: KazooClient, zk_connect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tps = _write_states(zk_client)
    monkeypatch.setattr(state_readers, "CHUNK", 25)
    zk = KafkaZkClient(zk_client)
    called: list[int] = []

    def read_here(chunk: list[TopicPartition]) -> object:
        called.append(len(chunk))
        raise AssertionError("the caller read although a helper was alive")

    readers = StateReaders(ReaderSettings(zk_connect, helpers=1, min_partitions=1))
    reads = readers.read(tps, read_here, caller_reads=False)  # type: ignore[arg-type]

    assert called == []
    assert readers.last.read_by_helpers == len(tps) - 1  # all but the missing one
    assert {tp: found[0] for tp, found in reads.found.items()} == zk.get_partition_states(tps).found
    # the unknown field travels back with its state, as the caller's own read keeps it
    assert reads.found[WITH_EXTRA][1] == (("leader_recovery_state", "0"),)


def test_a_helper_that_cannot_connect_leaves_its_share_to_the_caller(
    zk_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    tps = _write_states(zk_client)
    monkeypatch.setattr(state_readers, "CHUNK", 25)
    # nothing listens on port 1: the helper gives up after its (short) session timeout
    unreachable = ReaderSettings("127.0.0.1:1", session_timeout_s=0.5, helpers=1, min_partitions=1)
    readers = StateReaders(unreachable)

    reads = KafkaZkClient(zk_client).get_partition_states(tps, readers)

    assert len(reads.found) == len(tps) - 2
    assert list(reads.malformed) == [MALFORMED]
    assert readers.last.read_by_helpers == 0
    assert readers.last.helpers_started == 1


def test_below_the_threshold_no_helper_starts(zk_client: KazooClient, zk_connect: str) -> None:
    tps = _write_states(zk_client)
    readers = StateReaders(ReaderSettings(zk_connect, helpers=2, min_partitions=len(tps) + 1))

    reads = KafkaZkClient(zk_client).get_partition_states(tps, readers)

    assert len(reads.found) == len(tps) - 2
    assert readers.last.helpers_started == 0


def test_a_new_controller_loads_its_context_with_a_helper(
    brokers: Callable[..., BrokerProcess], zk_client: KazooClient
) -> None:
    zk = KafkaZkClient(zk_client)
    helped = ("--state-reader-processes", "1", "--state-reader-min-partitions", "1")
    procs = {1: brokers(1, 3000, extra_args=helped)}
    wait_until(lambda: zk.get_controller_id() == 1, 30, lambda: procs[1].log_tail())
    procs.update({b: brokers(b, 3000, extra_args=helped) for b in (2, 3)})
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers missing")
    zk.create_topic(
        "t", TopicAssignment({p: ReplicaAssignment((1 + p % 3, 1 + (p + 1) % 3)) for p in range(6)})
    )
    tps = [TopicPartition("t", p) for p in range(6)]

    def leaders() -> dict[int, int]:
        found = zk.get_partition_states(tps).found
        return {tp.partition: s.leader_and_isr.leader for tp, s in found.items()}

    wait_until(lambda: len(leaders()) == 6, 30, "t not online")
    procs[1].kill()
    wait_until(lambda: zk.get_controller_id() in (2, 3), 30, "no new controller")
    new = procs[zk.get_controller_id() or 0]

    def loaded() -> dict[str, object] | None:
        return next(
            (
                e
                for e in new.events()
                if e["kind"] == "controller_failover_step" and e["step"] == "context_initialized"
            ),
            None,
        )

    wait_until(lambda: loaded() is not None, 30, lambda: new.log_tail())
    step = loaded()
    assert step is not None
    assert step["state_reader_processes"] == 1
    wait_until(lambda: 1 not in leaders().values(), 30, "broker 1 still leads a partition")
    assert sorted(leaders()) == list(range(6))

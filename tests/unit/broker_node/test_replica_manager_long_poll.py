"""`ReplicaManager.fetch` as a long poll of an incremental fetch session: woken by a
change, it reads again only the partitions that changed, and answers them; a later fetch
reads only what changed on either side since, and a follower whose idle partitions are
skipped stays in sync. On an event loop (`fetch_async`) a waiting fetch parks without a
thread, and only a long read leaves the loop.

Setup: broker 1 leads 80 partitions of topic "orders" (replicas 1, 2; ISR 1, 2), and
follower 2 holds a session of all of them at their log end, so that an incremental fetch
naming nothing waits.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Collection, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from broker_node.fetch_serving import LOOP_READ_PARTITIONS
from broker_node.partition import Partition
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors

PARTITIONS = 80
TPS = [TopicPartition("orders", p) for p in range(PARTITIONS)]


def _no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
    return {}


def _manager(config: ReplicationConfig, store: FakeIsrStore | None = None) -> ReplicaManager:
    """Broker 1's replica manager on `store` (a new one by default), with no topic
    overrides."""
    store = FakeIsrStore() if store is None else store
    return ReplicaManager(1, config, store, RecordingEventLog("b1"), _no_overrides)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[ReplicaManager]:
    manager = _manager(ReplicationConfig(data_dir=tmp_path))
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


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[TopicPartition]:
    reads: list[TopicPartition] = []
    lock = threading.Lock()
    original = Partition.read_if_changed

    def counted(self: Partition, *args: object, **kwargs: object) -> object:
        with lock:
            reads.append(self.tp)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Partition, "read_if_changed", counted)
    return reads


def test_a_woken_session_fetch_reads_only_the_partition_that_changed(
    replicas: ReplicaManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = _open_session(replicas)
    reads = _counting_reads(monkeypatch)
    waiting = m.FetchRequest((), 2, 10_000, session_id=session_id, session_epoch=1)
    with ThreadPoolExecutor(1) as pool:
        reply = pool.submit(replicas.fetch, waiting)
        wait_until(lambda: len(reads) >= PARTITIONS, 10, "the fetch never read its session")
        assert not reply.done()  # nothing changed: it waits
        record = (m.ProducedRecord(None, b"v"),)
        produced = (
            replicas.produce(m.ProduceRequest.single("orders", 7, record, acks=1)).result(10).only
        )
        assert produced.error is Errors.NONE
        answer = reply.result(10)
    assert [p.topic_partition for p in answer.partitions] == [TPS[7]]
    assert answer.partitions[0].has_records
    assert reads[:PARTITIONS] == TPS  # the first pass reads the whole session
    assert reads[PARTITIONS:] == [TPS[7]]  # woken, it reads only what changed


def test_a_session_fetch_reads_only_what_changed_on_either_side(
    replicas: ReplicaManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a pass found every follower idle at the log end, a fetch reads a partition
    only when the leader changed it or the fetch names it; one that answered records is
    read again until it is idle."""
    session_id = _open_session(replicas)
    reads = _counting_reads(monkeypatch)

    def fetch(epoch: int, *named: int) -> m.FetchResponse:
        asks = tuple(m.FetchPartition("orders", p, 0, 1) for p in named)
        request = m.FetchRequest(asks, 2, 0, session_id=session_id, session_epoch=epoch)
        reply = replicas.fetch(request)
        assert reply.error is Errors.NONE
        return reply

    fetch(1)
    assert reads == TPS  # the first incremental pass reads the whole session
    reads.clear()
    fetch(2)
    assert reads == []  # nothing changed on either side
    record = (m.ProducedRecord(None, b"v"),)
    assert replicas.produce(m.ProduceRequest.single("orders", 7, record, acks=1)).result(
        10
    ).only.error is (Errors.NONE)
    answer = fetch(3)
    assert reads == [TPS[7]]
    assert [p.topic_partition for p in answer.partitions] == [TPS[7]]
    reads.clear()
    fetch(4, 3)
    assert reads == [TPS[3], TPS[7]]  # named, and not idle yet (it answered records)


def test_a_follower_whose_session_skips_an_idle_partition_stays_in_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Follower 2 keeps fetching, and its session skips the idle partitions for longer
    than `replica.lag.time.max.ms`: when records then arrive, it was caught up as of its
    last fetch, so an ISR-expiration round keeps it. Once it stops fetching, a round
    after the lag time takes it out (the store accepts the write)."""

    lag_ms = 1000
    store = FakeIsrStore()
    manager = _manager(ReplicationConfig(data_dir=tmp_path, lag_time_max_ms=lag_ms), store)
    try:
        for tp in TPS:
            store.put_state(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 1, (1, 2), 0), 1), 0)
        manager.become_leader_or_follower(
            [
                m.LeaderAndIsrPartitionState(tp.topic, tp.partition, 1, 1, 1, (1, 2), 0, (1, 2))
                for tp in TPS
            ],
            [],
        )
        session_id = _open_session(manager)
        reads = _counting_reads(monkeypatch)
        epoch = 1
        idle_until = time.monotonic() + 1.5 * lag_ms / 1000
        while time.monotonic() < idle_until:  # long polls of 100 ms, nothing changing
            request = m.FetchRequest((), 2, 100, session_id=session_id, session_epoch=epoch)
            assert manager.fetch(request).error is Errors.NONE
            epoch += 1
        assert reads == TPS  # only the first pass read the partitions
        record = (m.ProducedRecord(None, b"v"),)
        manager.produce(m.ProduceRequest.single("orders", 7, record, acks=1)).result(10)
        manager.expire_isr_round()
        partition = manager.partition(TPS[7])
        assert partition is not None
        assert partition.isr == (1, 2)

        def shrunk() -> bool:
            manager.expire_isr_round()
            return partition.isr == (1,)

        wait_until(shrunk, 10, "the silent follower stayed in the ISR")
        assert time.monotonic() - idle_until >= lag_ms / 1000 - 0.2
    finally:
        manager.shutdown()


class _NoThreads(ThreadPoolExecutor):
    """A loop's default executor that refuses work: what runs on it was meant to stay on
    the loop."""

    def submit(self, *args: object, **kwargs: object) -> Future[object]:  # type: ignore[override]
        raise AssertionError("a small fetch left the event loop")


def test_a_parked_fetch_holds_no_thread_and_is_answered_by_an_append_on_its_loop(
    replicas: ReplicaManager,
) -> None:
    session_id = _open_session(replicas)
    settled = replicas.fetch(m.FetchRequest((), 2, 0, session_id=session_id, session_epoch=1))
    assert settled.error is Errors.NONE  # every follower found idle: later passes are short
    record = (m.ProducedRecord(None, b"v"),)

    async def scenario() -> m.FetchResponse:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(_NoThreads(1))
        waiting = m.FetchRequest((), 2, 10_000, session_id=session_id, session_epoch=2)
        reply = asyncio.ensure_future(replicas.fetch_async(waiting))
        await asyncio.sleep(0)  # it finds nothing changed and parks
        assert not reply.done()
        produced = (
            replicas.produce(m.ProduceRequest.single("orders", 7, record, acks=1)).result(0).only
        )
        assert produced.error is Errors.NONE
        return await asyncio.wait_for(reply, 10)

    answer = asyncio.run(scenario())
    assert [p.topic_partition for p in answer.partitions] == [TPS[7]]
    assert answer.partitions[0].has_records


def test_a_parked_fetch_without_data_is_answered_empty_at_its_deadline(
    replicas: ReplicaManager,
) -> None:
    session_id = _open_session(replicas)
    waiting = m.FetchRequest((), 2, 50, session_id=session_id, session_epoch=1)
    started = time.monotonic()
    answer = asyncio.run(asyncio.wait_for(replicas.fetch_async(waiting), 10))
    assert answer.error is Errors.NONE
    assert answer.partitions == ()
    assert time.monotonic() - started >= 0.05


def _reading_threads(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    threads: set[int] = set()
    original = Partition.read

    def recorded(self: Partition, *args: object, **kwargs: object) -> object:
        threads.add(threading.get_ident())
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Partition, "read", recorded)
    return threads


@pytest.mark.parametrize("count", [LOOP_READ_PARTITIONS, PARTITIONS])
def test_a_long_read_leaves_the_event_loop_and_a_short_one_stays(
    replicas: ReplicaManager, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    assert LOOP_READ_PARTITIONS < PARTITIONS
    threads = _reading_threads(monkeypatch)
    asks = tuple(m.FetchPartition(tp.topic, tp.partition, 0, 1) for tp in TPS[:count])

    async def scenario() -> tuple[m.FetchResponse, int]:
        request = m.FetchRequest(asks, 2, 0, session_epoch=m.INITIAL_EPOCH)
        return await replicas.fetch_async(request), threading.get_ident()

    answer, loop_thread = asyncio.run(scenario())
    assert answer.error is Errors.NONE
    assert len(answer.partitions) == count
    assert len(threads) == 1
    assert (threads == {loop_thread}) == (count <= LOOP_READ_PARTITIONS)


def test_released_fetches_are_answered_at_once_and_later_ones_do_not_wait(
    replicas: ReplicaManager,
) -> None:
    """What a stopping broker does before its server stops: the followers' long polls
    end now rather than at their deadline."""
    session_id = _open_session(replicas)
    settled = replicas.fetch(m.FetchRequest((), 2, 0, session_id=session_id, session_epoch=1))
    assert settled.error is Errors.NONE

    async def scenario() -> tuple[m.FetchResponse, m.FetchResponse]:
        waiting = m.FetchRequest((), 2, 60_000, session_id=session_id, session_epoch=2)
        parked = asyncio.ensure_future(replicas.fetch_async(waiting))
        await asyncio.sleep(0)  # it finds nothing changed and parks
        assert not parked.done()
        replicas.release_fetches()
        first = await asyncio.wait_for(parked, 10)
        later = m.FetchRequest((), 2, 60_000, session_id=session_id, session_epoch=3)
        return first, await asyncio.wait_for(replicas.fetch_async(later), 10)

    started = time.monotonic()
    first, later = asyncio.run(scenario())
    assert time.monotonic() - started < 30  # neither waited out its minute
    assert (first.error, first.partitions) == (Errors.NONE, ())
    assert (later.error, later.partitions) == (Errors.NONE, ())
    blocking = m.FetchRequest((), 2, 60_000, session_id=session_id, session_epoch=4)
    assert replicas.fetch(blocking).partitions == ()
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(("follower", "on_loop"), [(2, True), (3, False)])
def test_a_fetch_that_may_add_its_follower_to_the_isr_leaves_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, follower: int, on_loop: bool
) -> None:
    """Joining the ISR writes ZooKeeper, which may block for seconds: follower 3, outside
    the ISR, is read on a worker thread; follower 2, inside it, on the loop."""
    manager = _manager(ReplicationConfig(data_dir=tmp_path))
    state = m.LeaderAndIsrPartitionState("orders", 0, 1, 1, 1, (1, 2), 0, (1, 2, 3))
    manager.become_leader_or_follower([state], [])
    threads = _reading_threads(monkeypatch)
    ask = (m.FetchPartition("orders", 0, 0, 1),)

    async def scenario() -> tuple[m.FetchResponse, int]:
        request = m.FetchRequest(ask, follower, 0, session_epoch=m.INITIAL_EPOCH)
        return await manager.fetch_async(request), threading.get_ident()

    try:
        answer, loop_thread = asyncio.run(scenario())
    finally:
        manager.shutdown()
    assert [p.error for p in answer.partitions] == [Errors.NONE]
    assert (threads == {loop_thread}) == on_loop

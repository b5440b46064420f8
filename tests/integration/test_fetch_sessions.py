"""Incremental fetch sessions (KIP-227) between real brokers on a real ensemble: followers
replicate through sessions, open new ones with a new leader after a kill -9, and a full
session cache evicts idle sessions and gives followers' sessions priority over a
consumer's.

Setup: brokers as processes with short lag and ISR-propagation times. Each broker's
Prometheus endpoint shows its sessions (Kafka's FetchSessionCache metrics); Produce and
Fetch go straight to the partition leader; the state znode is the oracle for the ISR.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from domain import LeaderIsrAndControllerEpoch, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment

pytestmark = pytest.mark.integration

SESSION_MS = 3000
FAST = ("--replica-lag-time-max-ms", "1500", "--isr-change-blackout-ms", "200")
TP = TopicPartition("log", 0)
SESSIONS = "kafka_server_FetchSessionCache_NumIncrementalFetchSessions"
CACHED = "kafka_server_FetchSessionCache_NumIncrementalFetchPartitionsCached"
EVICTIONS = "kafka_server_FetchSessionCache_IncrementalFetchSessionEvictionsPerSec_total"
Start = Callable[..., BrokerProcess]


def start(
    brokers: Start, zk: KafkaZkClient, extra: dict[int, tuple[str, ...]]
) -> dict[int, BrokerProcess]:
    """Brokers in the order of `extra` (the first becomes controller), each registered."""
    procs = {}
    for broker_id, args in extra.items():
        proc = brokers(broker_id, SESSION_MS, extra_args=FAST + args)
        wait_until(proc.port, 30, proc.log_tail)
        procs[broker_id] = proc
    wait_until(zk.get_controller_id, 20, "no controller")
    return procs


def state(zk: KafkaZkClient) -> LeaderIsrAndControllerEpoch | None:
    return zk.get_partition_states([TP]).found.get(TP)


def create(zk: KafkaZkClient, procs: dict[int, BrokerProcess], replicas: tuple[int, ...]) -> None:
    """Topic `log`, one partition on `replicas`, online with the full ISR and applied by
    every replica (the state znode is written before the LeaderAndIsr is sent)."""
    zk.create_topic(TP.topic, TopicAssignment({0: ReplicaAssignment(replicas)}))
    wait_for_isr(zk, replicas)
    for broker_id in replicas:
        wait_until(
            procs[broker_id].applied_leader_and_isr, 20, f"broker {broker_id}: no LeaderAndIsr"
        )


def wait_for_isr(zk: KafkaZkClient, isr: tuple[int, ...]) -> None:
    wait_until(
        lambda: (s := state(zk)) is not None and sorted(s.leader_and_isr.isr) == sorted(isr),
        20,
        f"the ISR never became {sorted(isr)}",
    )


def client(proc: BrokerProcess) -> ClientApiClient:
    return ClientApiClient(f"127.0.0.1:{proc.port()}", timeout_s=20)


def produce(leader: ClientApiClient, values: list[str]) -> m.PartitionProduceResult:
    records = tuple(m.ProducedRecord(None, v.encode()) for v in values)
    return leader.produce(m.ProduceRequest.single(TP.topic, TP.partition, records, acks=-1)).only


def read_all(leader: ClientApiClient) -> list[str]:
    reply = leader.fetch(m.FetchRequest((m.FetchPartition(TP.topic, TP.partition, 0, -1, 10_000),)))
    [fetched] = reply.partitions
    assert fetched.error is Errors.NONE, fetched
    return [r.value.decode() for r in fetched.records]


def session_fetch(
    leader: ClientApiClient, session_id: int, epoch: int, offset: int | None
) -> m.FetchResponse:
    """A consumer's Fetch in a session, naming TP at `offset` (None: naming nothing)."""
    asks = () if offset is None else (m.FetchPartition(TP.topic, TP.partition, offset),)
    return leader.fetch(
        m.FetchRequest(asks, max_wait_ms=100, session_id=session_id, session_epoch=epoch)
    )


def test_followers_replicate_in_sessions_and_open_new_ones_after_the_leaders_kill9(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Steps: three brokers, `log` on (3, 1, 2); 100 acks=all writes to broker 3; kill -9
    of broker 3; 100 more to the new leader. Validate: broker 3 held one session per
    follower, the new leader holds one for the remaining follower, every write is read
    back in order and the ISR is the two survivors."""
    zk = KafkaZkClient(zk_client)
    procs = start(brokers, zk, {1: (), 2: (), 3: ()})
    create(zk, procs, (3, 1, 2))
    wait_until(
        lambda: (f := procs[3].metrics())[SESSIONS] == 2 and f[CACHED] == 2,
        15,
        "broker 3 does not hold one session per follower",
    )
    written = [f"v{i}" for i in range(200)]
    with client(procs[3]) as leader:
        for batch in range(0, 100, 10):
            reply = produce(leader, written[batch : batch + 10])
            assert reply.error is Errors.NONE, reply
    procs[3].kill()
    new = wait_until(
        lambda: (s := state(zk)) is not None and s.leader_and_isr.leader in (1, 2) and s,
        SESSION_MS / 1000 + 10,
        "no new leader after the kill",
    )
    new_leader = new.leader_and_isr.leader
    follower = 3 - new_leader
    wait_until(
        lambda: (f := procs[new_leader].metrics())[SESSIONS] == 1 and f[CACHED] == 1,
        15,
        "the remaining follower opened no session with the new leader",
    )
    with client(procs[new_leader]) as leader:
        for batch in range(100, 200, 10):
            reply = produce(leader, written[batch : batch + 10])
            assert reply.error is Errors.NONE, reply
            assert reply.base_offset == batch
        wait_until(lambda: read_all(leader) == written, 15, "writes lost")
    wait_for_isr(zk, (new_leader, follower))


def test_a_consumer_session_carries_records_until_its_leader_restarts(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Steps: a consumer opens a session on the leader, fetches incrementally, repeats an
    epoch, then the leader is restarted. Validate: records arrive in the session, an
    unchanged partition is left out of the answer, a repeated epoch is refused
    INVALID_FETCH_SESSION_EPOCH, and the restarted leader knows no session
    (FETCH_SESSION_ID_NOT_FOUND) but opens a new one for a full fetch."""
    zk = KafkaZkClient(zk_client)
    procs = start(brokers, zk, {1: ()})
    create(zk, procs, (1,))
    with client(procs[1]) as leader:
        assert produce(leader, ["a", "b"]).error is Errors.NONE
        opened = session_fetch(leader, m.NO_SESSION_ID, m.INITIAL_EPOCH, 0)
        assert opened.error is Errors.NONE
        assert opened.session_id != m.NO_SESSION_ID
        assert [r.value for r in opened.partitions[0].records] == [b"a", b"b"]
        session_id = opened.session_id
        assert produce(leader, ["c"]).error is Errors.NONE
        moved = session_fetch(leader, session_id, 1, 2)
        assert [r.value for r in moved.partitions[0].records] == [b"c"]
        idle = session_fetch(leader, session_id, 2, 3)  # at the end, same hw: not named
        assert (idle.error, idle.partitions, idle.session_id) == (Errors.NONE, (), session_id)
        assert session_fetch(leader, session_id, 2, None).error is (
            Errors.INVALID_FETCH_SESSION_EPOCH
        )
    procs[1].kill()
    procs[1].start()
    wait_until(lambda: procs[1].is_running() and procs[1].port(), 30, procs[1].log_tail)
    wait_until(
        lambda: (s := state(zk)) is not None and s.leader_and_isr.leader == 1,
        30,
        "broker 1 does not lead again",
    )

    def reopened() -> m.FetchResponse | None:
        with client(procs[1]) as leader:
            lost = session_fetch(leader, session_id, 3, 3)
            if lost.error is not Errors.FETCH_SESSION_ID_NOT_FOUND:
                return None
            full = session_fetch(leader, session_id, m.INITIAL_EPOCH, 0)
            return full if full.partitions and full.partitions[0].records else None

    full = wait_until(reopened, 20, "the restarted leader did not reopen the session")
    assert full.session_id not in (m.NO_SESSION_ID, session_id)
    assert [r.value for r in full.partitions[0].records] == [b"a", b"b", b"c"]


def test_a_full_cache_evicts_idle_sessions_and_prefers_followers(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Setup: broker 1 keeps one session slot, evictable after 1 s idle; `log` on (1, 2).
    Steps: a consumer asks for a session while the follower holds the slot; broker 2 is
    killed; the consumer asks again; broker 2 comes back. Validate: the consumer gets no
    session at first (the busy follower's is kept), then takes the idle slot (one
    eviction), then loses it to the returning follower (a consumer's session gives way to
    a follower's at once), whose session carries it back into the ISR."""
    zk = KafkaZkClient(zk_client)
    slots = (
        "--max-incremental-fetch-session-cache-slots",
        "1",
        "--min-incremental-fetch-session-eviction-ms",
        "1000",
    )
    procs = start(brokers, zk, {1: slots, 2: ()})
    create(zk, procs, (1, 2))
    wait_until(lambda: procs[1].metrics()[SESSIONS] == 1, 15, "the follower opened no session")
    with client(procs[1]) as leader:
        assert produce(leader, ["a"]).error is Errors.NONE
        refused = session_fetch(leader, m.NO_SESSION_ID, m.INITIAL_EPOCH, 0)
        assert refused.error is Errors.NONE
        assert refused.session_id == m.NO_SESSION_ID  # served, without a session
        assert [r.value for r in refused.partitions[0].records] == [b"a"]
        procs[2].kill()

        def new_session() -> m.FetchResponse | None:
            reply = session_fetch(leader, m.NO_SESSION_ID, m.INITIAL_EPOCH, 0)
            return reply if reply.session_id != m.NO_SESSION_ID else None

        granted = wait_until(
            new_session,
            SESSION_MS / 1000 + 10,
            "the dead follower's idle session was never evicted",
        )
        assert procs[1].metrics()[EVICTIONS] == 1
        procs[2].start()
        wait_until(
            lambda: (
                session_fetch(leader, granted.session_id, 1, 1).error
                is Errors.FETCH_SESSION_ID_NOT_FOUND
            ),
            30,
            "the returning follower did not take the consumer's slot",
        )
        assert procs[1].metrics()[EVICTIONS] == 2
        wait_for_isr(zk, (1, 2))
        assert produce(leader, ["b"]).error is Errors.NONE
        assert read_all(leader) == ["a", "b"]

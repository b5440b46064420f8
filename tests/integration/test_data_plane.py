"""The replicated log on a real ensemble with broker processes: acks=all durability across
a leader's kill -9, ISR shrink and expand, min.insync.replicas, KIP-101 truncation of a
former leader, and leader-epoch fencing of fetches.

Setup: brokers as processes with short lag and ISR-propagation times. Produce and Fetch
go straight to the partition leader's gRPC ClientApi; ZooKeeper and the brokers' event
logs are the oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from kazoo.client import KazooClient

from domain import LeaderIsrAndControllerEpoch, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig

pytestmark = pytest.mark.integration

SESSION_MS = 3000
LAG_MS = 1500
FAST = ("--replica-lag-time-max-ms", str(LAG_MS), "--isr-change-blackout-ms", "200")
TP = TopicPartition("log", 0)
Start = Callable[..., BrokerProcess]


class Cluster:
    """Brokers started one by one in the order of `session_ms` (the first is controller)."""

    def __init__(self, brokers: Start, zk_client: KazooClient, session_ms: dict[int, int]) -> None:
        self.zk = KafkaZkClient(zk_client)
        self.procs: dict[int, BrokerProcess] = {}
        for broker_id in session_ms:  # in the order given; the first one becomes controller
            proc = brokers(broker_id, session_ms[broker_id], extra_args=FAST)
            self.procs[broker_id] = proc
            wait_until(proc.port, 30, proc.log_tail)
            wait_until(self.zk.get_controller_id, 20, "no controller")

    def state(self) -> LeaderIsrAndControllerEpoch | None:
        """The partition's state znode."""
        return self.zk.get_partition_states([TP]).found.get(TP)

    def create(self, replicas: tuple[int, ...], config: dict[str, str] | None = None) -> None:
        """Create topic `log` with one partition and wait for it to be led."""
        self.zk.create_topic(
            TP.topic, TopicAssignment({0: ReplicaAssignment(replicas)}), TopicConfig(config or {})
        )
        wait_until(
            lambda: (
                (s := self.state()) is not None and sorted(s.leader_and_isr.isr) == sorted(replicas)
            ),
            20,
            "partition did not come online with the full ISR",
        )
        for broker_id in replicas:  # a produce right after the znode may find no leader
            proc = self.procs[broker_id]
            wait_until(proc.applied_leader_and_isr, 20, f"broker {broker_id}: no LeaderAndIsr")

    @contextmanager
    def client(self, broker_id: int) -> Iterator[ClientApiClient]:
        """A ClientApi connection to one broker."""
        with ClientApiClient(f"127.0.0.1:{self.procs[broker_id].port()}", timeout_s=20) as c:
            yield c

    def leader(self) -> int:
        """The current leader."""
        state = self.state()
        assert state is not None
        return state.leader_and_isr.leader


def produce(client: ClientApiClient, values: list[str], acks: int = -1) -> m.PartitionProduceResult:
    """Send `values` as one batch to partition 0 of topic `log`."""
    return client.produce(
        m.ProduceRequest.single(
            TP.topic, TP.partition, tuple(m.ProducedRecord(None, v.encode()) for v in values), acks
        )
    ).only


def consume(client: ClientApiClient, epoch: int = -1, replica_id: int = -1) -> m.FetchedPartition:
    """Read the whole partition (a consumer sees up to the high watermark)."""
    reply = client.fetch(
        m.FetchRequest((m.FetchPartition(TP.topic, TP.partition, 0, epoch, 10_000),), replica_id)
    )
    return reply.partitions[0]


def complete(fetched: m.FetchedPartition, count: int) -> m.FetchedPartition | None:
    """`fetched` if it read without error exactly `count` records."""
    return fetched if fetched.error is Errors.NONE and len(fetched.records) == count else None


def values(fetched: m.FetchedPartition) -> list[str]:
    """The values read, in offset order."""
    return [r.value.decode() for r in fetched.records]


def events(proc: BrokerProcess, kind: str) -> list[dict[str, Any]]:
    """One broker's events of one kind."""
    return [e for e in proc.events() if e["kind"] == kind]


def test_acks_all_writes_survive_the_leaders_kill9_and_read_back_in_order(
    brokers: Start, zk_client: KazooClient
) -> None:
    """200 acks=all writes, then kill -9 of the leader: the new leader serves all of them,
    in order, with no gap."""
    c = Cluster(brokers, zk_client, {1: SESSION_MS, 2: SESSION_MS, 3: SESSION_MS})
    c.create((3, 1, 2))
    written = [f"v{i}" for i in range(200)]
    with c.client(3) as leader:
        for batch in range(0, 200, 10):
            reply = produce(leader, written[batch : batch + 10])
            assert reply.error is Errors.NONE, reply
            assert reply.base_offset == batch
    c.procs[3].kill()
    new = wait_until(
        lambda: (s := c.state()) is not None and s.leader_and_isr.leader in (1, 2) and s,
        SESSION_MS / 1000 + 5,
        "no new leader after the kill",
    )
    assert new.leader_and_isr.leader_epoch == 1
    with c.client(new.leader_and_isr.leader) as reader:
        read = wait_until(
            lambda: complete(consume(reader), 200),
            15,
            "the new leader does not serve every acknowledged write",
        )
    assert values(read) == written
    assert [r.offset for r in read.records] == list(range(200))


def test_a_stopped_follower_leaves_the_isr_after_the_lag_time_and_rejoins(
    brokers: Start, zk_client: KazooClient
) -> None:
    """A follower frozen (SIGSTOP; its session outlives the test) stops fetching: after
    replica.lag.time.max.ms the leader shrinks the ISR in ZooKeeper and the controller,
    notified, updates every broker's metadata; resumed, it catches up and rejoins."""
    c = Cluster(brokers, zk_client, {1: SESSION_MS, 2: SESSION_MS, 3: 30_000})
    c.create((1, 2, 3))
    follower = c.procs[3]
    follower.pause()
    try:
        with c.client(1) as leader:
            assert produce(leader, ["a", "b"], acks=1).error is Errors.NONE
        shrunk = wait_until(
            lambda: (s := c.state()) is not None and 3 not in s.leader_and_isr.isr and s,
            LAG_MS / 1000 + 10,
            "the lagging follower stayed in the ISR",
        )
        assert sorted(shrunk.leader_and_isr.isr) == [1, 2]
        assert shrunk.leader_and_isr.leader_epoch == 0  # an ISR change is not a new leadership
        with c.client(2) as other:
            wait_until(
                lambda: sorted(other.metadata((TP.topic,)).topics[0].partitions[0].isr) == [1, 2],
                10,
                "the controller did not propagate the ISR change to the brokers",
            )
    finally:
        follower.resume()
    wait_until(
        lambda: (s := c.state()) is not None and sorted(s.leader_and_isr.isr) == [1, 2, 3],
        15,
        "the resumed follower did not rejoin the ISR",
    )
    changes = events(c.procs[1], "isr_changed")
    assert [sorted(e["isr"]) for e in changes][-2:] == [[1, 2], [1, 2, 3]]


def test_acks_all_below_min_insync_replicas_fails_and_appends_nothing(
    brokers: Start, zk_client: KazooClient
) -> None:
    """With min.insync.replicas=3 and one follower out of the ISR, acks=all fails with
    NOT_ENOUGH_REPLICAS before anything is appended; acks=1 still works."""
    c = Cluster(brokers, zk_client, {1: SESSION_MS, 2: SESSION_MS, 3: 30_000})
    c.create((1, 2, 3), {"min.insync.replicas": "3"})
    with c.client(1) as leader:
        assert produce(leader, ["ok"]).error is Errors.NONE
        c.procs[3].pause()
        try:
            # an idle follower at the log end is in sync: give it something to miss
            assert produce(leader, ["pad"], acks=1).error is Errors.NONE
            wait_until(
                lambda: (s := c.state()) is not None and 3 not in s.leader_and_isr.isr,
                LAG_MS / 1000 + 10,
                "ISR did not shrink",
            )
            before = consume(leader, replica_id=2).log_end_offset
            refused = produce(leader, ["refused-1", "refused-2"])
            assert refused.error is Errors.NOT_ENOUGH_REPLICAS
            assert int(refused.error) == 19
            assert consume(leader, replica_id=2).log_end_offset == before
            assert produce(leader, ["acks-one"], acks=1).error is Errors.NONE
        finally:
            c.procs[3].resume()
        assert "refused-1" not in values(consume(leader))


def test_a_former_leader_truncates_its_divergent_tail(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Broker 1 leads alone (its follower stopped) and takes writes nobody else has; it is
    killed, the follower returns and is elected uncleanly (the topic allows it) into a new
    epoch and takes new writes. Broker 1 comes back as follower, asks where its epoch ended
    (KIP-101), truncates its divergent tail and copies the new leader's."""
    c = Cluster(brokers, zk_client, {3: SESSION_MS, 1: SESSION_MS, 2: SESSION_MS})
    assert c.zk.get_controller_id() == 3  # the controller hosts no replica of the topic
    c.create((1, 2), {"unclean.leader.election.enable": "true"})
    base = [f"base-{i}" for i in range(10)]
    with c.client(1) as leader:
        assert produce(leader, base).error is Errors.NONE
        assert c.procs[2].terminate() == 0
        wait_until(
            lambda: (s := c.state()) is not None and s.leader_and_isr.isr == (1,),
            10,
            "the stopped follower stayed in the ISR",
        )
        divergent = produce(leader, [f"divergent-{i}" for i in range(5)], acks=1)
        assert (divergent.error, divergent.last_offset) == (Errors.NONE, 14)
    c.procs[1].kill()
    wait_until(
        lambda: (s := c.state()) is not None and s.leader_and_isr.leader == -1,
        SESSION_MS / 1000 + 5,
        "the partition did not go offline with its only ISR member",
    )
    c.procs[2].start()
    new = wait_until(
        lambda: (s := c.state()) is not None and s.leader_and_isr.leader == 2 and s,
        20,
        "the returning follower was not elected",
    )
    wait_until(  # the state znode is written before the event line
        lambda: any(e["unclean"] for e in events(c.procs[3], "leader_elected") if e["leader"] == 2),
        10,
        "the controller logged no unclean election of broker 2",
    )
    with c.client(2) as leader:
        after = wait_until(  # NOT_LEADER_OR_FOLLOWER until its LeaderAndIsr arrives
            lambda: (
                (r := produce(leader, ["after-0", "after-1", "after-2"], acks=1)).error
                is Errors.NONE
                and r
            ),
            10,
            "the new leader never accepted writes",
        )
        assert after.base_offset == 10
    c.procs[1].start()
    truncated = wait_until(
        lambda: events(c.procs[1], "log_truncated"),
        SESSION_MS * 2 / 1000 + 20,
        lambda: "the old leader never truncated:\n" + c.procs[1].log_tail(),
    )
    assert (truncated[-1]["to_offset"], truncated[-1]["removed"]) == (10, 5)
    wait_until(
        lambda: (s := c.state()) is not None and 1 in s.leader_and_isr.isr,
        20,
        "the truncated former leader did not catch up into the ISR",
    )
    with c.client(2) as leader:
        read = wait_until(lambda: complete(consume(leader), 13), 15, "log incomplete")
    assert values(read) == [*base, "after-0", "after-1", "after-2"]
    assert new.leader_and_isr.leader_epoch > 0


def test_a_fetch_with_a_stale_leader_epoch_is_rejected(
    brokers: Start, zk_client: KazooClient
) -> None:
    """After a leader change (epoch 1), a fetch carrying epoch 0 is FENCED_LEADER_EPOCH and
    one from the future UNKNOWN_LEADER_EPOCH; the current epoch reads."""
    c = Cluster(brokers, zk_client, {1: SESSION_MS, 2: SESSION_MS, 3: SESSION_MS})
    c.create((3, 1, 2))
    with c.client(3) as leader:
        assert produce(leader, ["x"]).error is Errors.NONE
    c.procs[3].kill()
    new = wait_until(
        lambda: (s := c.state()) is not None and s.leader_and_isr.leader in (1, 2) and s,
        SESSION_MS / 1000 + 5,
        "no new leader",
    )
    with c.client(new.leader_and_isr.leader) as leader:
        current = wait_until(  # once its LeaderAndIsr has arrived
            lambda: complete(consume(leader, epoch=1), 1), 10, "the current epoch cannot read"
        )
        assert values(current) == ["x"]
        assert consume(leader, epoch=0).error is Errors.FENCED_LEADER_EPOCH
        assert int(consume(leader, epoch=0).error) == 74
        assert consume(leader, epoch=7).error is Errors.UNKNOWN_LEADER_EPOCH
    with c.client(new.leader_and_isr.leader % 2 + 1) as follower:
        assert consume(follower).error is Errors.NOT_LEADER_OR_FOLLOWER

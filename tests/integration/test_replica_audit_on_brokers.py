"""The replica audit (ClientApi `ReplicaAudit`) on broker processes speaking mutual TLS,
asked with the tools' client certificate as the chaos runner asks it: after acks=all
writes every replica of every partition reports the same per-epoch ranges and digests; a
follower whose log was changed on disk while its broker was stopped keeps the change after
it rejoins (nothing in replication looks at records below the log end), and the audit shows
the disagreement as a `digest` one of that partition and epoch.

Setup: three brokers with the cluster's TLS files (broker 1 starts first and becomes
controller); topic `audited` with partition 0 on (2, 3, 1) and partition 1 on (3, 1, 2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker_node.storage import PartitionLog, Record
from chaos.run.audit import reports_of
from client.audit import audit_brokers
from client.errors import TransportError
from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ChannelIdentity, ClientApiClient
from rundir.audit import ReplicaReport, disagreements
from rundir.invariants.spec_audit import log_matching
from security.tls import ensure_tls
from security.tls_files import CLIENT, load_identity
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig

pytestmark = pytest.mark.integration

TOPIC = "audited"
ASSIGNMENT = {0: (2, 3, 1), 1: (3, 1, 2)}
RECORDS = 40


class Cluster:
    """Three TLS brokers and topic `audited`, every partition led with its full ISR."""

    def __init__(
        self, brokers: Callable[..., BrokerProcess], zk_client: KazooClient, tls_dir: Path
    ) -> None:
        self.zk = KafkaZkClient(zk_client)
        self.client_identity: ChannelIdentity = load_identity(tls_dir, CLIENT)
        self.procs: dict[int, BrokerProcess] = {}
        for broker_id in (1, 2, 3):
            proc = brokers(broker_id, tls_dir=tls_dir)
            self.procs[broker_id] = proc
            wait_until(proc.port, 30, proc.log_tail)
        wait_until(lambda: self.zk.get_controller_id() == 1, 20, "broker 1 is not controller")
        self.zk.create_topic(
            TOPIC,
            TopicAssignment({p: ReplicaAssignment(r) for p, r in ASSIGNMENT.items()}),
            TopicConfig({}),
        )
        wait_until(self.fully_replicated, 30, "the topic did not come online with full ISRs")
        for proc in self.procs.values():
            wait_until(proc.applied_leader_and_isr, 20, f"{proc.broker_id}: no LeaderAndIsr")

    def fully_replicated(self, preferred: bool = True) -> bool:
        """Every partition led (by its preferred replica, unless not `preferred`) with the
        full ISR."""
        tps = [TopicPartition(TOPIC, p) for p in ASSIGNMENT]
        found = self.zk.get_partition_states(tps).found
        return all(
            (s := found.get(TopicPartition(TOPIC, p))) is not None
            and (s.leader_and_isr.leader == replicas[0] or not preferred)
            and sorted(s.leader_and_isr.isr) == sorted(replicas)
            for p, replicas in ASSIGNMENT.items()
        )

    def address(self, broker_id: int) -> str:
        """The broker's gRPC address."""
        return f"127.0.0.1:{self.procs[broker_id].port()}"

    def produce(self, partition: int, count: int) -> None:
        """`count` acks=all writes to `partition`'s preferred leader, each acknowledged."""
        leader = ASSIGNMENT[partition][0]
        with ClientApiClient(self.address(leader), 20, self.client_identity) as api:
            for i in range(count):
                record = m.ProducedRecord(None, f"p{partition}-v{i}".encode())
                reply = api.produce(m.ProduceRequest.single(TOPIC, partition, (record,), -1)).only
                assert reply.error is Errors.NONE, reply

    def audit(self) -> list[ReplicaReport]:
        """Every broker's rows (each broker must answer)."""
        answers = audit_brokers(
            {b: self.address(b) for b in self.procs}, (TOPIC,), self.client_identity
        )
        rows = []
        for broker, answer in answers.items():
            assert not isinstance(answer, TransportError), answer
            assert answer.broker_id == broker
            rows += reports_of(broker, answer)
        return rows


def caught_up(rows: list[ReplicaReport], end: int) -> list[ReplicaReport] | None:
    """`rows` once all six replicas hold `end` records."""
    ready = len(rows) == 6 and all(r.log_end_offset == end and not r.error for r in rows)
    return rows if ready else None


@pytest.fixture
def cluster(
    brokers: Callable[..., BrokerProcess], zk_client: KazooClient, tmp_path: Path
) -> Cluster:
    """The three brokers with `RECORDS` acks=all writes on each partition."""
    tls_dir = ensure_tls(tmp_path / "secrets").files.directory
    c = Cluster(brokers, zk_client, tls_dir)
    for partition in ASSIGNMENT:
        c.produce(partition, RECORDS)
    return c


def test_every_replica_reports_the_same_epochs_and_digests(cluster: Cluster) -> None:
    rows = wait_until(lambda: caught_up(cluster.audit(), RECORDS), 20, "replicas lag")
    assert sorted((r.partition, r.broker) for r in rows) == [
        (p, b) for p in sorted(ASSIGNMENT) for b in (1, 2, 3)
    ]
    for r in rows:
        assert r.leader == ASSIGNMENT[r.partition][0]
        assert [(e.leader_epoch, e.start_offset, e.end_offset) for e in r.epochs] == [
            (0, 0, RECORDS)
        ]
    assert len({(r.partition, r.epochs[0].digest) for r in rows}) == 2  # one per partition
    assert disagreements(rows) == []
    assert log_matching(rows, unclean_leader_election=False).status() == "ok"


def test_a_follower_log_changed_while_stopped_shows_as_a_digest_disagreement(
    cluster: Cluster,
) -> None:
    """Broker 3 follows partition 0 (led by 2; broker 1 is controller). Stopped, the value
    of its record at offset 5 is replaced on disk by a valid record of the same epoch;
    restarted (partition 1, which it led, stays with its new leader), it rejoins the ISRs
    without truncating (its epoch 0 ends where the
    leader's does) and the audit names the partition and epoch."""
    wait_until(lambda: caught_up(cluster.audit(), RECORDS), 20, "replicas lag")
    follower = cluster.procs[3]
    follower.terminate()
    log = PartitionLog(follower.run_dir / "data" / "broker3" / f"{TOPIC}-0")
    try:
        kept = log.read(0, RECORDS, max_records=RECORDS)
        assert len(kept) == RECORDS
        log.truncate_to(5)
        changed = [Record(5, 0, kept[5].timestamp_ms, kept[5].key, b"changed on disk")]
        log.append_as_follower(changed + kept[6:])
        log.flush()
    finally:
        log.close()
    follower.start()
    wait_until(follower.port, 30, follower.log_tail)
    wait_until(
        lambda: cluster.fully_replicated(preferred=False), 30, "broker 3 did not rejoin the ISRs"
    )
    rows = wait_until(lambda: caught_up(cluster.audit(), RECORDS), 20, "replicas lag")
    found = disagreements(rows)
    assert [(d.topic, d.partition, d.leader_epoch, d.kind) for d in found] == [
        (TOPIC, 0, 0, "digest")
    ]
    assert {b: d[:2] for b, d in found[0].replicas.items() if d is not None} == {
        b: [0, RECORDS] for b in (1, 2, 3)
    }
    digests = {b: d[2] for b, d in found[0].replicas.items() if d is not None}
    assert digests[1] == digests[2] != digests[3]
    matching = log_matching(rows, unclean_leader_election=False)
    assert matching.status() == "VIOLATED"
    witness = f"audit row broker 3 0..{RECORDS} {str(digests[3])[:12]}"
    assert witness in matching.violations[0].explanation

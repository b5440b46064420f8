"""The end-of-run replica audit on a real compose cluster, down to a broker that is stopped:
its replicas are read from the log files its container left, with the broker's own
storage code, and a record changed on its disk is named by the log-matching invariant.

Setup: docker-compose.yml under a project of this module's own (`testbed-audit-<pid>`:
the test stops a broker and changes its files, which no other test should meet); its
containers, network and volumes are removed when the module ends. A topic of one
partition on all three brokers, `RECORDS` records produced with acks=all.

Steps:
1. Wait until the three replicas agree over ReplicaAudit (the same offsets and digest).
2. `docker stop` a follower (the controller too, when another follower is there).
3. Audit with the follower stopped: it is read from its files.
4. Copy the follower's segment out of the stopped container, re-encode one record with a
   value of the same length (a valid CRC, so that recovery keeps it), copy it back.
5. Audit again.

Validate: before the change (1 and 3) `log_matching` holds, and the files give the same
digest as the running replicas; after it, `audit.json` marks the stopped broker's row as
read from files, and `log_matching` has one violation naming the partition, the leader
epoch of the records and that broker, whose digest differs from the two others'.
"""

from __future__ import annotations

import dataclasses
import io
import random
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from admin.topics import create_topic
from broker_node.storage.record import decode_batch, encode_records, split_batches
from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.run.audit import audit_cluster
from client import Client
from client.audit import audit_brokers
from domain import TopicPartition
from harness.compose import ComposeCluster, ComposeStartError, tier_cluster
from harness.waiting import wait_until
from rpc import messages as m
from rundir.audit import FROM_FILES, FROM_RPC, ReplicaReport, read_audit
from rundir.invariants.spec_audit import log_matching
from rundir.layout import RunDir
from rundir.results import InvariantResult
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
SESSION_MS = 3000
TOPIC = "audit-files"
TP = TopicPartition(TOPIC, 0)
RECORDS = 40
#: The record whose value the test changes on the stopped broker's disk.
CHANGED = 17
SEGMENT = f"{0:020d}.log"


@pytest.fixture(scope="module")
def cluster() -> Iterator[ComposeCluster]:
    """A compose project of this module's own, removed (containers, network, volumes) at
    the end."""
    try:
        with tier_cluster(REPO_ROOT, "testbed-audit", "docker-audit", SESSION_MS) as started:
            yield started
    except ComposeStartError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="module")
def handle(cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """The chaos tools' handle on the module's project."""
    with ClusterHandle.for_compose(cluster) as opened:
        yield opened


def _produce(cluster: ComposeCluster) -> None:
    addresses = cluster.broker_addresses()
    with Client(
        list(addresses.values()), topics=(TOPIC,), address_map=addresses, tls=cluster.tls
    ) as c:
        records = [m.ProducedRecord(b"k", b"value-%04d" % i) for i in range(RECORDS)]
        for start in range(0, RECORDS, 10):
            c.produce(TOPIC, 0, records[start : start + 10], acks=-1)


def _agreeing(handle: ClusterHandle, cluster: ComposeCluster) -> bool:
    """Every broker answers ReplicaAudit for the partition with all the records."""
    answers = audit_brokers(endpoints.broker_addresses(handle), (TOPIC,), cluster.tls)
    held = set()
    for answer in answers.values():
        if not isinstance(answer, m.ReplicaAuditResponse) or len(answer.replicas) != 1:
            return False
        replica = answer.replicas[0]
        if replica.log_end_offset != RECORDS:
            return False
        held.add(replica.epochs)
    return len(held) == 1


def _audit(handle: ClusterHandle, run_dir: RunDir) -> tuple[list[ReplicaReport], InvariantResult]:
    """`audit.json` as the runner writes it, and `log_matching` over it."""
    audit_cluster(handle, run_dir, TOPIC)
    rows = read_audit(run_dir.audit)
    return rows, log_matching(rows, unclean_leader_election=False)


def _change_one_record(handle: ClusterHandle, service: str, data_dir: str) -> None:
    """Re-encode record `CHANGED` of the segment with another value of the same length."""
    path = f"{data_dir}/{TOPIC}-0/{SEGMENT}"
    with tarfile.open(fileobj=io.BytesIO(b"".join(handle.copy_out(service, path)))) as tar:
        member = tar.getmember(SEGMENT)
        source = tar.extractfile(member)
        assert source is not None, f"{path} is not a regular file"
        data = source.read()
    _, batches = split_batches(data)
    at = 0
    for batch in batches:  # to the batch holding offset CHANGED
        records = decode_batch(batch, at)
        if records[-1].offset >= CHANGED:
            break
        at += len(batch)
    index = CHANGED - records[0].offset
    record = records[index]
    assert record.value != record.value.upper()
    records[index] = dataclasses.replace(record, value=record.value.upper())
    [changed] = encode_records(records)  # the batch again, its CRC over the new value
    assert len(changed) == len(batch)
    data = data[:at] + changed + data[at + len(changed) :]
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.addfile(member, io.BytesIO(data))
    handle.copy_in(service, f"{data_dir}/{TOPIC}-0", archive.getvalue())


def test_a_record_changed_on_a_stopped_brokers_disk_breaks_log_matching(
    cluster: ComposeCluster, handle: ClusterHandle, tmp_path: Path
) -> None:
    client = cluster.zk()
    try:
        zk = KafkaZkClient(client)
        create_topic(zk, TOPIC, 1, 3, rng=random.Random(3))
        wait_until(lambda: zk.get_partition_states([TP]).found.get(TP), 30, "no partition state")
        controller = zk.get_controller_id()
        leader = zk.get_partition_states([TP]).found[TP].leader_and_isr.leader
    finally:
        client.stop()
        client.close()
    _produce(cluster)
    wait_until(lambda: _agreeing(handle, cluster), 60, "the replicas did not come to agree")

    rows, matching = _audit(handle, RunDir(tmp_path / "all-running").create())
    assert {r.source for r in rows} == {FROM_RPC}
    assert len(rows) == 3
    assert matching.ok, matching
    assert matching.checked == 1, matching

    followers = sorted({1, 2, 3} - {leader})
    victim = next((b for b in followers if b != controller), followers[0])
    service = handle.brokers()[victim]
    handle.stop(service, timeout_s=30)
    wait_until(lambda: handle.status(service) == "exited", 60, f"{service} did not stop")

    rows, matching = _audit(handle, RunDir(tmp_path / "stopped").create())
    by_broker = {r.broker: r for r in rows}
    assert by_broker[victim].source == FROM_FILES, by_broker[victim]
    assert (by_broker[victim].leader, by_broker[victim].log_end_offset) == (-1, RECORDS)
    assert {r.epochs for r in rows} == {by_broker[leader].epochs}, "files and RPC differ"
    assert matching.ok, matching

    data_dir = endpoints.data_dir_of(handle.inspect(service), victim)
    _change_one_record(handle, service, data_dir)
    rows, matching = _audit(handle, RunDir(tmp_path / "changed").create())
    by_broker = {r.broker: r for r in rows}
    assert by_broker[victim].source == FROM_FILES
    [epoch] = [e for e in by_broker[leader].epochs if e.start_offset <= CHANGED < e.end_offset]
    assert not matching.ok
    [violation] = matching.violations
    assert violation.subject == f"{TOPIC}-0 leader epoch {epoch.leader_epoch}"
    assert f"audit row broker {victim} " in violation.explanation
    digests = {b: {e.leader_epoch: e.digest for e in r.epochs} for b, r in by_broker.items()}
    others = {digests[b][epoch.leader_epoch] for b in digests if b != victim}
    assert others == {epoch.digest}
    assert digests[victim][epoch.leader_epoch] != epoch.digest

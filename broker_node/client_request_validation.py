"""Checks of every field of the data-plane requests a broker serves (Produce, Fetch,
OffsetsForLeaderEpoch, Metadata), before the replica manager or the metadata cache is
asked; the shared rules and `Verdict` are `broker_node.request_validation`'s
(docs/security.md, "Limits and validation"). Pure; any thread (gRPC workers call it).
"""

from __future__ import annotations

from broker_node.validation_rules import (
    Verdict,
    invalid_entries,
    legal_topic,
    list_problem,
    refuse,
    timeout_problem,
    topic_partition_entry,
)
from domain import NO_EPOCH, TopicPartition
from rpc import limits
from rpc import messages as m
from rpc.errors import Errors


def produce_entry(entry: m.PartitionRecords, named_twice: bool) -> tuple[Errors, str]:
    """One partition of a Produce: its name, not named twice in the request, the number of
    records and their timestamps (an error refuses only this partition's records)."""
    error, why = topic_partition_entry(entry.topic_partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    if error is not Errors.NONE:
        return error, why
    if named_twice:
        return Errors.INVALID_REQUEST, "partition named twice in one request"
    if not entry.records:
        return Errors.INVALID_REQUEST, "no records"
    if len(entry.records) > limits.MAX_RECORDS_PER_PRODUCE:
        return (
            Errors.RECORD_LIST_TOO_LARGE,
            f"{len(entry.records)} records, over {limits.MAX_RECORDS_PER_PRODUCE}",
        )
    if min(r.timestamp_ms for r in entry.records) < -1:
        return Errors.INVALID_TIMESTAMP, "a record timestamp below -1"
    return Errors.NONE, ""


def named_twice(request: m.ProduceRequest) -> frozenset[TopicPartition]:
    """The partitions a Produce names more than once (every entry of them is refused:
    which one to append would be a guess)."""
    seen: set[TopicPartition] = set()
    twice: set[TopicPartition] = set()
    for entry in request.partitions:
        tp = entry.topic_partition
        (twice if tp in seen else seen).add(tp)
    return frozenset(twice)


def produce(request: m.ProduceRequest) -> Verdict:
    """Produce: acks, timeout and the number of partitions refuse the whole request; then
    each partition on its own (`produce_entry`)."""
    if request.acks not in (0, 1, -1):
        return refuse(f"acks {request.acks}", Errors.INVALID_REQUIRED_ACKS)
    problem = timeout_problem("timeout_ms", request.timeout_ms)
    if problem:
        return refuse(problem)
    if not request.partitions:
        return refuse("no partitions")
    if len(request.partitions) > limits.MAX_PARTITIONS_PER_REQUEST:
        return refuse(
            f"{len(request.partitions)} partitions, over {limits.MAX_PARTITIONS_PER_REQUEST}"
        )
    twice = named_twice(request)
    return invalid_entries(
        (p.topic_partition, *produce_entry(p, p.topic_partition in twice))
        for p in request.partitions
    )


def _fetch_entry(f: m.FetchPartition) -> tuple[Errors, str]:
    error, why = topic_partition_entry(f.topic_partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    if error is not Errors.NONE:
        return error, why
    if f.fetch_offset < 0:
        return Errors.OFFSET_OUT_OF_RANGE, f"fetch offset {f.fetch_offset}"
    if f.current_leader_epoch < NO_EPOCH:
        return Errors.INVALID_REQUEST, f"current leader epoch {f.current_leader_epoch}"
    if not 1 <= f.max_records <= limits.MAX_RECORDS_PER_FETCH_PARTITION:
        return Errors.INVALID_REQUEST, f"max_records {f.max_records}"
    return Errors.NONE, ""


def fetch(request: m.FetchRequest) -> Verdict:
    """Fetch: the replica id (-1 for a consumer), the session id and epoch (KIP-227), the
    wait, bounds, no partition twice (forgotten ones included), then each partition."""
    if request.replica_id < -1:
        return refuse(f"replica_id {request.replica_id} is below -1")
    if request.session_id < 0 or request.session_epoch < m.FINAL_EPOCH:
        return refuse(
            f"fetch session {request.session_id} at epoch {request.session_epoch}: "
            f"the id must not be negative, the epoch not below {m.FINAL_EPOCH}"
        )
    if request.forgotten and request.is_full:
        return refuse("a full fetch forgets no partition")
    problem = (
        timeout_problem("max_wait_ms", request.max_wait_ms)
        or list_problem([(f.topic, f.partition) for f in request.partitions])
        or list_problem([(tp.topic, tp.partition) for tp in request.forgotten])
    )
    if problem:
        return refuse(problem)
    return invalid_entries((f.topic_partition, *_fetch_entry(f)) for f in request.partitions)


def _epoch_entry(e: m.EpochPartition) -> tuple[Errors, str]:
    error, why = topic_partition_entry(
        TopicPartition(e.topic, e.partition), Errors.UNKNOWN_TOPIC_OR_PARTITION
    )
    if error is not Errors.NONE:
        return error, why
    if e.current_leader_epoch < NO_EPOCH or e.leader_epoch < NO_EPOCH:
        return Errors.INVALID_REQUEST, "leader epoch below -1"
    return Errors.NONE, ""


def offsets_for_leader_epoch(request: m.OffsetsForLeaderEpochRequest) -> Verdict:
    """OffsetsForLeaderEpoch: the replica id, the bound, then each partition (a partition
    asked twice is answered twice, as a read)."""
    if request.replica_id < -1:
        return refuse(f"replica_id {request.replica_id} is below -1")
    if len(request.partitions) > limits.MAX_PARTITIONS_PER_REQUEST:
        return refuse(f"{len(request.partitions)} partitions")
    return invalid_entries(
        (TopicPartition(e.topic, e.partition), *_epoch_entry(e)) for e in request.partitions
    )


def metadata(request: m.MetadataRequest) -> Verdict:
    """Metadata: the bound on topics; an illegal name is answered INVALID_TOPIC_EXCEPTION
    (entries keyed by partition -1, as Metadata names topics only)."""
    if len(request.topics) > limits.MAX_TOPICS_PER_METADATA_REQUEST:
        return refuse(f"{len(request.topics)} topics")
    return invalid_entries(
        (TopicPartition(t, -1), Errors.INVALID_TOPIC_EXCEPTION, "illegal topic name")
        for t in request.topics
        if not legal_topic(t)
    )

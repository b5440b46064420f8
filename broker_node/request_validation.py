"""Checks of every field of every request a broker serves, before any state is touched
(docs/security.md, "Limits and validation").

Pure functions of a request returning a `Verdict`: a request-level error (the request is
refused as a whole and nothing is applied) and per-entry errors (those entries are answered
with their error and skipped; the others are applied). Each check is O(size of the
request), takes no lock and makes no ZooKeeper call. Errors are Kafka's:

    INVALID_REQUEST (42)             a header id or epoch below its range, a list over its
                                     bound (`rpc.limits`), a partition listed twice, a
                                     negative partition number or epoch, a bad endpoint,
                                     an unknown election type, a timeout out of range
    INVALID_TOPIC_EXCEPTION (17)     a topic name Kafka would refuse (empty, "." or "..",
                                     over 249 characters, other than [a-zA-Z0-9._-]); the
                                     log directory is named after the topic, so such a
                                     name must never reach the replica manager
    INVALID_REPLICA_ASSIGNMENT (39)  empty, negative, repeated or too many replicas, or a
                                     leader that is not one of them
    UNKNOWN_TOPIC_OR_PARTITION (3)   a negative partition in Produce or Fetch (Kafka's
                                     answer for a partition that cannot exist)
    OFFSET_OUT_OF_RANGE (1)          a negative fetch offset
    INVALID_REQUIRED_ACKS (21)       acks other than 0, 1, -1
    RECORD_LIST_TOO_LARGE (18)       more records than `MAX_RECORDS_PER_PRODUCE`
    INVALID_TIMESTAMP (32)           a record timestamp below -1

Any thread (gRPC workers call it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from rpc import limits
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    NO_LEADER,
    UNKNOWN_BROKER_EPOCH,
    TopicPartition,
)

#: Kafka's `Topic.MAX_NAME_LENGTH` and legal characters (`admin.topic_names` holds the
#: admin-side rule with Kafka's messages; this is the broker's O(1) check).
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
MAX_PORT = 65535
State = TypeVar(
    "State",
    m.LeaderAndIsrPartitionState,
    m.UpdateMetadataPartitionState,
    m.StopReplicaPartitionState,
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What validation found: `error` refuses the whole request; `invalid` lists entries
    to answer with their error and skip. `reason` says what was wrong first, for events."""

    error: Errors = Errors.NONE
    reason: str = ""
    invalid: Mapping[TopicPartition, Errors] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Nothing wrong at all."""
        return self.error is Errors.NONE and not self.invalid


VALID = Verdict()


def _refuse(reason: str, error: Errors = Errors.INVALID_REQUEST) -> Verdict:
    return Verdict(error, reason)


@functools.lru_cache(maxsize=65_536)
def legal_topic(name: str) -> bool:
    """Kafka's topic-name rule: 1..249 of [a-zA-Z0-9._-], and not "." or ".." (cached:
    a large request names the same few topics thousands of times)."""
    return _LEGAL_TOPIC.fullmatch(name) is not None and name not in (".", "..")


def _ids_problem(ids: tuple[int, ...], what: str) -> str | None:
    """Why a list of broker ids is bad (negative, repeated, over the bound), or None."""
    n = len(ids)
    if n == 0 or (n <= limits.MAX_REPLICAS_PER_PARTITION and min(ids) >= 0 and len(set(ids)) == n):
        return None
    if len(ids) > limits.MAX_REPLICAS_PER_PARTITION:
        return f"{what}: {len(ids)} ids, over {limits.MAX_REPLICAS_PER_PARTITION}"
    if ids and min(ids) < 0:
        return f"{what}: negative broker id"
    if len(set(ids)) != len(ids):
        return f"{what}: a broker id listed twice"
    return None


def _list_problem(keys: list[tuple[str, int]]) -> str | None:
    """Over the bound, or a (topic, partition) listed twice."""
    if len(keys) > limits.MAX_PARTITIONS_PER_REQUEST:
        return f"{len(keys)} partitions, over {limits.MAX_PARTITIONS_PER_REQUEST}"
    if len(set(keys)) == len(keys):
        return None
    seen: set[tuple[str, int]] = set()
    for key in keys:
        if key in seen:
            return f"{key[0]}-{key[1]} listed twice"
        seen.add(key)
    return None  # not reached


def _invalid_entries(
    checked: Iterable[tuple[TopicPartition, Errors, str]],
) -> Verdict:
    invalid: dict[TopicPartition, Errors] = {}
    reason = ""
    for tp, error, why in checked:
        if error is not Errors.NONE:
            invalid[tp] = error
            reason = reason or f"{tp}: {why}"
    return Verdict(Errors.NONE, reason, invalid) if invalid else VALID


# -- control plane -------------------------------------------------------------------------


def header_problem(header: m.ControlHeader) -> str | None:
    """Why a control header is out of range, or None."""
    if header.controller_id < 0:
        return f"controller_id {header.controller_id} is negative"
    if header.controller_epoch < 0:
        return f"controller_epoch {header.controller_epoch} is negative"
    if header.broker_epoch < UNKNOWN_BROKER_EPOCH:
        return f"broker_epoch {header.broker_epoch} is below -1"
    return None


def _state_entry(
    s: m.LeaderAndIsrPartitionState | m.UpdateMetadataPartitionState,
    min_leader: int,
    min_leader_epoch: int,
    other_ids: dict[str, tuple[int, ...]],
) -> tuple[Errors, str]:
    """The checks LeaderAndIsr and UpdateMetadata states share."""
    if not legal_topic(s.topic):
        return Errors.INVALID_TOPIC_EXCEPTION, "illegal topic name"
    if s.partition < 0:
        return Errors.INVALID_REQUEST, "negative partition"
    if s.leader < min_leader:
        return Errors.INVALID_REQUEST, f"leader {s.leader} below {min_leader}"
    if s.controller_epoch < 0 or s.leader_epoch < min_leader_epoch or s.zk_version < -1:
        return Errors.INVALID_REQUEST, "negative controller epoch, leader epoch or zkVersion"
    problem = _ids_problem(s.replicas, "replicas")
    if problem:
        return Errors.INVALID_REPLICA_ASSIGNMENT, problem
    if s.leader >= 0 and s.replicas and s.leader not in s.replicas:
        return Errors.INVALID_REPLICA_ASSIGNMENT, f"leader {s.leader} is not a replica"
    for what, ids in other_ids.items():
        problem = _ids_problem(ids, what)
        if problem:
            return Errors.INVALID_REQUEST, problem
    return Errors.NONE, ""


def _leader_and_isr_entry(s: m.LeaderAndIsrPartitionState) -> tuple[Errors, str]:
    if not s.replicas:
        return Errors.INVALID_REPLICA_ASSIGNMENT, "no replicas"
    others = {"isr": s.isr, "adding": s.adding_replicas, "removing": s.removing_replicas}
    return _state_entry(s, NO_LEADER, 0, others)


def _live_leaders_problem(leaders: tuple[m.LiveLeader, ...]) -> str | None:
    if len(leaders) > limits.MAX_BROKERS_PER_REQUEST:
        return f"{len(leaders)} live leaders, over {limits.MAX_BROKERS_PER_REQUEST}"
    for x in leaders:
        problem = _endpoint_problem(x.broker_id, x.host, x.port)
        if problem:
            return f"live leader: {problem}"
    return None


def _endpoint_problem(broker_id: int, host: str, port: int) -> str | None:
    if broker_id < 0:
        return f"negative broker id {broker_id}"
    if len(host) > limits.MAX_HOST_LENGTH:
        return f"host of {len(host)} characters"
    if not 0 <= port <= MAX_PORT:
        return f"port {port} out of range"
    return None


def _control_request(
    header: m.ControlHeader,
    states: tuple[State, ...],
    entry: Callable[[State], tuple[Errors, str]],
    problem: str | None = None,
) -> Verdict:
    """The header, `problem` (another request-level check), the bound and no partition
    twice refuse the request; then `entry` judges each partition state."""
    problem = header_problem(header) or problem
    problem = problem or _list_problem([(s.topic, s.partition) for s in states])
    if problem:
        return _refuse(problem)
    invalid: dict[TopicPartition, Errors] = {}
    reason = ""
    for state in states:
        error, why = entry(state)
        if error is not Errors.NONE:
            invalid[state.topic_partition] = error
            reason = reason or f"{state.topic_partition}: {why}"
    return Verdict(Errors.NONE, reason, invalid) if invalid else VALID


def leader_and_isr(request: m.LeaderAndIsrRequest) -> Verdict:
    """LeaderAndIsr: header, live leaders, bounds, no partition twice, then each state."""
    return _control_request(
        request.header,
        request.partition_states,
        _leader_and_isr_entry,
        _live_leaders_problem(request.live_leaders),
    )


def _update_metadata_entry(s: m.UpdateMetadataPartitionState) -> tuple[Errors, str]:
    others = {"isr": s.isr, "offline_replicas": s.offline_replicas}
    return _state_entry(s, EPOCH_DURING_DELETE, NO_EPOCH, others)


def _live_brokers_problem(brokers: tuple[m.LiveBroker, ...]) -> str | None:
    if len(brokers) > limits.MAX_BROKERS_PER_REQUEST:
        return f"{len(brokers)} live brokers, over {limits.MAX_BROKERS_PER_REQUEST}"
    if len({b.id for b in brokers}) != len(brokers):
        return "a live broker listed twice"
    for b in brokers:
        if b.id < 0:
            return f"live broker: negative broker id {b.id}"
        if len(b.endpoints) > limits.MAX_ENDPOINTS_PER_BROKER:
            return f"broker {b.id}: {len(b.endpoints)} endpoints"
        if b.rack is not None and len(b.rack) > limits.MAX_HOST_LENGTH:
            return f"broker {b.id}: rack of {len(b.rack)} characters"
        for e in b.endpoints:
            problem = _endpoint_problem(b.id, e.host, e.port)
            if problem:
                return f"live broker: {problem}"
    return None


def update_metadata(request: m.UpdateMetadataRequest) -> Verdict:
    """UpdateMetadata: header, live brokers, bounds, no partition twice, then each state
    (invalid states are skipped; the cache takes the others)."""
    return _control_request(
        request.header,
        request.partition_states,
        _update_metadata_entry,
        _live_brokers_problem(request.live_brokers),
    )


def _stop_replica_entry(s: m.StopReplicaPartitionState) -> tuple[Errors, str]:
    error, why = _topic_partition_entry(s.topic_partition, Errors.INVALID_REQUEST)
    if error is not Errors.NONE:
        return error, why
    if s.leader_epoch < EPOCH_DURING_DELETE:
        return Errors.INVALID_REQUEST, f"leader epoch {s.leader_epoch} below -2"
    return Errors.NONE, ""


def stop_replica(request: m.StopReplicaRequest) -> Verdict:
    """StopReplica: header, bounds, no partition twice, then each partition."""
    return _control_request(request.header, request.partition_states, _stop_replica_entry)


def controlled_shutdown(request: m.ControlledShutdownRequest) -> Verdict:
    """ControlledShutdown: a broker id and a broker epoch (-1: unknown) in range."""
    if request.broker_id < 0:
        return _refuse(f"broker_id {request.broker_id} is negative")
    if request.broker_epoch < UNKNOWN_BROKER_EPOCH:
        return _refuse(f"broker_epoch {request.broker_epoch} is below -1")
    return VALID


def _timeout_problem(name: str, value: int) -> str | None:
    if not 0 <= value <= limits.MAX_TIMEOUT_MS:
        return f"{name} {value} out of [0, {limits.MAX_TIMEOUT_MS}]"
    return None


def elect_leaders(request: m.ElectLeadersRequest) -> Verdict:
    """ElectLeaders: election type 0 or 1, a timeout in range, bounds, no partition twice,
    then each partition (an illegal topic or a negative partition is answered for itself)."""
    if request.election_type not in (0, 1):
        return _refuse(f"election_type {request.election_type} is neither 0 nor 1")
    problem = _timeout_problem("timeout_ms", request.timeout_ms) or _list_problem(
        [(tp.topic, tp.partition) for tp in request.partitions]
    )
    if problem:
        return _refuse(problem)
    return _invalid_entries(
        (tp, *_topic_partition_entry(tp, Errors.INVALID_REQUEST)) for tp in request.partitions
    )


def _topic_partition_entry(tp: TopicPartition, negative: Errors) -> tuple[Errors, str]:
    if not legal_topic(tp.topic):
        return Errors.INVALID_TOPIC_EXCEPTION, "illegal topic name"
    if tp.partition < 0:
        return negative, "negative partition"
    return Errors.NONE, ""


# -- data plane ----------------------------------------------------------------------------


def produce(request: m.ProduceRequest) -> Verdict:
    """Produce: acks, timeout, the partition, the number of records and their timestamps
    (one partition per request, so every error refuses the whole request)."""
    if request.acks not in (0, 1, -1):
        return _refuse(f"acks {request.acks}", Errors.INVALID_REQUIRED_ACKS)
    problem = _timeout_problem("timeout_ms", request.timeout_ms)
    if problem:
        return _refuse(problem)
    error, why = _topic_partition_entry(request.topic_partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    if error is not Errors.NONE:
        return _refuse(why, error)
    if not request.records:
        return _refuse("no records")
    if len(request.records) > limits.MAX_RECORDS_PER_PRODUCE:
        return _refuse(
            f"{len(request.records)} records, over {limits.MAX_RECORDS_PER_PRODUCE}",
            Errors.RECORD_LIST_TOO_LARGE,
        )
    if min(r.timestamp_ms for r in request.records) < -1:
        return _refuse("a record timestamp below -1", Errors.INVALID_TIMESTAMP)
    return VALID


def _fetch_entry(f: m.FetchPartition) -> tuple[Errors, str]:
    error, why = _topic_partition_entry(f.topic_partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
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
    """Fetch: the replica id (-1 for a consumer), the wait, bounds, no partition twice,
    then each partition."""
    if request.replica_id < -1:
        return _refuse(f"replica_id {request.replica_id} is below -1")
    problem = _timeout_problem("max_wait_ms", request.max_wait_ms) or _list_problem(
        [(f.topic, f.partition) for f in request.partitions]
    )
    if problem:
        return _refuse(problem)
    return _invalid_entries((f.topic_partition, *_fetch_entry(f)) for f in request.partitions)


def _epoch_entry(e: m.EpochPartition) -> tuple[Errors, str]:
    error, why = _topic_partition_entry(
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
        return _refuse(f"replica_id {request.replica_id} is below -1")
    if len(request.partitions) > limits.MAX_PARTITIONS_PER_REQUEST:
        return _refuse(f"{len(request.partitions)} partitions")
    return _invalid_entries(
        (TopicPartition(e.topic, e.partition), *_epoch_entry(e)) for e in request.partitions
    )


def metadata(request: m.MetadataRequest) -> Verdict:
    """Metadata: the bound on topics; an illegal name is answered INVALID_TOPIC_EXCEPTION
    (entries keyed by partition -1, as Metadata names topics only)."""
    if len(request.topics) > limits.MAX_TOPICS_PER_METADATA_REQUEST:
        return _refuse(f"{len(request.topics)} topics")
    return _invalid_entries(
        (TopicPartition(t, -1), Errors.INVALID_TOPIC_EXCEPTION, "illegal topic name")
        for t in request.topics
        if not legal_topic(t)
    )

"""Checks of every field of the control requests a broker serves (LeaderAndIsr,
UpdateMetadata, StopReplica, ControlledShutdown, ElectLeaders), before any lock is taken or
any state is touched, over the rules the data plane shares (`broker_node.validation_rules`:
`Verdict`, Kafka's topic-name rule, the list bounds of `rpc.limits`; docs/security.md,
"Limits and validation", has every rule).

Pure functions of a request returning a `Verdict`: a request-level error (the request is
refused as a whole and nothing is applied), per-entry errors (those entries are answered
with their error and skipped; the others are applied) and live brokers or leaders with
unusable endpoints to leave out. Each check is O(size of the request), takes no lock and
makes no ZooKeeper call. Errors are Kafka's: INVALID_REQUEST (42) for ids, epochs, bounds
and duplicates; INVALID_TOPIC_EXCEPTION (17) for a topic name Kafka would refuse (the log
directory is named after the topic, so such a name must never reach the replica manager);
INVALID_REPLICA_ASSIGNMENT (39) for empty, negative or repeated replicas or a leader that
is not one of them.

Any thread (gRPC workers call it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from operator import attrgetter, itemgetter
from typing import Any, TypeVar

from broker_node.validation_rules import (
    VALID,
    Verdict,
    invalid_entries,
    legal_topic,
    list_problem,
    refuse,
    timeout_problem,
    topic_partition_entry,
)
from domain import EPOCH_DURING_DELETE, NO_EPOCH, NO_LEADER, UNKNOWN_BROKER_EPOCH, TopicPartition
from rpc import limits
from rpc import messages as m
from rpc.errors import Errors

MAX_PORT = 65535
State = TypeVar(
    "State",
    m.LeaderAndIsrPartitionState,
    m.UpdateMetadataPartitionState,
    m.StopReplicaPartitionState,
)


@functools.lru_cache(maxsize=4096)
def _ids_ok(ids: tuple[int, ...]) -> bool:
    """No negative, repeated or extra broker id (the common case, checked first; cached:
    a request of thousands of partitions names the same few replica lists)."""
    n = len(ids)
    return n == 0 or (
        n <= limits.MAX_REPLICAS_PER_PARTITION and min(ids) >= 0 and len(set(ids)) == n
    )


def _ids_problem(ids: tuple[int, ...], what: str) -> str | None:
    """Why a list of broker ids is bad (negative, repeated, over the bound), or None."""
    if _ids_ok(ids):
        return None
    if len(ids) > limits.MAX_REPLICAS_PER_PARTITION:
        return f"{what}: {len(ids)} ids, over {limits.MAX_REPLICAS_PER_PARTITION}"
    if ids and min(ids) < 0:
        return f"{what}: negative broker id"
    if len(set(ids)) != len(ids):
        return f"{what}: a broker id listed twice"
    return None


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


_FINE = (Errors.NONE, "")


def _leader_and_isr_entry(s: m.LeaderAndIsrPartitionState) -> tuple[Errors, str]:
    replicas = s.replicas
    if (  # the common case in one expression: a valid state costs no more than this
        replicas
        and s.partition >= 0
        and s.controller_epoch >= 0
        and s.leader_epoch >= 0
        and s.zk_version >= -1
        and (s.leader == NO_LEADER or (s.leader >= 0 and s.leader in replicas))
        and legal_topic(s.topic)
        and _ids_ok(replicas)
        and _ids_ok(s.isr)
        and _ids_ok(s.adding_replicas)
        and _ids_ok(s.removing_replicas)
    ):
        return _FINE
    if not replicas:
        return Errors.INVALID_REPLICA_ASSIGNMENT, "no replicas"
    others = {"isr": s.isr, "adding": s.adding_replicas, "removing": s.removing_replicas}
    return _state_entry(s, NO_LEADER, 0, others)


#: A request-level problem, and the brokers to leave out with the first reason why.
_BrokerCheck = tuple[str | None, frozenset[int], str]


def _brokers_problem(ids: list[int], what: str) -> str | None:
    """Over the bound, a negative id or an id listed twice (these refuse the request)."""
    if len(ids) > limits.MAX_BROKERS_PER_REQUEST:
        return f"{len(ids)} {what}, over {limits.MAX_BROKERS_PER_REQUEST}"
    if ids and min(ids) < 0:
        return f"{what}: negative broker id"
    if len(set(ids)) != len(ids):
        return f"{what}: a broker listed twice"
    return None


def _endpoint_problem(host: str, port: int) -> str | None:
    if len(host) > limits.MAX_HOST_LENGTH:
        return f"host of {len(host)} characters"
    if not 0 <= port <= MAX_PORT:
        return f"port {port} out of range"
    return None


def _live_leaders(leaders: tuple[m.LiveLeader, ...]) -> _BrokerCheck:
    problem = _brokers_problem([x.broker_id for x in leaders], "live leaders")
    unusable = {x.broker_id: _endpoint_problem(x.host, x.port) for x in leaders}
    return _left_out(problem, unusable, "live leader")


def _left_out(problem: str | None, unusable: dict[int, str | None], what: str) -> _BrokerCheck:
    left_out = frozenset(b for b, why in unusable.items() if why)
    first = next((f"{what} {b}: {why}" for b, why in unusable.items() if why), "")
    return problem, left_out, first


def _control_request(
    header: m.ControlHeader,
    states: tuple[State, ...],
    entry: Callable[[State], tuple[Errors, str]],
    brokers: _BrokerCheck = (None, frozenset(), ""),
    all_fine: Callable[[tuple[State, ...]], bool] | None = None,
) -> Verdict:
    """The header, the brokers' request-level problem, the bound and no partition twice
    refuse the request; then `entry` judges each partition state, and the brokers to leave
    out are passed on. `all_fine(states)`, when given and true, vouches that `entry` finds
    nothing wrong with any state, so that none is judged one by one."""
    problem, left_out, why_left_out = brokers
    problem = header_problem(header) or problem
    problem = problem or list_problem(list(map(_topic_and_partition, states)))
    if problem:
        return refuse(problem)
    if all_fine is not None and all_fine(states):
        return Verdict(Errors.NONE, why_left_out, {}, left_out) if left_out else VALID
    invalid: dict[TopicPartition, Errors] = {}
    reason = ""
    for state in states:
        error, why = entry(state)
        if error is not Errors.NONE:
            invalid[state.topic_partition] = error
            reason = reason or f"{state.topic_partition}: {why}"
    if not invalid and not left_out:
        return VALID
    return Verdict(Errors.NONE, reason or why_left_out, invalid, left_out)


def leader_and_isr(request: m.LeaderAndIsrRequest) -> Verdict:
    """LeaderAndIsr: header, live leaders, bounds, no partition twice, then each state."""
    return _control_request(
        request.header,
        request.partition_states,
        _leader_and_isr_entry,
        _live_leaders(request.live_leaders),
        _leader_and_isr_all_fine,
    )


# -- whole requests at once ----------------------------------------------------------------
#
# A request of 100,000 partition states names a few topics and a few replica lists, and its
# integers are in range. Checked column by column (passes in C over each field, and each
# distinct topic, list or leader-and-replicas pair once), a valid request costs a fifth of
# judging its entries one by one; any doubt falls back to that, which finds the same.

_topic_and_partition = itemgetter(0, 1)
_topic, _partition, _controller_epoch = (
    attrgetter("topic"),
    attrgetter("partition"),
    (attrgetter("controller_epoch")),
)
_leader, _leader_epoch, _zk_version = (
    attrgetter("leader"),
    attrgetter("leader_epoch"),
    attrgetter("zk_version"),
)
_isr, _replicas = attrgetter("isr"), attrgetter("replicas")


def _at_least(states: Sequence[object], field: Callable[[Any], int], low: int) -> bool:
    return min(map(field, states)) >= low


def _lists_ok(*columns: list[tuple[int, ...]]) -> bool:
    return all(_ids_ok(ids) for column in columns for ids in set(column))


def _shared_fields_fine(
    states: Sequence[m.LeaderAndIsrPartitionState | m.UpdateMetadataPartitionState],
    min_leader_epoch: int,
) -> bool:
    return (
        _at_least(states, _partition, 0)
        and _at_least(states, _controller_epoch, 0)
        and _at_least(states, _leader_epoch, min_leader_epoch)
        and _at_least(states, _zk_version, -1)
        and all(legal_topic(t) for t in set(map(_topic, states)))
    )


def _leader_and_isr_all_fine(states: tuple[m.LeaderAndIsrPartitionState, ...]) -> bool:
    """Whether `_leader_and_isr_entry` passes every state."""
    if not states:
        return True
    replicas = list(map(_replicas, states))
    return (
        all(replicas)
        and _shared_fields_fine(states, 0)
        and all(
            leader == NO_LEADER or (leader >= 0 and leader in listed)
            for leader, listed in set(zip(map(_leader, states), replicas, strict=True))
        )
        and _lists_ok(
            replicas,
            list(map(_isr, states)),
            list(map(attrgetter("adding_replicas"), states)),
            list(map(attrgetter("removing_replicas"), states)),
        )
    )


def _update_metadata_all_fine(states: tuple[m.UpdateMetadataPartitionState, ...]) -> bool:
    """Whether `_update_metadata_entry` passes every state."""
    if not states:
        return True
    replicas = list(map(_replicas, states))
    return (
        _shared_fields_fine(states, NO_EPOCH)
        and all(
            leader >= EPOCH_DURING_DELETE and (leader < 0 or not listed or leader in listed)
            for leader, listed in set(zip(map(_leader, states), replicas, strict=True))
        )
        and _lists_ok(
            replicas, list(map(_isr, states)), list(map(attrgetter("offline_replicas"), states))
        )
    )


def _update_metadata_entry(s: m.UpdateMetadataPartitionState) -> tuple[Errors, str]:
    if (  # the common case, as for LeaderAndIsr
        s.partition >= 0
        and s.controller_epoch >= 0
        and s.leader_epoch >= NO_EPOCH
        and s.zk_version >= -1
        and (s.leader < 0 or not s.replicas or s.leader in s.replicas)
        and s.leader >= EPOCH_DURING_DELETE
        and legal_topic(s.topic)
        and _ids_ok(s.replicas)
        and _ids_ok(s.isr)
        and _ids_ok(s.offline_replicas)
    ):
        return _FINE
    others = {"isr": s.isr, "offline_replicas": s.offline_replicas}
    return _state_entry(s, EPOCH_DURING_DELETE, NO_EPOCH, others)


def _live_broker_problem(b: m.LiveBroker) -> str | None:
    if len(b.endpoints) > limits.MAX_ENDPOINTS_PER_BROKER:
        return f"{len(b.endpoints)} endpoints"
    if b.rack is not None and len(b.rack) > limits.MAX_HOST_LENGTH:
        return f"rack of {len(b.rack)} characters"
    return next(filter(None, (_endpoint_problem(e.host, e.port) for e in b.endpoints)), None)


def _live_brokers(brokers: tuple[m.LiveBroker, ...]) -> _BrokerCheck:
    problem = _brokers_problem([b.id for b in brokers], "live brokers")
    return _left_out(problem, {b.id: _live_broker_problem(b) for b in brokers}, "live broker")


def update_metadata(request: m.UpdateMetadataRequest) -> Verdict:
    """UpdateMetadata: header, live brokers, bounds, no partition twice, then each state
    (invalid states are skipped; the cache takes the others)."""
    return _control_request(
        request.header,
        request.partition_states,
        _update_metadata_entry,
        _live_brokers(request.live_brokers),
        _update_metadata_all_fine,
    )


def _stop_replica_entry(s: m.StopReplicaPartitionState) -> tuple[Errors, str]:
    error, why = topic_partition_entry(s.topic_partition, Errors.INVALID_REQUEST)
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
        return refuse(f"broker_id {request.broker_id} is negative")
    if request.broker_epoch < UNKNOWN_BROKER_EPOCH:
        return refuse(f"broker_epoch {request.broker_epoch} is below -1")
    return VALID


def elect_leaders(request: m.ElectLeadersRequest) -> Verdict:
    """ElectLeaders: election type 0 or 1, a timeout in range, bounds, no partition twice,
    then each partition (an illegal topic or a negative partition is answered for itself)."""
    if request.election_type not in (0, 1):
        return refuse(f"election_type {request.election_type} is neither 0 nor 1")
    problem = timeout_problem("timeout_ms", request.timeout_ms) or list_problem(
        [(tp.topic, tp.partition) for tp in request.partitions]
    )
    if problem:
        return refuse(problem)
    return invalid_entries(
        (tp, *topic_partition_entry(tp, Errors.INVALID_REQUEST)) for tp in request.partitions
    )

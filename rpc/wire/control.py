"""Control plane on the wire: LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown
and ElectLeaders converted between `rpc.messages` and protobuf, partition states laid out
in columns, and the encodings of one LeaderAndIsr or UpdateMetadata body shared by the
senders to every broker. The servicer is `rpc.wire.control_server`'s. Any thread: the
controller's send threads encode, gRPC worker threads decode.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from itertools import repeat
from typing import Any

from google.protobuf.message import Message

from domain import EndPoint, TopicPartition
from rpc import columns
from rpc import messages as m
from rpc.errors import Errors
from testbed_rpc import control_pb2 as pb

# -- conversions -----------------------------------------------------------------------


def _header_to_pb(h: m.ControlHeader) -> pb.ControlHeader:
    return pb.ControlHeader(
        controller_id=h.controller_id,
        controller_epoch=h.controller_epoch,
        broker_epoch=h.broker_epoch,
    )


def _header_from_pb(h: pb.ControlHeader) -> m.ControlHeader:
    return m.ControlHeader(h.controller_id, h.controller_epoch, h.broker_epoch)


def _add_errors(field: Any, errors: Sequence[m.PartitionError]) -> None:
    """One `TopicErrors` per run of consecutive partitions of one topic, in order."""
    add = field.add
    topic: str | None = None
    partitions: list[int] = []
    codes: list[int] = []
    for (name, partition), error in errors:
        if name != topic:
            if topic is not None:
                add(topic=topic, partitions=partitions, error_codes=codes)
            topic, partitions, codes = name, [], []
        partitions.append(partition)
        codes.append(error)
    if topic is not None:
        add(topic=topic, partitions=partitions, error_codes=codes)


# The per-partition entries below are named tuples built positionally, in their fields'
# order, with `tuple.__new__` (which skips the named tuple's own `__new__`, a Python
# frame): a request or answer of the controller names up to one entry per partition. The
# other way, entries are added to the repeated field in place (`add`), never built and then
# copied into it, which takes a third more time for 10,000 partitions.


def _errors_from_pb(groups: Any) -> m.PartitionErrors:
    """The errors of every run, in order, kept as runs (`m.PartitionErrors`). A run with
    fewer codes than partitions (only a peer that is not this code sends one) answers the
    rest UNKNOWN_SERVER_ERROR."""
    runs = []
    for group in groups:
        partitions, codes = tuple(group.partitions), tuple(group.error_codes)
        if len(codes) != len(partitions):
            codes = (codes + (-1,) * len(partitions))[: len(partitions)]
        runs.append(m.ErrorRun(group.topic, partitions, codes))
    return m.PartitionErrors(runs)


def leader_and_isr_request_to_pb(r: m.LeaderAndIsrRequest) -> pb.LeaderAndIsrRequest:
    """Domain -> protobuf. The states and live leaders of a large request are encoded once
    for every broker that is sent the same tuple of states (`_SharedEncodings`)."""
    out = pb.LeaderAndIsrRequest(header=_header_to_pb(r.header))
    if len(r.partition_states) < SHARED_STATES_MIN:
        _add_leader_and_isr_body(out, r)
    else:
        out.MergeFrom(_shared_leader_and_isr.encoded(r))
    return out


def _add_leader_and_isr_body(out: pb.LeaderAndIsrRequest, r: m.LeaderAndIsrRequest) -> None:
    _add_columns(out, r.partition_states, columns.LEADER_AND_ISR)
    leaders = out.live_leaders.add
    for x in r.live_leaders:
        leaders(broker_id=x.broker_id, host=x.host, port=x.port)


def leader_and_isr_request_from_pb(r: pb.LeaderAndIsrRequest) -> m.LeaderAndIsrRequest:
    """Protobuf -> domain. Raises `MalformedStates` when the columns do not line up."""
    return m.LeaderAndIsrRequest(
        header=_header_from_pb(r.header),
        partition_states=_states_from_columns(
            r, m.LeaderAndIsrPartitionState, columns.LEADER_AND_ISR, "LeaderAndIsr"
        ),
        live_leaders=tuple(m.LiveLeader(x.broker_id, x.host, x.port) for x in r.live_leaders),
    )


# -- partition states in columns (`rpc.columns`) ------------------------------------------

#: Field of a partition state -> its column in a `*States` message.
_WIRE_NAMES = {
    "topic": "topics",
    "partition": "partitions",
    "controller_epoch": "controller_epochs",
    "leader": "leaders",
    "leader_epoch": "leader_epochs",
    "zk_version": "zk_versions",
    "isr": "isrs",
    "replicas": "replicas",
    "adding_replicas": "adding_replicas",
    "removing_replicas": "removing_replicas",
    "offline_replicas": "offline_replicas",
    "is_new": "is_new",
}


class MalformedStates(ValueError):
    """A request's state columns do not line up: a column of another length than the
    topics column, or an index outside the request's topic names or broker-id lists."""


def _add_columns(
    out: pb.LeaderAndIsrRequest | pb.UpdateMetadataRequest,
    states: tuple[Any, ...],
    shape: columns.Shape,
) -> None:
    """Add `states` to `out` as columns and the tables they point into."""
    layout = columns.lay_out(states, shape)
    out.topic_names.extend(layout.topics)
    add_list = out.replica_lists.add
    for ids in layout.lists:
        add_list(ids=ids)
    block = out.states
    for name, column in layout.columns.items():
        if column is not None:
            getattr(block, _WIRE_NAMES[name]).extend(column)


def _states_from_columns(
    r: pb.LeaderAndIsrRequest | pb.UpdateMetadataRequest,
    state_type: type[Any],
    shape: columns.Shape,
    kind: str,
) -> tuple[Any, ...]:
    """The partition states of `r`, in order, as `state_type` tuples. States that name the
    same topic or broker-id list share one object."""
    tables: dict[str, list[Any]] = {"topic": list(r.topic_names)}
    lists = [tuple(x.ids) for x in r.replica_lists]
    tables.update((name, lists) for name in (*shape.lists, *shape.optional_lists))
    defaults = {
        **{name: () for name in shape.optional_lists},
        **{name: False for name in shape.flags},
    }
    block = r.states
    n = len(block.topics)
    row: list[Any] = []
    for name in state_type._fields:
        wire = _WIRE_NAMES[name]
        column = getattr(block, wire)
        if not column and name in defaults:
            row.append(repeat(defaults[name], n))
            continue
        if len(column) != n:
            raise MalformedStates(f"{kind}: {n} topics but {len(column)} {wire}")
        table = tables.get(name)
        if table is None:
            row.append(column)
            continue
        if n and (min(column) < 0 or max(column) >= len(table)):
            raise MalformedStates(
                f"{kind}: {wire} names an entry outside the {len(table)} the request holds"
            )
        row.append(map(table.__getitem__, column))
    return tuple(map(partial(tuple.__new__, state_type), zip(*row, strict=True)))


def leader_and_isr_response_to_pb(r: m.LeaderAndIsrResponse) -> pb.LeaderAndIsrResponse:
    """Domain -> protobuf."""
    out = pb.LeaderAndIsrResponse(error_code=int(r.error))
    _add_errors(out.topic_errors, r.partition_errors)
    return out


def leader_and_isr_response_from_pb(r: pb.LeaderAndIsrResponse) -> m.LeaderAndIsrResponse:
    """Protobuf -> domain."""
    return m.LeaderAndIsrResponse(Errors.from_code(r.error_code), _errors_from_pb(r.topic_errors))


def _endpoint_to_pb(e: EndPoint) -> pb.Endpoint:
    return pb.Endpoint(
        listener=e.listener, host=e.host, port=e.port, security_protocol=e.security_protocol
    )


#: Below this many partition states a LeaderAndIsr or UpdateMetadata is built directly,
#: not shared.
SHARED_STATES_MIN = 100


class _SharedEncodings:
    """The protobuf body (everything but the header) of the last few large requests of one
    kind, by the identity of their tuple of partition states. The controller sends every
    broker that hosts the same partitions the same tuple of states (`controller.
    request_batch`), so the request to each further broker copies the body in C instead of
    filling its columns again (about 11 ms for 10,000 states on a slow core). `rest(request)`
    names the other fields the body holds (a LeaderAndIsr's live leaders): a kept body
    serves only a request whose are equal. A kept tuple is referenced, so its identity
    cannot pass to another while kept. Any thread (the senders convert concurrently)."""

    def __init__(
        self,
        make: Callable[[], Message],
        fill: Callable[[Any, Any], None],
        rest: Callable[[Any], object],
        keep: int,
    ) -> None:
        self._make: Callable[[], Message] = make
        self._fill: Callable[[Any, Any], None] = fill
        self._rest: Callable[[Any], object] = rest
        self._keep = keep
        self._lock = threading.Lock()
        self._building = threading.Lock()
        self._kept: OrderedDict[int, tuple[tuple[Any, ...], object, Message]] = OrderedDict()

    def encoded(self, request: m.LeaderAndIsrRequest | m.UpdateMetadataRequest) -> Any:
        """A message holding `request`'s body (the caller merges it into its own). The
        senders to several brokers ask at once: one builds, the others wait for it."""
        states, rest = request.partition_states, self._rest(request)
        kept = self._lookup(states, rest)
        if kept is not None:
            return kept
        with self._building:
            kept = self._lookup(states, rest)
            if kept is not None:
                return kept
            body = self._make()
            self._fill(body, request)
            with self._lock:
                self._kept[id(states)] = (states, rest, body)
                while len(self._kept) > self._keep:
                    self._kept.popitem(last=False)
        return body

    def _lookup(self, states: tuple[Any, ...], rest: object) -> Message | None:
        with self._lock:
            kept = self._kept.get(id(states))
        if kept is not None and kept[0] is states and kept[1] == rest:
            return kept[2]
        return None


def _add_update_metadata_states(out: pb.UpdateMetadataRequest, r: m.UpdateMetadataRequest) -> None:
    _add_columns(out, r.partition_states, columns.UPDATE_METADATA)


def update_metadata_request_to_pb(r: m.UpdateMetadataRequest) -> pb.UpdateMetadataRequest:
    """Domain -> protobuf. The states of a large request are encoded once for every
    broker that is sent the same tuple of them (`_SharedEncodings`)."""
    out = pb.UpdateMetadataRequest(
        header=_header_to_pb(r.header),
        live_brokers=[
            pb.LiveBroker(
                id=b.id, endpoints=[_endpoint_to_pb(e) for e in b.endpoints], rack=b.rack or ""
            )
            for b in r.live_brokers
        ],
    )
    if len(r.partition_states) < SHARED_STATES_MIN:
        _add_update_metadata_states(out, r)
    else:
        out.MergeFrom(_shared_update_metadata.encoded(r))
    return out


_shared_leader_and_isr = _SharedEncodings(
    pb.LeaderAndIsrRequest, _add_leader_and_isr_body, lambda r: r.live_leaders, keep=8
)
_shared_update_metadata = _SharedEncodings(
    pb.UpdateMetadataRequest, _add_update_metadata_states, lambda r: None, keep=8
)


def update_metadata_request_from_pb(r: pb.UpdateMetadataRequest) -> m.UpdateMetadataRequest:
    """Protobuf -> domain. Raises `MalformedStates` when the columns do not line up."""
    return m.UpdateMetadataRequest(
        header=_header_from_pb(r.header),
        partition_states=_states_from_columns(
            r, m.UpdateMetadataPartitionState, columns.UPDATE_METADATA, "UpdateMetadata"
        ),
        live_brokers=tuple(_live_broker_from_pb(b) for b in r.live_brokers),
    )


def stop_replica_request_to_pb(r: m.StopReplicaRequest) -> pb.StopReplicaRequest:
    """Domain -> protobuf."""
    out = pb.StopReplicaRequest(header=_header_to_pb(r.header))
    add = out.partition_states.add
    for s in r.partition_states:
        add(
            topic=s.topic,
            partition=s.partition,
            leader_epoch=s.leader_epoch,
            delete_partition=s.delete_partition,
        )
    return out


def stop_replica_request_from_pb(r: pb.StopReplicaRequest) -> m.StopReplicaRequest:
    """Protobuf -> domain."""
    return m.StopReplicaRequest(
        header=_header_from_pb(r.header),
        partition_states=tuple(
            m.StopReplicaPartitionState(s.topic, s.partition, s.leader_epoch, s.delete_partition)
            for s in r.partition_states
        ),
    )


def stop_replica_response_to_pb(r: m.StopReplicaResponse) -> pb.StopReplicaResponse:
    """Domain -> protobuf."""
    out = pb.StopReplicaResponse(error_code=int(r.error))
    _add_errors(out.topic_errors, r.partition_errors)
    return out


def stop_replica_response_from_pb(r: pb.StopReplicaResponse) -> m.StopReplicaResponse:
    """Protobuf -> domain."""
    return m.StopReplicaResponse(Errors.from_code(r.error_code), _errors_from_pb(r.topic_errors))


def controlled_shutdown_response_to_pb(
    r: m.ControlledShutdownResponse,
) -> pb.ControlledShutdownResponse:
    """Domain -> protobuf."""
    return pb.ControlledShutdownResponse(
        error_code=int(r.error),
        remaining_partitions=[
            pb.TopicPartition(topic=tp.topic, partition=tp.partition)
            for tp in r.remaining_partitions
        ],
    )


def controlled_shutdown_response_from_pb(
    r: pb.ControlledShutdownResponse,
) -> m.ControlledShutdownResponse:
    """Protobuf -> domain."""
    return m.ControlledShutdownResponse(
        Errors.from_code(r.error_code),
        tuple(TopicPartition(tp.topic, tp.partition) for tp in r.remaining_partitions),
    )


def _live_broker_from_pb(b: Any) -> m.LiveBroker:
    return m.LiveBroker(
        id=b.id,
        endpoints=tuple(
            EndPoint(e.host, e.port, e.listener, e.security_protocol) for e in b.endpoints
        ),
        rack=b.rack or None,
    )

"""`RequestBatch`: collects one round of control requests and sends them once.

At most one LeaderAndIsr, one UpdateMetadata and one StopReplica per broker per `send`
(Kafka's `ControllerBrokerRequestBatch`), each split into parts only when it would not fit
under gRPC's message limit (`controller.request_split`). The UpdateMetadata of a round
names the same partition states for every broker, and so does its LeaderAndIsr for
every broker hosting the same partitions: such a request is cut into parts once and each
broker gets the same parts under its own header (the wire encodes them once). Adding a
LeaderAndIsr also adds its partition to the UpdateMetadata of every live broker. Every
request carries the controller id, the controller epoch and the target's broker epoch.

Answers: a LeaderAndIsr, and a StopReplica that deletes partitions of topics whose
deletion has started, carry a response callback. It turns the answer into a typed result
(`controller.control_responses`) and that into the event the controller acts on
(`response_event`): LeaderAndIsrResponseReceived for KAFKA_STORAGE_ERROR partitions,
TopicDeletionStopReplicaResponseReceived for the deleted partitions of those topics
(decided when the batch is sent; Kafka decides when the answer arrives, and a topic's
deletion, once started, lasts until every answer is in). The callback only enqueues.

Bug switch `kafka-2300` (docs/bugs.md): a round that failed, while being built or sent,
stays in the batch, so every later `new_batch` refuses to start and the controller's state
changes fail until it resigns.

Event thread only, except the response callbacks, which run on
`controller-to-broker-<id>-send-thread`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, KeysView
from operator import is_

from controller import events as ev
from controller.channel_manager import ControlRequest, ControlResponse, ResponseCallback
from controller.context import ControllerContext
from controller.control_responses import (
    ControlResult,
    LeaderAndIsrResult,
    StopReplicaResult,
    control_result,
    deleted_partitions,
)
from controller.request_split import split_by_size
from controller.request_states import during_delete, leader_and_isr_state
from domain import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from rpc import messages as m
from rpc import sizes
from zkdata.model import ReplicaAssignment

Send = Callable[[int, ControlRequest, ResponseCallback | None], bool]
#: Sends, in a batch of its own, UpdateMetadata with `partitions` to `brokers` (the active
#: controller's `_send_update_metadata`, handed to the duties that need it).
SendUpdateMetadata = Callable[[frozenset[int], list[TopicPartition]], None]
#: One partition of `RequestBatch.add_leader_and_isrs`: the brokers to tell, the partition,
#: its leadership and its assignment.
LeaderAndIsrEntry = tuple[
    Iterable[int], TopicPartition, LeaderIsrAndControllerEpoch, ReplicaAssignment
]
#: Puts an event on the controller's queue from any thread (`Watchers.enqueue`).
Enqueue = Callable[[ev.ControllerEvent], None]


def response_event(broker_id: int, result: ControlResult) -> ev.ControllerEvent | None:
    """The event the controller acts on for `broker_id`'s answer, or None (pure; any
    thread): LeaderAndIsr partitions with KAFKA_STORAGE_ERROR go offline, and the deleted
    partitions of a StopReplica count for topic deletion."""
    match result:
        case LeaderAndIsrResult() if result.storage_errors:
            return ev.LeaderAndIsrResponseReceived(broker_id, result)
        case StopReplicaResult() if result.partition_errors:
            return ev.TopicDeletionStopReplicaResponseReceived(broker_id, result)
        case _:
            return None


class RequestBatch:
    """One round of requests, built against the controller context."""

    def __init__(
        self,
        controller_id: int,
        context: ControllerContext,
        send: Send,
        on_response_event: Enqueue | None = None,
        keep_failed_round: bool = False,
    ) -> None:
        """`on_response_event` receives the events brokers' answers bring; without it no
        request carries a response callback. `keep_failed_round` (bug switch `kafka-2300`)
        leaves a failed round in the batch."""
        self._controller_id = controller_id
        self._context = context
        self._send = send
        self._on_response_event = on_response_event
        self._keep_failed_round = keep_failed_round
        self._leader_and_isr: dict[int, dict[TopicPartition, m.LeaderAndIsrPartitionState]] = {}
        #: The state object last made for each partition in this batch, with the
        #: leadership and assignment it was made from.
        self._made: dict[
            TopicPartition,
            tuple[LeaderIsrAndControllerEpoch, ReplicaAssignment, m.LeaderAndIsrPartitionState],
        ] = {}
        self._stop_replica: dict[int, dict[TopicPartition, bool]] = {}
        self._update_brokers: set[int] = set()
        self._update_partitions: set[TopicPartition] = set()

    @property
    def aborts_on_zk_error(self) -> bool:
        """A ZooKeeper error ends a state change, as in 0.8 (bug switch `kafka-2300`)."""
        return self._keep_failed_round

    def new_batch(self) -> None:
        """Start a round; the previous one must have been sent."""
        if self._leader_and_isr or self._stop_replica or self._update_brokers:
            raise RuntimeError("a request batch was not sent before a new one started")

    def clear(self) -> None:
        """Drop whatever was added (after a failed state change), unless failed rounds are
        kept."""
        if not self._keep_failed_round:
            self._empty()

    def _empty(self) -> None:
        self._leader_and_isr.clear()
        self._made.clear()
        self._stop_replica.clear()
        self._update_brokers.clear()
        self._update_partitions.clear()

    def add_leader_and_isr(
        self,
        broker_ids: Iterable[int],
        tp: TopicPartition,
        leadership: LeaderIsrAndControllerEpoch,
        assignment: ReplicaAssignment,
        is_new: bool,
    ) -> None:
        """Tell `broker_ids` about a partition's leadership (and all live brokers' caches)."""
        self.add_leader_and_isrs(((broker_ids, tp, leadership, assignment),), is_new)

    def add_leader_and_isrs(self, entries: Iterable[LeaderAndIsrEntry], is_new: bool) -> None:
        """`add_leader_and_isr` for a round's partitions in one pass (`entries` must not
        change the context while they are iterated)."""
        made_for, told = self._made, self._leader_and_isr
        added = []
        for broker_ids, tp, leadership, assignment in entries:
            made = made_for.get(tp)
            for broker_id in broker_ids:
                if broker_id < 0:
                    continue
                per_broker = told.get(broker_id)
                if per_broker is None:
                    per_broker = told[broker_id] = {}
                previous = per_broker.get(tp)
                new = is_new or (previous is not None and previous.is_new)
                # one state object per partition for every broker told the same leadership,
                # in this call or an earlier one of the batch (the replica state machine adds
                # one broker at a time), so that their requests share it (`_send_leader_and_isr`)
                if made is None or not (
                    made[0] is leadership and made[1] is assignment and made[2].is_new is new
                ):
                    made = (
                        leadership,
                        assignment,
                        leader_and_isr_state(tp, leadership, assignment, new),
                    )
                    made_for[tp] = made
                per_broker[tp] = made[2]
            added.append(tp)
        if added:
            self.add_update_metadata(self._context.live_or_shutting_down_broker_ids(), added)

    def add_stop_replica(self, broker_ids: Iterable[int], tp: TopicPartition, delete: bool) -> None:
        """Stop (and maybe delete) a partition's replica on `broker_ids`."""
        for broker_id in broker_ids:
            self.add_stop_replicas(broker_id, (tp,), delete)

    def add_stop_replicas(
        self, broker_id: int, partitions: Collection[TopicPartition], delete: bool
    ) -> None:
        """Stop (and maybe delete) the replicas of `partitions` on `broker_id`."""
        if broker_id < 0 or not partitions:
            return
        per_broker = self._stop_replica.setdefault(broker_id, {})
        for tp in partitions:
            per_broker[tp] = per_broker.get(tp, False) or delete

    def add_update_metadata(
        self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition]
    ) -> None:
        """Send `broker_ids` an UpdateMetadata, with the states of `partitions`."""
        ids = broker_ids if isinstance(broker_ids, set | frozenset) else set(broker_ids)
        if not self._update_brokers.issuperset(ids):  # once per batch, in practice
            self._update_brokers.update(b for b in ids if b >= 0)
        self._update_partitions.update(partitions)

    def send(self) -> None:
        """Send everything added, once per broker and API, then empty the batch."""
        try:
            self._send_leader_and_isr()
            self._send_update_metadata()
            self._send_stop_replica()
        except BaseException:
            self.clear()
            raise
        self._empty()

    def _header(self, broker_id: int) -> m.ControlHeader:
        return m.ControlHeader(
            self._controller_id, self._context.epoch, self._context.broker_epoch(broker_id)
        )

    def _answer_to(
        self, request: ControlRequest, deleting: frozenset[TopicPartition] = frozenset()
    ) -> ResponseCallback | None:
        """The response callback of `request` (built here, run on the sender thread). A
        StopReplica's answer reports only the partitions in `deleting`."""
        enqueue = self._on_response_event
        if enqueue is None:
            return None

        def on_answer(broker_id: int, response: ControlResponse) -> None:
            result = control_result(request, response)
            if isinstance(result, StopReplicaResult):
                result = result.restricted_to(deleting)
            event = response_event(broker_id, result)
            if event is not None:
                enqueue(event)

        return on_answer

    def _send_leader_and_isr(self) -> None:
        """One LeaderAndIsr per live broker. Brokers told the very same states (the same
        objects, in the same order: every broker hosting the same partitions) share one
        tuple of them, cut into parts once, which the wire encodes once for all of them
        (`rpc.wire.control`)."""
        groups: list[tuple[tuple[m.LeaderAndIsrPartitionState, ...], list[int]]] = []
        order: list[TopicPartition] = []
        ordered_keys: KeysView[TopicPartition] | None = None
        for broker_id, states in sorted(self._leader_and_isr.items()):
            if self._context.live_broker(broker_id) is None:
                continue
            if ordered_keys is None or states.keys() != ordered_keys:
                order, ordered_keys = sorted(states), states.keys()
            told = tuple(map(states.__getitem__, order))
            for shared, brokers in groups:
                if len(shared) == len(told) and all(map(is_, shared, told)):
                    brokers.append(broker_id)
                    break
            else:
                groups.append((told, [broker_id]))
        for told, brokers in groups:
            live_leaders = self._live_leaders(told)
            # sized with the largest header any of them has (a larger broker epoch encodes
            # longer), so that every broker's parts stay under the limit
            widest = max((self._header(b) for b in brokers), key=sizes.header_size)
            parts = split_by_size(m.LeaderAndIsrRequest(widest, told, live_leaders))
            for broker_id in brokers:
                header = self._header(broker_id)
                for part in parts:
                    assert isinstance(part, m.LeaderAndIsrRequest)
                    run, leaders = part.partition_states, part.live_leaders
                    request = m.LeaderAndIsrRequest(header, run, leaders)
                    self._send(broker_id, request, self._answer_to(request))

    def _live_leaders(
        self, states: tuple[m.LeaderAndIsrPartitionState, ...]
    ) -> tuple[m.LiveLeader, ...]:
        """The live brokers among the leaders `states` name, with their endpoints."""
        live_leaders = []
        for leader in sorted({s.leader for s in states}):
            broker = self._context.live_broker(leader)
            if broker is not None:
                ep = broker.info.endpoint
                live_leaders.append(m.LiveLeader(leader, ep.host, ep.port))
        return tuple(live_leaders)

    def _send_update_metadata(self) -> None:
        if not self._update_brokers:
            return
        ctx = self._context
        online = ctx.live_broker_ids()
        per_partition = ctx.any_log_offline()  # else a replica is offline iff its broker is
        offline_of: dict[tuple[int, ...], tuple[int, ...]] = {}  # few distinct replica lists
        deleting: dict[str, bool] = {}
        new, state_type = tuple.__new__, m.UpdateMetadataPartitionState
        states = []
        for tp in sorted(self._update_partitions):
            leadership = ctx.leadership(tp)
            if leadership is None:
                continue
            topic = tp.topic
            replicas = ctx.replicas(tp)
            lai = leadership.leader_and_isr
            queued = deleting.get(topic)
            if queued is None:
                queued = deleting[topic] = ctx.is_topic_queued_for_deletion(topic)
            if queued:
                lai = during_delete(lai)
            if per_partition:
                offline = ctx.offline_replicas(tp, replicas)
            else:
                known = offline_of.get(replicas)
                if known is None:
                    known = offline_of[replicas] = tuple(r for r in replicas if r not in online)
                offline = known
            states.append(
                new(
                    state_type,
                    (
                        topic,
                        tp.partition,
                        leadership.controller_epoch,
                        lai.leader,
                        lai.leader_epoch,
                        lai.isr,
                        lai.zk_version,
                        replicas,
                        offline,
                    ),
                )
            )
        live = tuple(
            m.LiveBroker(b.id, b.info.endpoints, b.info.rack) for b in self._context.live_brokers()
        )
        recipients = [b for b in sorted(self._update_brokers) if self._context.live_broker(b)]
        if not recipients:
            return
        # every recipient gets the same states: cut them into parts once, sized with the
        # largest header any recipient's request has (a larger broker epoch encodes longer)
        widest = max((self._header(b) for b in recipients), key=sizes.header_size)
        runs = [
            part.partition_states
            for part in split_by_size(m.UpdateMetadataRequest(widest, tuple(states), live))
            if isinstance(part, m.UpdateMetadataRequest)
        ]
        for broker_id in recipients:
            header = self._header(broker_id)
            for run in runs:
                self._send(broker_id, m.UpdateMetadataRequest(header, run, live), None)

    def _send_stop_replica(self) -> None:
        for broker_id, partitions in sorted(self._stop_replica.items()):
            if self._context.live_broker(broker_id) is None:
                continue
            states = []
            for tp, delete in sorted(partitions.items(), key=_by_partition):
                leadership = self._context.leadership(tp)
                if self._context.is_topic_queued_for_deletion(tp.topic):
                    epoch = EPOCH_DURING_DELETE
                elif leadership is not None:
                    epoch = leadership.leader_and_isr.leader_epoch
                else:
                    epoch = NO_EPOCH
                states.append(m.StopReplicaPartitionState(tp.topic, tp.partition, epoch, delete))
            request = m.StopReplicaRequest(self._header(broker_id), tuple(states))
            # only the answer for partitions of topics being deleted matters (Kafka's check)
            deleting = frozenset(
                tp
                for tp in deleted_partitions(request)
                if self._context.is_topic_deletion_in_progress(tp.topic)
            )
            self._send_in_parts(broker_id, request, _stop_replica_answer(self._answer_to, deleting))

    def _send_in_parts(
        self,
        broker_id: int,
        request: ControlRequest,
        answer: Callable[[ControlRequest], ResponseCallback | None],
    ) -> None:
        """Send `request`, split into parts under gRPC's limit when it is larger
        (`controller.request_split`), each part with its own response callback."""
        for part in split_by_size(request):
            self._send(broker_id, part, answer(part))


def _stop_replica_answer(
    answer_to: Callable[[ControlRequest, frozenset[TopicPartition]], ResponseCallback | None],
    deleting: frozenset[TopicPartition],
) -> Callable[[ControlRequest], ResponseCallback | None]:
    """The response callback of each part of a StopReplica: only parts that delete
    partitions of topics being deleted need one."""

    def answer(part: ControlRequest) -> ResponseCallback | None:
        return answer_to(part, deleting) if deleting else None

    return answer


def _by_partition(item: tuple[TopicPartition, bool]) -> TopicPartition:
    return item[0]

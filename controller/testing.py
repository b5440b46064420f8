"""Test doubles for the controller core, shipped beside what they replace (STYLE rule 13).

They stand in for ZooKeeper, the channel manager and the broker connections so that tests
of pure controller logic (the state machines, the request batch, the channel manager's
sender threads) run without I/O:

- `FakePartitionZk` is the `PartitionZk` the state machines write through: state znodes in
  a dict, the same results `KafkaZkClient` returns, epoch fencing, and hooks to inject a
  concurrent write or a failure.
- `RecordingSend` is the `Send` a `RequestBatch` hands its requests to.
- `FakeBrokerChannel` is the `BrokerChannel` a sender thread talks to: it answers NONE,
  can fail the next calls with an `rpc.errors.RpcError`, and can hold calls to keep a queue
  full.
- `RecordingEventLog` is an `EventLog` that writes nowhere and keeps what was emitted.

Threads: `FakePartitionZk` and `RecordingSend` are not thread-safe; only the thread that
plays the controller event thread (in unit tests, the test's own thread) may use them.
`FakeBrokerChannel` and `RecordingEventLog` are called by sender threads and read by the
test thread: every method is safe from any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from controller.channel_manager import ControlRequest, ResponseCallback
from rpc import messages as m
from rpc.errors import Errors, RpcClosed, RpcError, RpcUnavailable
from zkdata import paths
from zkdata.errors import ControllerMovedError, ZnodeFormatError
from zkdata.fenced_writes import OpResult
from zkdata.model import (
    Broker,
    BrokerInfo,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from zkdata.pipelined_reads import Reads

__all__ = [
    "FakeBrokerChannel",
    "FakePartitionZk",
    "RecordingSend",
    "ZkCall",
    "make_broker",
]

R = TypeVar("R")

ZkMethod = Literal["get_partition_states", "create_partition_states", "update_leader_and_isr"]


def make_broker(broker_id: int, epoch: int | None = None, port: int = 9092) -> Broker:
    """A registered broker `broker<id>:<port>`; its epoch defaults to `100 + broker_id`."""
    info = BrokerInfo(broker_id, (EndPoint(f"broker{broker_id}", port),))
    return Broker(info, 100 + broker_id if epoch is None else epoch)


# -- ZooKeeper ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ZkCall:
    """One call made to a `FakePartitionZk`: the method, the partitions asked for (in the
    caller's order), the states written and the fencing zkVersion (None for reads)."""

    method: ZkMethod
    partitions: tuple[TopicPartition, ...]
    states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    epoch_zk_version: int | None = None


@dataclass(slots=True)
class _StateZnode:
    state: LeaderIsrAndControllerEpoch | None  # None: the bytes do not decode
    version: int
    malformed_reason: str = ""


class FakePartitionZk:
    """An in-memory `PartitionZk` (see `controller.partition_state_machine`).

    State znodes are kept as decoded values with a zkVersion. Results match
    `KafkaZkClient`: a create answers the znode's path or a `NodeExistsError` instance per
    partition; an update answers the new zkVersion or a `BadVersionError` (the zkVersion
    carried in `leader_and_isr.zk_version` is not the stored one) or `NoNodeError`
    instance. Both writes raise `ControllerMovedError`, writing nothing, when their
    `epoch_zk_version` differs from the `epoch_zk_version` attribute (the version of
    `/controller_epoch` in this fake ZooKeeper). Every call is appended to `calls`.
    """

    def __init__(self, epoch_zk_version: int = 0) -> None:
        self.epoch_zk_version = epoch_zk_version
        self.calls: list[ZkCall] = []
        self._znodes: dict[TopicPartition, _StateZnode] = {}
        self._concurrent: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self._update_failures: dict[TopicPartition, Exception] = {}

    # -- set-up and inspection by tests ----------------------------------------------------

    def put_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, zk_version: int = 0
    ) -> None:
        """Store a state znode at `zk_version` (the `zk_version` inside `state` is ignored)."""
        self._znodes[tp] = _StateZnode(_with_version(state, zk_version), zk_version)

    def put_malformed(
        self, tp: TopicPartition, reason: str = "not JSON", zk_version: int = 0
    ) -> None:
        """Store a state znode whose bytes do not decode."""
        self._znodes[tp] = _StateZnode(None, zk_version, reason)

    def delete_state(self, tp: TopicPartition) -> None:
        """Remove a state znode (as topic deletion would)."""
        self._znodes.pop(tp, None)

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """The stored state, with its zkVersion in `leader_and_isr.zk_version` (None when
        missing or malformed)."""
        znode = self._znodes.get(tp)
        return znode.state if znode is not None else None

    def zk_version(self, tp: TopicPartition) -> int | None:
        """The stored znode's zkVersion (None when missing)."""
        znode = self._znodes.get(tp)
        return znode.version if znode is not None else None

    def bump_version_once(self, tp: TopicPartition, new_state: LeaderIsrAndControllerEpoch) -> None:
        """Inject a concurrent write: right before the next `update_leader_and_isr` call
        (whatever it writes), `new_state` is stored at the next zkVersion, as a partition
        leader shrinking its ISR would. An update that carries the old version then gets
        `BadVersionError`."""
        self._concurrent[tp] = new_state

    def fail_next_update(self, tp: TopicPartition, error: Exception) -> None:
        """Answer `error` for `tp` in the next update that writes it (nothing is stored)."""
        self._update_failures[tp] = error

    def methods(self) -> list[ZkMethod]:
        """The methods called, in order."""
        return [call.method for call in self.calls]

    def calls_to(self, method: ZkMethod) -> list[ZkCall]:
        """The calls made to `method`, in order."""
        return [call for call in self.calls if call.method == method]

    # -- PartitionZk ---------------------------------------------------------------------------

    def get_partition_states(
        self, partitions: Iterable[TopicPartition]
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Stored states of `partitions`; missing ones appear in neither map."""
        asked = tuple(partitions)
        self.calls.append(ZkCall("get_partition_states", asked))
        found: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        malformed: dict[TopicPartition, ZnodeFormatError] = {}
        for tp in asked:
            znode = self._znodes.get(tp)
            if znode is None:
                continue
            if znode.state is None:
                path = paths.partition_state(tp.topic, tp.partition)
                malformed[tp] = ZnodeFormatError(znode.malformed_reason, path)
            else:
                found[tp] = znode.state
        return Reads(found, malformed)

    def create_partition_states(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Create state znodes at zkVersion 0: the path, or `NodeExistsError()`."""
        self.calls.append(
            ZkCall("create_partition_states", tuple(states), dict(states), epoch_zk_version)
        )
        self._check_epoch(epoch_zk_version)
        results: dict[TopicPartition, OpResult] = {}
        for tp, state in states.items():
            if tp in self._znodes:
                results[tp] = NodeExistsError()
                continue
            self._znodes[tp] = _StateZnode(_with_version(state, 0), 0)
            results[tp] = paths.partition_state(tp.topic, tp.partition)
        return results

    def update_leader_and_isr(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Conditional sets: the new zkVersion, `BadVersionError()` or `NoNodeError()`."""
        self.calls.append(
            ZkCall("update_leader_and_isr", tuple(states), dict(states), epoch_zk_version)
        )
        self._apply_concurrent_writes()
        self._check_epoch(epoch_zk_version)
        results: dict[TopicPartition, OpResult] = {}
        for tp, state in states.items():
            injected = self._update_failures.pop(tp, None)
            znode = self._znodes.get(tp)
            if injected is not None:
                results[tp] = injected
            elif znode is None:
                results[tp] = NoNodeError()
            elif znode.version != state.leader_and_isr.zk_version:
                results[tp] = BadVersionError()
            else:
                version = znode.version + 1
                self._znodes[tp] = _StateZnode(_with_version(state, version), version)
                results[tp] = version
        return results

    def _apply_concurrent_writes(self) -> None:
        for tp, state in self._concurrent.items():
            znode = self._znodes.get(tp)
            version = 0 if znode is None else znode.version + 1
            self._znodes[tp] = _StateZnode(_with_version(state, version), version)
        self._concurrent.clear()

    def _check_epoch(self, epoch_zk_version: int) -> None:
        if epoch_zk_version != self.epoch_zk_version:
            raise ControllerMovedError(
                f"/controller_epoch is at zkVersion {self.epoch_zk_version}, "
                f"not {epoch_zk_version}: another controller was elected"
            )


def _with_version(state: LeaderIsrAndControllerEpoch, version: int) -> LeaderIsrAndControllerEpoch:
    lai = state.leader_and_isr
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(lai.leader, lai.leader_epoch, lai.isr, version), state.controller_epoch
    )


# -- the request batch's send --------------------------------------------------------------


class RecordingSend:
    """A `controller.request_batch.Send` that records `(broker_id, request)` in `sent` (and
    the callback in `callbacks`, index for index) and reports every request as queued."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, ControlRequest]] = []
        self.callbacks: list[ResponseCallback | None] = []

    def __call__(
        self, broker_id: int, request: ControlRequest, callback: ResponseCallback | None = None
    ) -> bool:
        self.sent.append((broker_id, request))
        self.callbacks.append(callback)
        return True

    def of_type(self, kind: type[R]) -> list[tuple[int, R]]:
        """The `(broker_id, request)` pairs whose request is a `kind`, in send order."""
        return [(b, r) for b, r in self.sent if isinstance(r, kind)]

    def to(self, broker_id: int) -> list[ControlRequest]:
        """The requests sent to one broker, in order."""
        return [r for b, r in self.sent if b == broker_id]

    def clear(self) -> None:
        """Forget what was recorded."""
        self.sent.clear()
        self.callbacks.clear()


# -- broker connections -----------------------------------------------------------------------


class FakeBrokerChannel:
    """A `controller.channel_manager.BrokerChannel` that answers every request `error`
    (NONE by default, with a NONE per partition where the response has them).

    It records every call, answered or not, with the name of the calling thread. Tests
    can make the next calls fail (`fail_next`) or block (`hold`, until `release` or
    `close`). As with a real gRPC channel, `close` cancels calls in flight
    (`RpcUnavailable`, status CANCELLED) and later calls raise `RpcClosed`. Any thread.
    """

    def __init__(self, broker_id: int | None = None, error: Errors = Errors.NONE) -> None:
        self.broker_id = broker_id
        self._target = f"fake-broker-{broker_id}"
        self._cond = threading.Condition()
        self._error = error
        self._calls: list[ControlRequest] = []
        self._threads: list[str] = []
        self._answered: list[ControlRequest] = []
        self._failures_left = 0
        self._failure: type[RpcError] = RpcUnavailable
        self._held = False
        self._closes = 0

    # -- control and inspection by tests -----------------------------------------------------

    def fail_next(self, count: int, failure: type[RpcError] = RpcUnavailable) -> None:
        """Raise `failure` (an `rpc.errors.RpcError` type) from the next `count` calls."""
        with self._cond:
            self._failures_left = count
            self._failure = failure

    def answer_with(self, error: Errors) -> None:
        """Answer later calls with `error` (request-level and per partition)."""
        with self._cond:
            self._error = error

    def hold(self) -> None:
        """Block later calls until `release` or `close`."""
        with self._cond:
            self._held = True

    def release(self) -> None:
        """Let held calls proceed."""
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def calls(self) -> list[ControlRequest]:
        """Every call made, failed or held ones included, in order."""
        with self._cond:
            return list(self._calls)

    def thread_names(self) -> list[str]:
        """The name of the thread that made each call."""
        with self._cond:
            return list(self._threads)

    def requests(self) -> list[ControlRequest]:
        """The requests answered, in order."""
        with self._cond:
            return list(self._answered)

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        with self._cond:
            return self._closes > 0

    @property
    def close_count(self) -> int:
        """How many times `close` was called."""
        with self._cond:
            return self._closes

    # -- BrokerChannel ---------------------------------------------------------------------------

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Answer LeaderAndIsr."""
        error = self._call(request)
        return m.LeaderAndIsrResponse(error, _partition_errors(request, error))

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Answer UpdateMetadata."""
        return m.UpdateMetadataResponse(self._call(request))

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Answer StopReplica."""
        error = self._call(request)
        return m.StopReplicaResponse(error, _partition_errors(request, error))

    def close(self) -> None:
        """Close: cancel held calls; later calls fail."""
        with self._cond:
            self._closes += 1
            self._cond.notify_all()

    def _call(self, request: ControlRequest) -> Errors:
        with self._cond:
            if self._closes:
                raise RpcClosed(self._target, "CLOSED", "channel closed")
            self._calls.append(request)
            self._threads.append(threading.current_thread().name)
            self._cond.notify_all()
            while self._held and not self._closes:
                self._cond.wait()
            if self._closes:
                raise RpcUnavailable(self._target, "CANCELLED", "channel closed")
            if self._failures_left > 0:
                self._failures_left -= 1
                raise self._failure(self._target, self._failure.__name__, "injected")
            self._answered.append(request)
            return self._error


def _partition_errors(
    request: m.LeaderAndIsrRequest | m.StopReplicaRequest, error: Errors
) -> tuple[m.PartitionError, ...]:
    return tuple(m.PartitionError(s.topic_partition, error) for s in request.partition_states)


# -- event log ------------------------------------------------------------------------------------


# -- topic deletion ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeletionCall:
    """One write made to a `FakeDeletionZk`: the method, the topics and the fencing
    zkVersion."""

    method: Literal["delete_topic_deletions", "delete_topic"]
    topics: tuple[str, ...]
    epoch_zk_version: int


class FakeDeletionZk:
    """An in-memory `controller.topic_deletion.DeletionZk` (`zkdata.deletion.TopicDeletionZk`).

    `topics` holds the topics whose `/brokers/topics/T` exists, `configs` those with a
    `/config/topics/T`, `requests` the children of `/admin/delete_topics`. Results match
    the real client: one per path written, True or a kazoo error instance; only existing
    znodes are written. Both writes raise `ControllerMovedError`, writing nothing, when
    their `epoch_zk_version` differs from the `epoch_zk_version` attribute. Every write
    is appended to `calls`. Not thread-safe: the thread playing the event thread only.
    """

    def __init__(
        self,
        epoch_zk_version: int = 0,
        topics: Iterable[str] = (),
        requests: Iterable[str] = (),
        configs: Iterable[str] = (),
    ) -> None:
        self.epoch_zk_version = epoch_zk_version
        self.topics = set(topics)
        self.requests = set(requests)
        self.configs = set(configs)
        self.calls: list[DeletionCall] = []
        self._failures: dict[str, Exception] = {}

    def fail_next_removal(self, path: str, error: Exception) -> None:
        """Answer `error` for `path` in the next `delete_topic` that writes it (the znode
        stays)."""
        self._failures[path] = error

    def delete_topic_deletions(
        self, topics: Iterable[str], epoch_zk_version: int
    ) -> dict[str, OpResult]:
        """Remove requests: True, or `NoNodeError()` for a request that is not there."""
        order = tuple(topics)
        self.calls.append(DeletionCall("delete_topic_deletions", order, epoch_zk_version))
        self._check_epoch(epoch_zk_version)
        results: dict[str, OpResult] = {}
        for topic in order:
            results[topic] = True if topic in self.requests else NoNodeError()
            self.requests.discard(topic)
        return results

    def delete_topic(self, topic: str, epoch_zk_version: int) -> dict[str, OpResult]:
        """Remove the topic's znodes that exist; per path True or the injected error."""
        self.calls.append(DeletionCall("delete_topic", (topic,), epoch_zk_version))
        self._check_epoch(epoch_zk_version)
        present = [
            (paths.topic(topic), self.topics),
            (paths.topic_config(topic), self.configs),
            (paths.delete_topic(topic), self.requests),
        ]
        results: dict[str, OpResult] = {}
        for path, holder in present:
            if topic not in holder:
                continue
            failure = self._failures.pop(path, None)
            if failure is not None:
                results[path] = failure
            else:
                holder.discard(topic)
                results[path] = True
        return results

    def writes(self, method: str) -> list[DeletionCall]:
        """The calls made to `method`, in order."""
        return [call for call in self.calls if call.method == method]

    def _check_epoch(self, epoch_zk_version: int) -> None:
        if epoch_zk_version != self.epoch_zk_version:
            raise ControllerMovedError(
                f"/controller_epoch is at zkVersion {self.epoch_zk_version}, "
                f"not {epoch_zk_version}: another controller was elected"
            )

"""`Client`: `ClusterMetadata` (the last Metadata, reachable addresses, one connection per
broker) plus Produce, Fetch and ElectLeaders with retries. One client of the cluster for the
workload, the benchmarks, the CLI and the harness.

Produce sends the records of several partitions in one request per leader
(`produce_batches`); `produce` is one partition's. Retries (tenacity for Fetch and
ElectLeaders, the same rules by hand for each partition of a Produce): a call is retried
after a retriable error (NOT_LEADER_OR_FOLLOWER and the other "ask someone else" codes, a
transport error, no known leader) until `max_attempts` or the call's deadline, sleeping
`backoff_s` and refreshing Metadata before each new attempt (at most once per
`refresh_interval_s` across threads). A final error ends it at once. What gives up raises
`client.errors.RequestFailed` with every attempt's error (`produce_batches` returns each
partition's `ProduceFailed` instead); transport errors inside are
`client.errors.TransportError`.

Thread-safety: any thread, as `ClusterMetadata`; calls run on the calling thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_fixed,
)

from client.connections import ApiLike
from client.errors import (
    ClusterUnavailable,
    ControllerUnknown,
    FetchFailed,
    NoRoute,
    ProduceFailed,
    TransportError,
)
from client.metadata import ClusterMetadata
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors

#: Produce errors after which the records were not appended and another leader may take them.
PRODUCE_RETRIABLE: frozenset[Errors] = frozenset(
    {
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.LEADER_NOT_AVAILABLE,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.KAFKA_STORAGE_ERROR,
    }
)
#: Fetch errors after which a consumer asks again (after new Metadata); as Kafka's
#: consumer, a KAFKA_STORAGE_ERROR too (the leader's log directory failed: it moves).
FETCH_RETRIABLE: frozenset[Errors] = frozenset(
    {
        Errors.KAFKA_STORAGE_ERROR,
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.LEADER_NOT_AVAILABLE,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.FENCED_LEADER_EPOCH,
        Errors.UNKNOWN_LEADER_EPOCH,
        Errors.REPLICA_NOT_AVAILABLE,
        Errors.NOT_ENOUGH_REPLICAS,
    }
)


class _Retry(Exception):
    """One attempt failed in a way worth another attempt."""


@dataclass(frozen=True, slots=True)
class Produced:
    """An acknowledged Produce: the offsets of its first and last record (-1 for acks=0)
    and the errors of the attempts that failed before it."""

    base_offset: int
    last_offset: int
    attempt_errors: tuple[str, ...] = ()


class Client(ClusterMetadata):
    """`ClusterMetadata` with Produce, Fetch and ElectLeaders retried as the module
    docstring says. Construct it as `ClusterMetadata`."""

    # -- retried calls -------------------------------------------------------------------

    def _retrying(self, deadline_s: float, attempts: int | None = None) -> Retrying:
        return Retrying(
            stop=stop_after_attempt(attempts or self.max_attempts) | stop_before_delay(deadline_s),
            wait=wait_fixed(self.backoff_s),
            retry=retry_if_exception_type(_Retry),
            sleep=self._sleep,
            reraise=True,
        )

    def _leader_api(self, tp: TopicPartition, errors: list[str]) -> ApiLike:
        """The connection to `tp`'s leader; no route counts as a failed, retriable attempt."""
        try:
            return self.api(self.leader_address(tp))
        except (NoRoute, ClusterUnavailable) as exc:
            errors.append(exc.reason if isinstance(exc, NoRoute) else "NO_METADATA")
            raise _Retry from exc

    def produce(
        self,
        topic: str,
        partition: int,
        records: Iterable[m.ProducedRecord],
        *,
        acks: int = -1,
        timeout_ms: int = 10_000,
    ) -> Produced:
        """Append `records` to the partition's leader with `acks` (0, 1 or -1): one
        partition's `produce_batches`. Raises `ProduceFailed` when no attempt was
        acknowledged."""
        batch = m.PartitionRecords(topic, partition, tuple(records))
        (result,) = self.produce_batches((batch,), acks=acks, timeout_ms=timeout_ms)
        if isinstance(result, ProduceFailed):
            raise result
        return result

    def produce_batches(
        self,
        batches: Sequence[m.PartitionRecords],
        *,
        acks: int = -1,
        timeout_ms: int = 10_000,
    ) -> list[Produced | ProduceFailed]:
        """Append each partition's records to its leader with `acks`, in one request per
        leader (as Kafka's producer drains the batches of every partition a broker leads
        into one request), the requests sent one after another on the calling thread. A
        partition's retriable error, or a transport failure of its request, sends it again
        (grouped by the leaders then known, after new Metadata) until `max_attempts` or the
        deadline; a final error ends it at once. Each partition's result, in `batches`'
        order: `Produced`, or the `ProduceFailed` it ended with."""
        results: list[Produced | ProduceFailed | None] = [None] * len(batches)
        errors: list[list[str]] = [[] for _ in batches]
        deadline = self._clock() + timeout_ms / 1000 + self.timeout_s
        pending = list(range(len(batches)))
        attempt = 1
        while True:
            pending = self._produce_round(batches, pending, acks, timeout_ms, results, errors)
            if not pending:
                break
            if attempt >= self.max_attempts or self._clock() + self.backoff_s >= deadline:
                for i in pending:
                    what = f"produce to {batches[i].topic_partition}"
                    results[i] = ProduceFailed(what, errors[i][-1], tuple(errors[i]))
                break
            attempt += 1
            self._sleep(self.backoff_s)
            self.refresh_soon()
        return [r for r in results if r is not None]

    def _produce_round(
        self,
        batches: Sequence[m.PartitionRecords],
        pending: list[int],
        acks: int,
        timeout_ms: int,
        results: list[Produced | ProduceFailed | None],
        errors: list[list[str]],
    ) -> list[int]:
        """One attempt for the `pending` batches, one request per leader; fills `results`
        and `errors` and returns the batches to try again."""
        retry: list[int] = []
        by_leader: dict[str, list[int]] = {}
        for i in pending:
            try:
                by_leader.setdefault(self.leader_address(batches[i].topic_partition), []).append(i)
            except (NoRoute, ClusterUnavailable) as exc:
                errors[i].append(exc.reason if isinstance(exc, NoRoute) else "NO_METADATA")
                retry.append(i)
        for address, indices in by_leader.items():
            request = m.ProduceRequest(tuple(batches[i] for i in indices), acks, timeout_ms)
            try:
                answers = self.api(address).produce(request).partitions
            except TransportError as exc:
                for i in indices:
                    errors[i].append(exc.name)
                retry.extend(indices)
                continue
            for k, i in enumerate(indices):
                answer = answers[k] if k < len(answers) else None
                results[i] = _settled(batches[i].topic_partition, answer, errors[i])
                if results[i] is None:
                    retry.append(i)
        return sorted(retry)

    def fetch(
        self,
        tp: TopicPartition,
        offset: int,
        *,
        max_records: int = 500,
        max_wait_ms: int = 0,
        timeout_ms: int = 10_000,
    ) -> m.FetchedPartition:
        """Read `tp` from `offset` as a consumer (from its leader). Raises `FetchFailed`."""
        request = m.FetchRequest(
            (m.FetchPartition(tp.topic, tp.partition, offset, -1, max_records),),
            replica_id=-1,
            max_wait_ms=max_wait_ms,
        )
        errors: list[str] = []
        try:
            for attempt in self._retrying(timeout_ms / 1000):
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        self.refresh_soon()
                    return self._fetch_once(tp, request, errors)
        except _Retry:
            raise FetchFailed(f"fetch {tp} from {offset}", errors[-1], tuple(errors)) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _fetch_once(
        self, tp: TopicPartition, request: m.FetchRequest, errors: list[str]
    ) -> m.FetchedPartition:
        try:
            reply = self._leader_api(tp, errors).fetch(request)
        except TransportError as exc:
            errors.append(exc.name)
            raise _Retry from exc
        found = next((p for p in reply.partitions if p.topic_partition == tp), None)
        if reply.error is Errors.NONE and found is None:
            errors.append("MISSING_PARTITION")
            raise _Retry
        error = found.error if reply.error is Errors.NONE and found is not None else reply.error
        if error is Errors.NONE and found is not None:
            return found
        errors.append(error.name)
        if error in FETCH_RETRIABLE:
            raise _Retry
        raise FetchFailed(f"fetch {tp}", error.name, tuple(errors))

    def controller_address(self) -> str:
        """The reachable address of the controller in fresh Metadata. Raises
        `ControllerUnknown`."""
        metadata = self.refresh()
        address = self.address_of(metadata.controller_id)
        if metadata.controller_id < 0 or address is None:
            raise ControllerUnknown(f"no controller is known (id {metadata.controller_id})")
        return address

    def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[TopicPartition] = (),
        *,
        timeout_ms: int = 30_000,
        controller: str | None = None,
    ) -> m.ElectLeadersResponse:
        """Ask the controller for preferred (0) or unclean (1) elections of `partitions`
        (all when empty). `controller` is its address; else Metadata says where it is, and a
        NOT_CONTROLLER answer sends the request to the new one. A transport failure is
        retried up to 3 times, then raised as `TransportError`."""
        request = m.ElectLeadersRequest(election_type, tuple(partitions), timeout_ms)
        reply: m.ElectLeadersResponse | None = None
        try:
            for attempt in self._retrying(timeout_ms / 1000 + self.timeout_s, attempts=3):
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        self.refresh_soon()
                    address = controller if controller is not None else self.controller_address()
                    try:
                        reply = self.control(address).elect_leaders(request)
                    except TransportError as exc:
                        raise _Retry from exc
                    if reply.error is Errors.NOT_CONTROLLER and controller is None:
                        raise _Retry
        except _Retry as exc:
            if isinstance(exc.__cause__, TransportError):
                raise exc.__cause__ from None
        if reply is None:
            raise ControllerUnknown("the controller did not answer")
        return reply


def _settled(
    tp: TopicPartition, answer: m.PartitionProduceResult | None, errors: list[str]
) -> Produced | ProduceFailed | None:
    """What a partition's answer settles: acknowledged, failed for good, or None to try
    again (its error appended to `errors`)."""
    if answer is None or answer.topic_partition != tp:
        errors.append("MISSING_PARTITION")
        return None
    if answer.error is Errors.NONE:
        return Produced(answer.base_offset, answer.last_offset, tuple(errors))
    errors.append(answer.error.name)
    if answer.error in PRODUCE_RETRIABLE:
        return None
    return ProduceFailed(f"produce to {tp}", errors[-1], tuple(errors))

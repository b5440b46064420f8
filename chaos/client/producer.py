"""The workload's producer: one value per record, every operation written to the history.

`classify_produce` is the pure decision of what one Produce answer means for the history:

- acknowledged: error NONE.
- rejected (definitely not appended): an error in `REJECTED_BEFORE_APPEND` *and* no offset
  in the answer. The testbed's leader answers NOT_LEADER_OR_FOLLOWER with offsets when it
  lost leadership while waiting for acks after appending, so the offset decides.
- unknown: everything else (NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT, errors
  with an offset, unknown codes) and every transport error.

Retries: NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION,
KAFKA_STORAGE_ERROR (the leader's log directory failed: Kafka's clients take it as stale
metadata, `KafkaStorageException` being an `InvalidMetadataException`) and transport
errors refresh Metadata and retry until the op's deadline. The completion is
`ok` when an attempt is acknowledged, else `info` if any attempt's outcome was unknown,
else `fail`; it carries `attempts` and `attempts_unknown`, so a value written by an unknown
attempt and again by a later acknowledged one is an allowed duplicate for the checker.

A `Producer` runs on its caller's thread (one workload producer thread each); it shares
only the thread-safe `client.Client`.
"""

from __future__ import annotations

import contextlib
import enum
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from client import Client, ClientError, NoRoute, TransportError
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rundir.history import Completion
from rundir.history_writer import HistoryWriter

#: Errors a leader returns before it appends anything (when the answer has no offset).
REJECTED_BEFORE_APPEND: frozenset[Errors] = frozenset(
    {
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.LEADER_NOT_AVAILABLE,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.INVALID_REQUIRED_ACKS,
        Errors.MESSAGE_TOO_LARGE,
        Errors.CORRUPT_MESSAGE,
        Errors.INVALID_TOPIC_EXCEPTION,
        Errors.INVALID_REQUEST,
        Errors.UNSUPPORTED_VERSION,
    }
)
#: Errors after which the producer refreshes Metadata and tries again.
RETRIABLE: frozenset[Errors] = frozenset(
    {
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.LEADER_NOT_AVAILABLE,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.KAFKA_STORAGE_ERROR,
    }
)


class AttemptKind(enum.Enum):
    """What one attempt tells about the records it carried."""

    ACKED = "acked"
    REJECTED = "rejected"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Attempt:
    """The meaning of one attempt: its kind, why, whether to retry, the offset it gave the
    first record (if any), and whether a request went out at all."""

    kind: AttemptKind
    error: str | None
    retriable: bool
    base_offset: int | None = None
    sent: bool = True


def classify_produce(response: m.PartitionProduceResult) -> Attempt:
    """What a partition's Produce answer means (pure; see the module docstring)."""
    base = response.base_offset if response.base_offset >= 0 else None
    if response.error is Errors.NONE:
        return Attempt(AttemptKind.ACKED, None, False, base)
    name = response.error.name
    retriable = response.error in RETRIABLE
    if response.error in REJECTED_BEFORE_APPEND and base is None:
        return Attempt(AttemptKind.REJECTED, name, retriable, None)
    return Attempt(AttemptKind.UNKNOWN, name, retriable, base)


def classify_transport(error: TransportError) -> Attempt:
    """A transport failure: unknown outcome, worth a retry."""
    return Attempt(AttemptKind.UNKNOWN, f"transport: {error}", True)


def not_sent(error: Errors | str) -> Attempt:
    """No request went out (no leader, no address, no Metadata): retriable, not applied."""
    name = error.name if isinstance(error, Errors) else error
    return Attempt(AttemptKind.REJECTED, name, True, sent=False)


@dataclass(frozen=True, slots=True)
class ProduceOutcome:
    """The completion written for one value: its type, offset (if known), error, and the
    attempts made and of unknown outcome."""

    type: Completion
    offset: int | None
    error: str | None
    attempts: int
    attempts_unknown: int


def final_outcomes(
    last: Attempt, count: int, attempts: int, attempts_unknown: int
) -> list[ProduceOutcome]:
    """The completions of `count` values sent together, given their last attempt (pure)."""
    if last.kind is AttemptKind.ACKED:
        completion: Completion = "ok"
    elif attempts_unknown > 0:
        completion = "info"
    else:
        completion = "fail"
    error = last.error
    if completion == "info" and last.kind is AttemptKind.REJECTED:
        error = f"{last.error} after {attempts_unknown} attempt(s) of unknown outcome"
    return [
        ProduceOutcome(
            completion,
            None if last.base_offset is None or completion == "fail" else last.base_offset + i,
            error,
            attempts,
            attempts_unknown,
        )
        for i in range(count)
    ]


class Producer:
    """Sends unique string values to one topic and records every op in `history`. Runs on
    the caller's thread; the deadline of each op is `timeout_ms`."""

    def __init__(
        self,
        cluster: Client,
        topic: str,
        process: str,
        history: HistoryWriter,
        acks: int = -1,
        timeout_ms: int = 5000,
        *,
        retry_backoff_ms: int = 100,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if history.process != process:
            raise ValueError(f"history belongs to {history.process!r}, not {process!r}")
        if acks not in (-1, 0, 1):
            raise ValueError(f"acks must be -1, 0 or 1, got {acks}")
        if timeout_ms <= 0:
            raise ValueError(f"timeout_ms must be positive, got {timeout_ms}")
        self.cluster = cluster
        self.topic = topic
        self.process = process
        self.acks = acks
        self.timeout_ms = timeout_ms
        self._history = history
        self._backoff_s = retry_backoff_ms / 1000
        self._clock = clock
        self._sleep = sleep

    def send(self, partition: int, value: str) -> ProduceOutcome:
        """Produce one record holding `value`; returns what was written to the history."""
        return self.send_batch(partition, [value])[0]

    def send_batch(self, partition: int, values: Sequence[str]) -> list[ProduceOutcome]:
        """Produce `values` in one request (one invoke and one completion per value)."""
        if not values:
            return []
        invokes = [
            self._history.invoke("send", self.topic, partition, value=v, acks=self.acks)
            for v in values
        ]
        tp = TopicPartition(self.topic, partition)
        deadline = self._clock() + self.timeout_ms / 1000
        attempts = unknown = 0
        while True:
            remaining_ms = max(1, int((deadline - self._clock()) * 1000))
            last = self._attempt(tp, values, remaining_ms)
            attempts += last.sent
            unknown += last.kind is AttemptKind.UNKNOWN
            if last.kind is AttemptKind.ACKED or not last.retriable:
                break
            if self._clock() + self._backoff_s >= deadline:
                break
            if self._backoff_s > 0:
                self._sleep(self._backoff_s)
            self._refresh()
        outcomes = final_outcomes(last, len(values), attempts, unknown)
        for invoked, outcome in zip(invokes, outcomes, strict=True):
            self._history.complete(
                invoked,
                outcome.type,
                offset=outcome.offset,
                error=outcome.error,
                attempts=outcome.attempts,
                attempts_unknown=outcome.attempts_unknown,
            )
        return outcomes

    def _attempt(self, tp: TopicPartition, values: Sequence[str], timeout_ms: int) -> Attempt:
        try:
            address = self.cluster.leader_address(tp)
        except NoRoute as exc:
            return not_sent(exc.reason)
        except ClientError as exc:
            return not_sent(f"no metadata: {exc}")
        now_ms = int(time.time() * 1000)
        request = m.ProduceRequest.single(
            self.topic,
            tp.partition,
            tuple(m.ProducedRecord(None, v.encode("utf-8"), now_ms) for v in values),
            acks=self.acks,
            timeout_ms=timeout_ms,
        )
        try:
            response = self.cluster.api(address).produce(request)
        except TransportError as exc:
            return classify_transport(exc)
        answer = response.partitions[0] if len(response.partitions) == 1 else None
        if answer is None or answer.topic_partition != tp:  # the broker's answer is malformed
            return Attempt(AttemptKind.UNKNOWN, "MISSING_PARTITION", True)
        return classify_produce(answer)

    def _refresh(self) -> None:
        with contextlib.suppress(ClientError):  # the next attempt reports it
            self.cluster.refresh()

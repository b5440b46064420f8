"""`ProducePurgatory`: acks=all Produce requests parked until the ISR has them (Kafka's
DelayedProduce purgatory).

An acks=all Produce appends on the gRPC thread that received it, then, unless its outcome
is known at once, parks here as a future and frees that thread. A parked request completes
when something that can decide it happens to its partition: a follower's fetch moves the
high watermark (the fetch path calls `check`), leadership or the ISR changes (LeaderAndIsr,
StopReplica, ISR expiration, a topic config change call `check`), or its timeout passes
(the `produce-purgatory` thread, which sleeps until the earliest deadline). Whoever
completes it answers with `Partition.acks_outcome`'s error, as Kafka's
`DelayedProduce.tryComplete` does. A request naming several partitions parks each of them
with the request's one deadline, and `gathered` answers it when the last is decided.
`check` may run on any thread and never holds the purgatory's lock while it asks a
partition (whose lock the caller may hold).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors


@dataclass(order=True)
class _Delayed:
    """One parked Produce (ordered by deadline for the expiration heap)."""

    deadline: float
    seq: int
    tp: TopicPartition = field(compare=False)
    first: int = field(compare=False)
    last: int = field(compare=False)
    term: int = field(compare=False)
    future: Future[m.PartitionProduceResult] = field(compare=False)


class AcksJudge(Protocol):
    """What the purgatory asks a partition (`Partition.acks_outcome`)."""

    def acks_outcome(self, last_offset: int, leadership_term: int) -> Errors | None:
        """The answer for a Produce ending at `last_offset`, or None while undecided."""


class ProducePurgatory:
    """Parked acks=all requests by partition, and the thread that expires them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._by_partition: dict[TopicPartition, list[_Delayed]] = {}
        self._deadlines: list[_Delayed] = []
        self._seq = itertools.count()
        self._stopped = False
        self._thread = threading.Thread(
            target=self._expire_loop, name="produce-purgatory", daemon=True
        )

    def start(self) -> None:
        """Start the expiration thread."""
        self._thread.start()

    def park(
        self,
        tp: TopicPartition,
        judge: AcksJudge,
        first: int,
        last: int,
        term: int,
        deadline: float,
    ) -> Future[m.PartitionProduceResult]:
        """Park a Produce that appended `first..last` to `tp` under `term`; its future
        completes when `judge` decides it or at `deadline` (`time.monotonic()`), answering
        REQUEST_TIMED_OUT. Decided at once if it already is."""
        future: Future[m.PartitionProduceResult] = Future()
        delayed = _Delayed(deadline, next(self._seq), tp, first, last, term, future)
        with self._cond:
            if self._stopped:
                future.set_result(_result(tp, Errors.NOT_LEADER_OR_FOLLOWER, first, last))
                return future
            self._by_partition.setdefault(tp, []).append(delayed)
            heapq.heappush(self._deadlines, delayed)
            if self._deadlines[0] is delayed:  # the timer thread sleeps until a later one
                self._cond.notify()
        self.check(tp, judge)  # the followers may have been quicker than the parking
        return future

    def check(self, tp: TopicPartition, judge: AcksJudge) -> None:
        """Complete every parked request of `tp` that `judge` can decide now."""
        with self._cond:
            waiting = list(self._by_partition.get(tp, ()))
        if not waiting:
            return
        decided = []
        for delayed in waiting:
            outcome = judge.acks_outcome(delayed.last, delayed.term)
            if outcome is not None:
                decided.append((delayed, outcome))
        self._complete(decided)

    def parked_partitions(self) -> set[TopicPartition]:
        """The partitions that have a parked request now (a copy): a caller with thousands
        of partitions to re-check asks only these."""
        with self._cond:
            return set(self._by_partition)

    def waiting(self) -> int:
        """How many requests are parked."""
        with self._cond:
            return sum(len(v) for v in self._by_partition.values())

    def shutdown(self) -> None:
        """Answer every parked request NOT_LEADER_OR_FOLLOWER and stop the thread."""
        with self._cond:
            self._stopped = True
            parked = [d for v in self._by_partition.values() for d in v]
            self._cond.notify()
        self._complete([(d, Errors.NOT_LEADER_OR_FOLLOWER) for d in parked])
        if self._thread.is_alive():
            self._thread.join(5)

    def _complete(self, decided: list[tuple[_Delayed, Errors]]) -> None:
        """Answer each decided request once (another thread may have answered it first)."""
        mine = []
        with self._cond:
            for delayed, outcome in decided:
                waiting = self._by_partition.get(delayed.tp)
                if waiting is None or delayed not in waiting:
                    continue
                waiting.remove(delayed)
                if not waiting:
                    del self._by_partition[delayed.tp]
                mine.append((delayed, outcome))
        for delayed, outcome in mine:
            delayed.future.set_result(_result(delayed.tp, outcome, delayed.first, delayed.last))

    def _expire_loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                while self._deadlines and self._deadlines[0].future.done():
                    heapq.heappop(self._deadlines)
                if not self._deadlines:
                    self._cond.wait()
                    continue
                wait = self._deadlines[0].deadline - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                expired = heapq.heappop(self._deadlines)
            self._complete([(expired, Errors.REQUEST_TIMED_OUT)])


def answered(response: m.ProduceResponse) -> Future[m.ProduceResponse]:
    """A produce answer known at once, as a completed future."""
    future: Future[m.ProduceResponse] = Future()
    future.set_result(response)
    return future


def _result(tp: TopicPartition, error: Errors, first: int, last: int) -> m.PartitionProduceResult:
    return m.PartitionProduceResult(tp.topic, tp.partition, error, first, last)


PartitionAnswer = m.PartitionProduceResult | Future[m.PartitionProduceResult]


def gathered(answers: Sequence[PartitionAnswer]) -> Future[m.ProduceResponse]:
    """One request's answer from its partitions' answers (in order), some known, some
    parked: complete when the last parked one is (on the thread that completes it)."""
    waiting = [a for a in answers if isinstance(a, Future) and not a.done()]
    if not waiting:
        return answered(_response(answers))
    future: Future[m.ProduceResponse] = Future()
    lock = threading.Lock()
    left = [len(waiting)]

    def one_done(_: Future[m.PartitionProduceResult]) -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            future.set_result(_response(answers))

    for parked in waiting:
        parked.add_done_callback(one_done)
    return future


def _response(answers: Sequence[PartitionAnswer]) -> m.ProduceResponse:
    return m.ProduceResponse(tuple(a.result() if isinstance(a, Future) else a for a in answers))


_T = TypeVar("_T")
_U = TypeVar("_U")


def then(future: Future[_T], convert: Callable[[_T], _U]) -> Future[_U]:
    """`convert` of `future`'s result, as a future (computed at once when it is done, else
    on the thread that completes it)."""
    out: Future[_U] = Future()
    if future.done():
        out.set_result(convert(future.result()))
        return out

    def done(f: Future[_T]) -> None:
        try:
            out.set_result(convert(f.result()))
        except Exception as exc:  # the caller's future carries it
            out.set_exception(exc)

    future.add_done_callback(done)
    return out

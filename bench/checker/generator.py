"""A seeded generator of workload histories (`write_history`): the files a chaos run's
workload writes (`rundir.history`, docs/workload.md), made by the same writer
(`rundir.history_writer.HistoryWriter`) without a cluster, for the history checker's
benchmark and for tests.

Several producer processes send batches of values to many partitions of one topic (one
invoke per value, then one completion per value: `ok` with offsets base..last, `fail`, or
`info` whose values may or may not have landed), a consumer polls the partitions round
robin from where it stopped, and at the end the `final-read` process reads every partition
from offset 0 up to the high watermark its first poll reported, the way the workload's
final read does. The processes share one simulated clock, so the files merge into one
interleaving. What landed where is modelled by one in-memory log per partition, so the
generated history is clean: the checker finds nothing to report in it.

Pure but for the files written; the caller's thread.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from rundir.history import FINAL_READ_PROCESS, HistoryOp, history_path
from rundir.history_writer import HistoryWriter

__all__ = ["Generated", "Mix", "write_history"]

#: Start of the simulated clocks (a monotonic reading and its wall-clock milliseconds).
_START_NS = 1_000_000_000_000
_START_WALL_MS = 1_796_000_000_000
#: Simulated nanoseconds between two lines of the history.
_TICK_NS = 50_000


@dataclass(frozen=True, slots=True)
class Mix:
    """The shape of a generated history: who writes it and how often each outcome occurs.
    `fail_rate` and `info_rate` are per batch of sends; an `info` batch's values landed
    with probability `info_landed`; `poll_rate` is the consumer's share of the steps;
    `open_sends` values are left invoked and never completed (their producer died)."""

    producers: int = 4
    partitions: int = 64
    topic: str = "bench-checker"
    max_batch: int = 5
    fail_rate: float = 0.03
    info_rate: float = 0.02
    info_landed: float = 0.5
    poll_rate: float = 0.15
    poll_fail_rate: float = 0.01
    max_poll_records: int = 50
    final_read_batch: int = 500
    open_sends: int = 1

    def __post_init__(self) -> None:
        for name in ("producers", "partitions", "max_batch", "max_poll_records"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.final_read_batch < 1 or self.open_sends < 0:
            raise ValueError("final_read_batch must be at least 1 and open_sends not negative")
        rates = (self.fail_rate, self.info_rate, self.info_landed, self.poll_rate)
        if not all(0.0 <= r <= 1.0 for r in (*rates, self.poll_fail_rate)):
            raise ValueError("rates must be between 0 and 1")
        if self.fail_rate + self.info_rate > 1.0:
            raise ValueError("fail_rate + info_rate must not exceed 1")


@dataclass(slots=True)
class Generated:
    """What `write_history` wrote: the history directory and its files, the lines written
    by `(f, type)`, and the records each partition's log holds at the end."""

    history_dir: Path
    paths: tuple[Path, ...] = ()
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    log_records: int = 0

    @property
    def operations(self) -> int:
        """Lines written: every invoke and every completion (Jepsen's operations)."""
        return sum(self.counts.values())


class _Clock:
    """One simulated monotonic clock shared by every process: each reading is later."""

    def __init__(self) -> None:
        self._ticks = itertools.count(1)

    def now_ns(self) -> int:
        return _START_NS + next(self._ticks) * _TICK_NS

    @staticmethod
    def wall_ms_of(time_ns: int) -> int:
        return _START_WALL_MS + (time_ns - _START_NS) // 1_000_000


class _Writers:
    """The history writers of one generated run, on one clock."""

    def __init__(self, history_dir: Path) -> None:
        self.clock = _Clock()
        self._last_ns = 0
        self.writers: list[HistoryWriter] = []
        self.history_dir = history_dir

    def writer(self, process: str) -> HistoryWriter:
        w = HistoryWriter(
            history_path(self.history_dir, process),
            process,
            clock_ns=self._now_ns,
            wall_ms=self._wall_ms,
        )
        self.writers.append(w)
        return w

    def _now_ns(self) -> int:
        self._last_ns = self.clock.now_ns()
        return self._last_ns

    def _wall_ms(self) -> int:
        return self.clock.wall_ms_of(self._last_ns)

    def lines(self) -> int:
        return sum(sum(w.counts().values()) for w in self.writers)


class _State:
    """The simulated cluster: each partition's log, and the consumer's position in it."""

    def __init__(self, mix: Mix) -> None:
        self.logs: list[list[str]] = [[] for _ in range(mix.partitions)]
        self.positions = [0] * mix.partitions
        self.next_poll = 0
        self.final_batch = mix.final_read_batch
        # lines the final read will write: an invoke and an ok per poll, at least one poll
        # per partition
        self.final_lines = 2 * mix.partitions

    def append(self, partition: int, value: str) -> int:
        log = self.logs[partition]
        offset = len(log)
        log.append(value)
        if offset and offset % self.final_batch == 0:
            self.final_lines += 2
        return offset


def write_history(
    history_dir: Path,
    operations: int,
    *,
    seed: int = 0,
    mix: Mix | None = None,
    progress: Callable[[int], None] | None = None,
) -> Generated:
    """Write a clean history of about `operations` lines (invokes and completions; a few
    more when the last batches complete) under `history_dir`, one file per process;
    `progress` is called with the lines written so far every 50,000 lines or so."""
    mix = mix or Mix()
    if operations < 10 * mix.partitions:
        raise ValueError(f"operations must be at least {10 * mix.partitions}, got {operations}")
    rng = random.Random(seed)
    writers = _Writers(history_dir)
    producers = [writers.writer(f"producer-{i}") for i in range(mix.producers)]
    consumer = writers.writer("consumer")
    state = _State(mix)
    in_flight: list[list[HistoryOp]] = [[] for _ in producers]
    sent = itertools.count()
    written = 0
    reported = 0
    try:
        while written + state.final_lines < operations:
            if rng.random() < mix.poll_rate:
                written += _poll(consumer, state, mix, rng)
            else:
                i = rng.randrange(len(producers))
                if in_flight[i]:
                    written += _complete(producers[i], in_flight[i], state, mix, rng)
                    in_flight[i] = []
                else:
                    in_flight[i] = _invoke(producers[i], mix, rng, sent)
                    written += len(in_flight[i])
            if progress is not None and written - reported >= 50_000:
                reported = written
                progress(written)
        _finish(producers, in_flight, state, mix, rng, sent)
        _final_read(writers.writer(FINAL_READ_PROCESS), state, mix)
    finally:
        for w in writers.writers:
            w.close()
    counts: dict[tuple[str, str], int] = {}
    for w in writers.writers:
        for key, n in w.counts().items():
            counts[key] = counts.get(key, 0) + n
    if progress is not None:
        progress(writers.lines())
    return Generated(
        history_dir,
        tuple(w.path for w in writers.writers if w.path is not None),
        counts,
        sum(len(log) for log in state.logs),
    )


def _invoke(
    writer: HistoryWriter, mix: Mix, rng: random.Random, sent: itertools.count[int]
) -> list[HistoryOp]:
    """The invokes of one batch of new values to one partition."""
    partition = rng.randrange(mix.partitions)
    size = rng.randint(1, mix.max_batch)
    return [
        writer.invoke("send", mix.topic, partition, value=f"v{next(sent)}", acks=-1)
        for _ in range(size)
    ]


def _complete(
    writer: HistoryWriter, batch: list[HistoryOp], state: _State, mix: Mix, rng: random.Random
) -> int:
    """Complete a batch: acknowledged at consecutive offsets, failed, or of unknown outcome
    (its values landed or not, together); the lines written."""
    draw = rng.random()
    partition = batch[0].partition
    if draw < mix.fail_rate:
        for op in batch:
            writer.complete(op, "fail", error="NOT_ENOUGH_REPLICAS", attempts=1)
    elif draw < mix.fail_rate + mix.info_rate:
        landed = rng.random() < mix.info_landed
        for op in batch:
            if landed and op.value is not None:
                state.append(partition, op.value)
            writer.complete(op, "info", error="REQUEST_TIMED_OUT", attempts=1, attempts_unknown=1)
    else:
        attempts = 2 if rng.random() < 0.05 else 1  # a retry after NOT_LEADER_OR_FOLLOWER
        for op in batch:
            offset = state.append(partition, op.value or "")
            writer.complete(op, "ok", offset=offset, attempts=attempts)
    return len(batch)


def _poll(consumer: HistoryWriter, state: _State, mix: Mix, rng: random.Random) -> int:
    """One consumer poll of the next partition round robin, from where it stopped; 2 lines."""
    partition = state.next_poll
    state.next_poll = (partition + 1) % mix.partitions
    position = state.positions[partition]
    invoked = consumer.invoke("poll", mix.topic, partition, offset=position)
    if rng.random() < mix.poll_fail_rate:
        consumer.complete(invoked, "fail", error="NOT_LEADER_OR_FOLLOWER", attempts=1)
        return 2
    log = state.logs[partition]
    end = min(len(log), position + rng.randint(1, mix.max_poll_records))
    records = tuple((o, log[o]) for o in range(position, end))
    state.positions[partition] = end
    consumer.complete(invoked, "ok", offset=len(log), attempts=1, records=records)
    return 2


def _finish(
    producers: list[HistoryWriter],
    in_flight: list[list[HistoryOp]],
    state: _State,
    mix: Mix,
    rng: random.Random,
    sent: itertools.count[int],
) -> None:
    """Complete the batches still in flight but for `open_sends` values (invoked now if
    fewer are in flight), whose producer died before it could say what became of them."""
    while sum(map(len, in_flight)) < mix.open_sends:
        in_flight[0] = in_flight[0] + _invoke(producers[0], replace(mix, max_batch=1), rng, sent)
    left_open = mix.open_sends
    for writer, batch in zip(producers, in_flight, strict=True):
        kept = batch[: max(0, len(batch) - left_open)]
        left_open -= len(batch) - len(kept)
        if kept:
            _complete(writer, kept, state, mix, rng)


def _final_read(reader: HistoryWriter, state: _State, mix: Mix) -> None:
    """Every partition read from offset 0 to the high watermark, `final_read_batch`
    records per poll."""
    for partition, log in enumerate(state.logs):
        high_watermark = len(log)
        position = 0
        while True:
            invoked = reader.invoke("poll", mix.topic, partition, offset=position)
            end = min(high_watermark, position + mix.final_read_batch)
            records = tuple((o, log[o]) for o in range(position, end))
            reader.complete(invoked, "ok", offset=high_watermark, attempts=1, records=records)
            position = end
            if position >= high_watermark:
                break

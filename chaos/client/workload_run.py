"""A workload run: producer threads writing unique values, a consumer thread tailing every
partition, then a final read, all recorded in `<history-dir>/<process>.jsonl`; `judge`
checks the history against the final read. `python -m chaos.workload` (`chaos.workload`)
is its command line.

Threads: `run_workload` runs on the caller's thread (progress callbacks, then the final
read); it starts `workload-producer-<i>` threads (process `producer-<i>`, values
`producer-<i>-<n>`) and one `workload-consumer` thread (process `consumer`) and joins them
before the final read, process `final-read`.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from admin import InvalidTopicError, validate_topic_name
from chaos.client.consumer import Consumer, PollFailed
from chaos.client.producer import Producer
from client import Client
from rundir.checker import FinalRead, check_files
from rundir.history import FINAL_READ_PROCESS, history_path
from rundir.history_writer import HistoryWriter
from rundir.results import RunVerdict

__all__ = [
    "FINAL_READ_PROCESS",
    "Progress",
    "WorkloadConfig",
    "WorkloadResult",
    "judge",
    "run_workload",
]

#: How often the caller's thread looks at `stop_event` while the load runs.
_STOP_CHECK_S = 0.2


@dataclass(frozen=True, slots=True)
class WorkloadConfig:
    """Everything a workload run needs besides the cluster; validated on construction.
    `rate_per_s` is per producer; `max_sends` (per producer) bounds the count."""

    topic: str
    partitions: int
    duration_s: float = 30.0
    producers: int = 2
    rate_per_s: float = 50.0
    batch: int = 1
    acks: int = -1
    timeout_ms: int = 5000
    final_read_timeout_s: float = 60.0
    progress_interval_s: float = 5.0
    max_sends: int | None = None
    retry_backoff_ms: int = 100

    def __post_init__(self) -> None:
        try:
            validate_topic_name(self.topic)
        except InvalidTopicError as exc:
            raise ValueError(str(exc)) from None
        checks = [
            (self.partitions >= 1, f"partitions must be at least 1, got {self.partitions}"),
            (self.duration_s > 0, f"duration must be positive, got {self.duration_s}"),
            (1 <= self.producers <= 64, f"producers must be 1..64, got {self.producers}"),
            (self.rate_per_s > 0, f"rate must be positive, got {self.rate_per_s}"),
            (1 <= self.batch <= 1000, f"batch must be 1..1000, got {self.batch}"),
            (self.acks in (-1, 1), f"acks must be -1 (all) or 1, got {self.acks}"),
            (self.timeout_ms > 0, f"timeout-ms must be positive, got {self.timeout_ms}"),
            (
                self.final_read_timeout_s > 0,
                f"final read timeout must be positive, got {self.final_read_timeout_s}",
            ),
            (self.progress_interval_s > 0, "progress interval must be positive"),
            (self.max_sends is None or self.max_sends >= 1, "max sends must be at least 1"),
            (self.retry_backoff_ms >= 0, "retry backoff must not be negative"),
        ]
        for good, message in checks:
            if not good:
                raise ValueError(message)


@dataclass(frozen=True, slots=True)
class Progress:
    """Counts of history lines so far, by `"<f> <type>"` (e.g. `"send ok"`)."""

    elapsed_s: float
    counts: Mapping[str, int]

    def line(self) -> str:
        """One line: `12.0s  send ok 500 fail 2 info 1 | poll ok 30 fail 0`."""
        c = self.counts
        send = " ".join(f"{t} {c.get(f'send {t}', 0)}" for t in ("ok", "fail", "info"))
        poll = " ".join(f"{t} {c.get(f'poll {t}', 0)}" for t in ("ok", "fail"))
        return f"{self.elapsed_s:6.1f}s  send {send} | poll {poll}"


@dataclass(frozen=True, slots=True)
class WorkloadResult:
    """What a run produced: line counts, the final read, the history files, and any thread
    that died of an unexpected error."""

    counts: Mapping[str, int]
    final_read: FinalRead
    history_paths: tuple[Path, ...]
    elapsed_s: float
    thread_errors: tuple[str, ...] = ()


def _merge_counts(writers: Sequence[HistoryWriter]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for w in writers:
        for (f, t), n in w.counts().items():
            total[f"{f} {t}"] += n
    return dict(total)


def run_workload(
    cluster: Client,
    config: WorkloadConfig,
    history_dir: Path,
    stop_event: threading.Event | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> WorkloadResult:
    """Run producers and a consumer for `config.duration_s` (or until `stop_event`), then
    stop them, read every partition to its high watermark and return the result. Runs on
    the caller's thread, which also calls `progress` every `progress_interval_s`."""
    stop = stop_event if stop_event is not None else threading.Event()
    halt = threading.Event()
    errors: list[str] = []
    writers: list[HistoryWriter] = []

    producers_done = threading.Event()
    running = [config.producers]
    lock = threading.Lock()

    def guarded(name: str, body: Callable[[], None], producer: bool) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            except Exception as exc:  # a bug must not hang the run; it is reported
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
            if producer:
                with lock:
                    running[0] -= 1
                    if running[0] == 0:
                        producers_done.set()  # every producer reached max_sends

        return run

    threads = []
    for i in range(config.producers):
        writer = HistoryWriter(history_path(history_dir, f"producer-{i}"), f"producer-{i}")
        writers.append(writer)
        producer = Producer(
            cluster,
            config.topic,
            writer.process,
            writer,
            config.acks,
            config.timeout_ms,
            retry_backoff_ms=config.retry_backoff_ms,
        )
        body = guarded(writer.process, functools.partial(_produce, producer, config, i, halt), True)
        threads.append(threading.Thread(target=body, name=f"workload-producer-{i}"))
    consumer_writer = HistoryWriter(history_path(history_dir, "consumer"), "consumer")
    writers.append(consumer_writer)
    consumer = Consumer(
        cluster,
        config.topic,
        "consumer",
        consumer_writer,
        timeout_ms=config.timeout_ms,
        retry_backoff_ms=config.retry_backoff_ms,
    )
    body = guarded("consumer", lambda: _consume(consumer, config.partitions, halt), False)
    threads.append(threading.Thread(target=body, name="workload-consumer"))

    started = time.monotonic()
    for t in threads:
        t.start()
    end = started + config.duration_s
    next_progress = started + config.progress_interval_s
    while not stop.is_set() and not producers_done.is_set() and time.monotonic() < end:
        now = time.monotonic()
        producers_done.wait(min(_STOP_CHECK_S, next_progress - now, end - now))
        if progress is not None and time.monotonic() >= next_progress:
            progress(Progress(time.monotonic() - started, _merge_counts(writers)))
            next_progress += config.progress_interval_s
    halt.set()
    for t in threads:
        t.join()

    final_writer = HistoryWriter(history_path(history_dir, FINAL_READ_PROCESS), FINAL_READ_PROCESS)
    writers.append(final_writer)
    reader = Consumer(
        cluster,
        config.topic,
        FINAL_READ_PROCESS,
        final_writer,
        timeout_ms=config.timeout_ms,
        retry_backoff_ms=config.retry_backoff_ms,
    )
    final = reader.final_read(range(config.partitions), config.final_read_timeout_s)
    for w in writers:
        w.close()
    elapsed = time.monotonic() - started
    if progress is not None:
        progress(Progress(elapsed, _merge_counts(writers)))
    return WorkloadResult(
        _merge_counts(writers),
        final,
        tuple(w.path for w in writers if w.path is not None),
        elapsed,
        tuple(errors),
    )


def _produce(producer: Producer, config: WorkloadConfig, index: int, halt: threading.Event) -> None:
    """Body of a producer thread: paced sends, round-robin over partitions."""
    interval = config.batch / config.rate_per_s
    limit = config.max_sends if config.max_sends is not None else sys.maxsize
    sent = 0
    next_at = time.monotonic()
    while not halt.is_set() and sent < limit:
        count = min(config.batch, limit - sent)
        partition = (sent // config.batch + index) % config.partitions
        producer.send_batch(partition, [f"{producer.process}-{sent + k}" for k in range(count)])
        sent += count
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            halt.wait(delay)  # pacing, not synchronisation
        else:
            next_at = time.monotonic()  # behind schedule: do not burst to catch up


def _consume(consumer: Consumer, partitions: int, halt: threading.Event) -> None:
    """Body of the consumer thread: tail every partition from offset 0 until halted."""
    next_offset = dict.fromkeys(range(partitions), 0)
    while not halt.is_set():
        read_any = False
        for p in range(partitions):
            try:
                records = consumer.poll(p, next_offset[p], 500)
            except PollFailed:
                continue
            if records:
                read_any = True
                next_offset[p] = records[-1][0] + 1
        if not read_any:
            halt.wait(0.05)  # nothing new: pace the polls


def judge(result: WorkloadResult) -> RunVerdict:
    """Read the run's history back and check it against its final read."""
    return check_files(result.history_paths, result.final_read)

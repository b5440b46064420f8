"""What the streaming checker keeps over a clean history, as `rundir.checker.stream_checks`
and `rundir.checker.queue_state` document it: fixed-width integer columns per record of
the log, the operations in flight, and nothing per operation once it completed, so that
more polls or more failed sends over the same records cost no memory, and twice the
records cost twice the columns."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.checker.generator import Mix, write_history
from domain import TopicPartition
from rundir.checker import FinalRead, check_files, check_stream
from rundir.checker.final_index import final_index
from rundir.checker.queue_fold import QueueFold
from rundir.checker.stream_checks import ChecksFold
from rundir.history import HistoryOp, OpF, OpType

PARTITIONS = 4


def _clean(records: int, idle_polls: int, failed_sends: int) -> Iterator[HistoryOp]:
    """Three producers acknowledging `records` values, a consumer reading each once, and
    `idle_polls` polls that return nothing and `failed_sends` sends that fail in between;
    every line made as it is taken, so that only the fold holds what it keeps."""
    t = 0
    op_id = 0
    ends = [0] * PARTITIONS

    def line(kind: OpType, f: OpF, process: str, partition: int, **fields: Any) -> HistoryOp:
        nonlocal t
        t += 1
        op = HistoryOp("invoke", "send", process, t, t, "t", partition, None, None, None, op_id)
        return op._replace(type=kind, f=f, **fields)

    extra = max(idle_polls, failed_sends)
    for n in range(records):
        partition, process = n % PARTITIONS, f"p{n % 3}"
        value = f"{process}-{n}"
        yield line("invoke", "send", process, partition, value=value, acks=-1)
        yield line("ok", "send", process, partition, value=value, acks=-1, offset=ends[partition])
        op_id += 1
        yield line("invoke", "poll", "c", partition, offset=ends[partition])
        records_read = ((ends[partition], value),)
        yield line("ok", "poll", "c", partition, offset=ends[partition] + 1, records=records_read)
        op_id += 1
        ends[partition] += 1
        for k in range(extra * n // records, extra * (n + 1) // records):
            if k < idle_polls:
                yield line("invoke", "poll", "c", partition, offset=ends[partition])
                yield line("ok", "poll", "c", partition, offset=ends[partition], records=())
                op_id += 1
            if k < failed_sends:
                failed = f"{process}-failed-{k}"
                yield line("invoke", "send", process, partition, value=failed, acks=-1)
                yield line("fail", "send", process, partition, value=failed, acks=-1)
                op_id += 1


def _final(records: int, started_ns: int) -> FinalRead:
    logs: dict[int, list[tuple[int, str]]] = {p: [] for p in range(PARTITIONS)}
    for n in range(records):
        log = logs[n % PARTITIONS]
        log.append((len(log), f"p{n % 3}-{n}"))
    return FinalRead(started_ns, {TopicPartition("t", p): tuple(log) for p, log in logs.items()})


def _retained(
    records: int, idle_polls: int = 0, failed_sends: int = 0, *, final_known: bool = False
) -> tuple[int, int]:
    """Bytes the two folds hold after a clean history, beyond the final read; and the
    operations of that history. `final_known`: the queue pass is given the final read
    beforehand, as `check_stream` gives it."""
    final = final_index(_final(records, started_ns=1 << 60))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        checks = ChecksFold(final)
        queue = QueueFold(final.partitions if final_known else None)
        operations = 0
        for op in _clean(records, idle_polls, failed_sends):
            checks.feed(op)
            queue.feed(op)
            operations += 1
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert not queue.invokes  # every operation completed: none kept
    assert not any(s.more or s.far or s.inconsistent or s.gaps for s in queue.partitions.values())
    return held, operations


def test_more_operations_over_the_same_records_cost_no_more_memory() -> None:
    plain, plain_ops = _retained(1_500)
    busy, busy_ops = _retained(1_500, idle_polls=6_000)

    assert busy_ops >= 3 * plain_ops
    assert busy < plain * 1.1, (plain, busy)


def test_the_memory_per_record_is_a_few_columns_and_the_value() -> None:
    small, _ = _retained(1_500)
    large, _ = _retained(3_000)

    assert large < small * 2.2, (small, large)
    assert large / 3_000 < 320, large / 3_000  # bytes per record read


def test_a_final_read_known_beforehand_spares_the_queue_pass_a_dict_entry_per_value() -> None:
    apart, _ = _retained(3_000)
    known, _ = _retained(3_000, final_known=True)

    # the value's slot is found by its position in the final read (4 bytes) and its
    # string is the final read's; apart, each value costs a dict entry and a string of
    # its own (measured: 204 and 99 bytes a record at this size)
    assert known < apart - 30 * 3_000, (apart, known)
    assert known / 3_000 < 120, known / 3_000


def test_failed_sends_cost_a_slot_each_and_nothing_per_read() -> None:
    plain, _ = _retained(1_500)
    failing, _ = _retained(1_500, failed_sends=150)

    # a failed value is a record of its own (a value G1a may find read later)
    assert failing - plain < 150 * 450, (plain, failing)


def test_the_clean_history_passes() -> None:
    records = 2_000
    final = _final(records, started_ns=1 << 60)
    verdict = check_stream(_clean(records, idle_polls=500, failed_sends=50), final)
    assert verdict.ok, verdict.report()


def _peak_judging(history_dir: Path, operations: int, bucket_bytes: int) -> tuple[int, bool]:
    """The traced peak of `check_files` over a generated clean history of `operations`
    lines in buckets of `bucket_bytes`, above what was held before; and its verdict."""
    made = write_history(history_dir, operations, mix=Mix(partitions=32, producers=3))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        verdict = check_files(made.paths, bucket_bytes=bucket_bytes)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return peak, verdict.ok


def test_judged_in_buckets_the_peak_stays_flat_for_four_times_the_history(
    tmp_path: Path,
) -> None:
    bucket_bytes = 1 << 20  # about 4,000 operations of the generated history
    short, short_ok = _peak_judging(tmp_path / "short", 10_000, bucket_bytes)
    long, long_ok = _peak_judging(tmp_path / "long", 40_000, bucket_bytes)

    assert short_ok
    assert long_ok
    # judged whole, the long history's peak is about 4x the short one's
    assert long < short * 1.5, (short, long)

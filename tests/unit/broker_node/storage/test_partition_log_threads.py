"""Smoke test of `PartitionLog`'s lock: writers, readers, a high-watermark mover and a
flusher share one log; every read sees a consistent prefix and nothing is lost or torn."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from broker_node.storage import PartitionLog, Record

WRITERS = 4
BATCHES = 40
BATCH_SIZE = 3


def decode(record: Record) -> tuple[int, int, int]:
    writer, batch, index = record.value.split(b"/")
    return int(writer), int(batch), int(index)


def test_concurrent_appends_and_reads_stay_consistent(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", segment_bytes=2000, index_interval_bytes=200)
    start = threading.Barrier(WRITERS + 3)
    writers_done = threading.Event()
    errors: list[BaseException] = []

    def guarded(body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                start.wait(timeout=10)
                body()
            except BaseException as exc:  # reported by the test thread
                errors.append(exc)

        return run

    def writer(number: int) -> Callable[[], None]:
        def body() -> None:
            for batch in range(BATCHES):
                records = [(None, f"{number}/{batch}/{i}".encode(), i) for i in range(BATCH_SIZE)]
                first, last = log.append_as_leader(records, 0)
                assert last - first == BATCH_SIZE - 1

        return body

    def reader() -> None:
        while not writers_done.is_set():
            end = log.log_end_offset
            start_offset = end // 2
            records = log.read(start_offset, max_records=50)
            offsets = [record.offset for record in records]
            assert offsets == list(range(start_offset, start_offset + len(offsets)))
            for record in records:
                decode(record)

    def watermark_mover() -> None:
        while not writers_done.is_set():
            log.set_high_watermark(log.log_end_offset)
            assert log.high_watermark <= log.log_end_offset
            log.flush()

    threads = [
        threading.Thread(target=guarded(writer(n)), name=f"writer-{n}") for n in range(WRITERS)
    ]
    helpers = [
        threading.Thread(target=guarded(reader), name="reader-0"),
        threading.Thread(target=guarded(reader), name="reader-1"),
        threading.Thread(target=guarded(watermark_mover), name="hw-mover"),
    ]
    for thread in threads + helpers:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    writers_done.set()
    for thread in helpers:
        thread.join(timeout=30)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads + helpers)

    total = WRITERS * BATCHES * BATCH_SIZE
    everything = log.read(0, max_records=total + 1)
    assert [record.offset for record in everything] == list(range(total))
    seen = [decode(record) for record in everything]
    assert sorted(seen) == [
        (w, b, i) for w in range(WRITERS) for b in range(BATCHES) for i in range(BATCH_SIZE)
    ]
    for first in range(0, total, BATCH_SIZE):
        writer_batch = {decode(record)[:2] for record in everything[first : first + BATCH_SIZE]}
        assert len(writer_batch) == 1, "a batch's records are contiguous"
    log.close()
    assert PartitionLog(tmp_path / "t-0").read(0, max_records=total + 1) == everything

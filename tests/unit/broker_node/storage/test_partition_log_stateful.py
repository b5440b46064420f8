"""Hypothesis drives a real `PartitionLog` and the in-memory model (`InMemoryPartitionLog`)
through the same steps: leader and follower appends (good and bad, decoded and as batches),
truncations (inside batches too), reads of records and of whole batches, high-watermark
moves, clean reopens, kills, and kills that tear the last segment's tail. After every step
the log must equal the model, its batches included.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from broker_node.storage import LogError, OffsetOutOfRangeError, PartitionLog, Record
from broker_node.storage.record import encode_records
from broker_node.storage.testing import InMemoryPartitionLog

SEGMENT_BYTES = 300
INDEX_INTERVAL_BYTES = 90

payloads = st.tuples(st.none() | st.binary(max_size=6), st.binary(max_size=40))


class PartitionLogMachine(RuleBasedStateMachine):
    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.generation = 0
        self.model = InMemoryPartitionLog()
        self.log = self._open(root / "gen-0")

    def _open(self, directory: Path) -> PartitionLog:
        return PartitionLog(directory, SEGMENT_BYTES, INDEX_INTERVAL_BYTES)

    def _next_directory(self) -> Path:
        self.generation += 1
        return self.root / f"gen-{self.generation}"

    # -- appends -------------------------------------------------------------------------

    @rule(batch=st.lists(payloads, max_size=5), epoch_step=st.integers(-1, 2))
    def append_as_leader(self, batch: list[tuple[bytes | None, bytes]], epoch_step: int) -> None:
        epoch = max(self.model.latest_epoch(), 0) + epoch_step
        records = [(key, value, 1000 + i) for i, (key, value) in enumerate(batch)]
        try:
            expected = self.model.append_as_leader(records, epoch)
        except LogError:
            with pytest.raises(LogError):
                self.log.append_as_leader(records, epoch)
            return
        assert self.log.append_as_leader(records, epoch) == expected

    @rule(
        batch=st.lists(payloads, min_size=1, max_size=5),
        shift=st.sampled_from([0, 0, 0, -1, 1]),
        epoch_steps=st.lists(st.integers(-1, 2), min_size=5, max_size=5),
    )
    def append_as_follower(
        self, batch: list[tuple[bytes | None, bytes]], shift: int, epoch_steps: list[int]
    ) -> None:
        epoch = max(self.model.latest_epoch(), 0)
        records = []
        for i, ((key, value), step) in enumerate(zip(batch, epoch_steps, strict=False)):
            epoch = max(epoch + step, 0)
            records.append(Record(self.model.log_end_offset + shift + i, epoch, i, key, value))
        try:
            self.model.append_as_follower(records)
        except LogError:
            with pytest.raises(LogError):
                self.log.append_as_follower(records)
            return
        self.log.append_as_follower(records)

    @rule(
        batch=st.lists(payloads, min_size=1, max_size=6),
        cuts=st.sets(st.integers(1, 5), max_size=2),
        shift=st.sampled_from([0, 0, 0, -1, 1]),
        epoch_step=st.integers(-1, 2),
    )
    def append_encoded_as_follower(
        self, batch: list[tuple[bytes | None, bytes]], cuts: set[int], shift: int, epoch_step: int
    ) -> None:
        epoch = max(self.model.latest_epoch() + epoch_step, 0)
        first = self.model.log_end_offset + shift
        records = [Record(first + i, epoch, i, k, v) for i, (k, v) in enumerate(batch)]
        bounds = [0, *sorted(cut for cut in cuts if cut < len(records)), len(records)]
        data = b"".join(
            encode_records(records[start:end])[0] for start, end in itertools.pairwise(bounds)
        )
        try:
            self.model.append_encoded_as_follower(data)
        except LogError:
            with pytest.raises(LogError):
                self.log.append_encoded_as_follower(data)
            return
        self.log.append_encoded_as_follower(data)

    # -- truncation, reads, high watermark -----------------------------------------------

    @rule(data=st.data())
    def truncate_to(self, data: st.DataObject) -> None:
        offset = data.draw(st.integers(0, self.model.log_end_offset + 2))
        self.model.truncate_to(offset)
        self.log.truncate_to(offset)

    @rule(
        data=st.data(),
        max_records=st.integers(0, 6),
        max_bytes=st.integers(0, 400),
        bounded=st.booleans(),
    )
    def read(self, data: st.DataObject, max_records: int, max_bytes: int, bounded: bool) -> None:
        end = self.model.log_end_offset
        start = data.draw(st.integers(-1, end + 1))
        max_offset = data.draw(st.integers(0, end + 1)) if bounded else None
        try:
            expected = self.model.read(start, max_offset, max_records, max_bytes)
        except OffsetOutOfRangeError:
            with pytest.raises(OffsetOutOfRangeError):
                self.log.read(start, max_offset, max_records, max_bytes)
            return
        assert self.log.read(start, max_offset, max_records, max_bytes) == expected
        batches = self.model.read_encoded(start, max_offset, max_records, max_bytes)
        assert self.log.read_encoded(start, max_offset, max_records, max_bytes) == batches

    @rule(data=st.data())
    def set_high_watermark(self, data: st.DataObject) -> None:
        hw = data.draw(st.integers(-1, self.model.log_end_offset + 1))
        self.model.set_high_watermark(hw)
        self.log.set_high_watermark(hw)

    @rule()
    def flush(self) -> None:
        self.log.flush()

    # -- restarts ------------------------------------------------------------------------

    @rule()
    def close_and_reopen(self) -> None:
        self.log.close()
        self.log = self._open(self.log.directory)

    @rule()
    def kill_and_reopen(self) -> None:
        self._restart_from(self._killed_copy())

    @precondition(lambda self: self.model.log_end_offset > 0)
    @rule(cut=st.integers(1, 120))
    def kill_tearing_the_tail(self, cut: int) -> None:
        directory = self._killed_copy()
        last = max(directory.glob("*.log"))
        base = int(last.name.split(".")[0])
        kept_bytes = max(last.stat().st_size - cut, 0)
        with last.open("r+b") as file:
            file.truncate(kept_bytes)
        survivors = base
        used = 0
        while survivors < self.model.log_end_offset:  # the batches kept whole
            data, count = self.model.read_encoded(survivors, max_records=1)
            used += len(data)
            if used > kept_bytes:
                break
            survivors += count
        self.model.truncate_to(survivors)
        self._restart_from(directory)
        assert self.log.log_end_offset == survivors

    def _killed_copy(self) -> Path:
        directory = self._next_directory()
        if self.log.directory.exists():  # a log never written has no directory yet
            shutil.copytree(self.log.directory, directory)
        return directory

    def _restart_from(self, directory: Path) -> None:
        self.log.close()
        self.log = self._open(directory)
        # A rise of the high watermark may not have been checkpointed; a fall always is.
        assert self.log.high_watermark <= self.model.high_watermark
        self.model.set_high_watermark(self.log.high_watermark)

    # -- the log equals the model --------------------------------------------------------

    @invariant()
    def log_equals_model(self) -> None:
        model, log = self.model, self.log
        assert log.log_start_offset == 0
        assert log.log_end_offset == model.log_end_offset
        assert log.read(0, max_records=10**6) == model.records
        assert log.read_encoded(0, max_records=10**6) == model.read_encoded(0, max_records=10**6)
        assert log.epoch_entries() == model.epoch_entries()
        assert log.latest_epoch() == model.latest_epoch()
        assert log.high_watermark == model.high_watermark
        for epoch in range(-1, model.latest_epoch() + 2):
            assert log.end_offset_for_epoch(epoch) == model.end_offset_for_epoch(epoch)
            assert log.epoch_start_offset(epoch) == model.epoch_start_offset(epoch)

    def teardown(self) -> None:
        self.log.close()


def test_the_log_always_equals_the_model(tmp_path: Path) -> None:
    runs = itertools.count()

    class FreshDirectoryMachine(PartitionLogMachine):
        def __init__(self) -> None:
            super().__init__(tmp_path / f"run-{next(runs)}")

    run_state_machine_as_test(
        FreshDirectoryMachine,
        settings=settings(
            max_examples=60,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )

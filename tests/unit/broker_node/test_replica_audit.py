"""The replica audit's computation (`broker_node.replica_audit`) over real `PartitionLog`s in
a temporary directory: per leader epoch, the offset range from the epoch cache clipped to
the log, and a digest that is equal for equal records and differs for any other record at
an offset. `Partition.audited` wraps it with the replica's leadership and offsets.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from broker_node.replica_audit import (
    READ_BATCH,
    UNKNOWN_EPOCH,
    audit_log,
    digest_records,
    epoch_ranges,
)
from broker_node.storage import PartitionLog, Record
from rpc import messages as m

TS = 1_700_000_000_000


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[list[PartitionLog]]:
    """Two empty logs (replica a and b of one partition), closed afterwards."""
    opened = [PartitionLog(tmp_path / "a"), PartitionLog(tmp_path / "b")]
    yield opened
    for log in opened:
        log.close()


def lead(log: PartitionLog, epoch: int, values: list[bytes]) -> None:
    """Append `values` as leader of `epoch`."""
    log.append_as_leader([(b"k", v, TS) for v in values], epoch)


def test_each_epoch_is_its_range_of_the_log(logs: list[PartitionLog]) -> None:
    a, _ = logs
    lead(a, 1, [b"a", b"b", b"c"])
    lead(a, 3, [b"d", b"e"])
    audited = audit_log(a)
    assert [(e.leader_epoch, e.start_offset, e.end_offset) for e in audited] == [
        (1, 0, 3),
        (3, 3, 5),
    ]
    assert audited[0].digest == digest_records(a.read(0, 3))
    assert audited[1].digest == digest_records(a.read(3, 5))
    assert len(audited[0].digest) == 64  # sha256, hex


def test_replicas_with_the_same_records_have_the_same_digests(logs: list[PartitionLog]) -> None:
    a, b = logs
    lead(a, 1, [b"x", b"y"])
    b.append_as_follower(a.read(0))
    assert audit_log(a) == audit_log(b)


def test_one_changed_value_changes_the_digest_of_its_epoch_only(
    logs: list[PartitionLog],
) -> None:
    a, b = logs
    lead(a, 1, [b"x", b"y"])
    lead(a, 2, [b"z"])
    lead(b, 1, [b"x", b"Y"])
    lead(b, 2, [b"z"])
    first_a, second_a = audit_log(a)
    first_b, second_b = audit_log(b)
    assert (first_a.start_offset, first_a.end_offset) == (first_b.start_offset, first_b.end_offset)
    assert first_a.digest != first_b.digest
    assert second_a == second_b


def test_a_digest_covers_offset_epoch_and_key() -> None:
    base = Record(0, 1, TS, b"k", b"v")
    others = [
        Record(1, 1, TS, b"k", b"v"),
        Record(0, 2, TS, b"k", b"v"),
        Record(0, 1, TS, None, b"v"),
        Record(0, 1, TS, b"", b"v"),
    ]
    digests = {digest_records([r]) for r in [base, *others]}
    assert len(digests) == 5


def test_an_epoch_longer_than_a_read_batch_is_digested_whole(logs: list[PartitionLog]) -> None:
    a, _ = logs
    values = [b"%d" % i for i in range(READ_BATCH + 5)]
    lead(a, 1, values)
    [audited] = audit_log(a)
    assert (audited.start_offset, audited.end_offset) == (0, len(values))
    assert audited.digest == digest_records(a.read(0, len(values), max_records=len(values) + 1))


def test_a_truncated_log_reports_what_is_left(logs: list[PartitionLog]) -> None:
    a, _ = logs
    lead(a, 1, [b"a", b"b"])
    lead(a, 2, [b"c"])
    lead(a, 2, [b"d"])
    a.truncate_to(3)
    assert [(e.leader_epoch, e.start_offset, e.end_offset) for e in audit_log(a)] == [
        (1, 0, 2),
        (2, 2, 3),
    ]


def test_an_empty_log_has_no_epochs(logs: list[PartitionLog]) -> None:
    assert audit_log(logs[0]) == ()


@pytest.mark.parametrize(
    ("entries", "start", "end", "expected"),
    [
        ([], 0, 0, []),
        ([], 0, 4, [(UNKNOWN_EPOCH, 0, 4)]),
        ([(1, 0), (2, 5)], 0, 8, [(1, 0, 5), (2, 5, 8)]),
        ([(1, 0), (2, 5)], 6, 8, [(2, 6, 8)]),  # the log start moved past epoch 1
        ([(1, 2), (2, 5)], 0, 4, [(UNKNOWN_EPOCH, 0, 2), (1, 2, 4)]),
        ([(1, 0), (2, 3), (3, 3)], 0, 6, [(1, 0, 3), (3, 3, 6)]),  # epoch 2 wrote nothing
    ],
)
def test_epoch_ranges(
    entries: list[tuple[int, int]], start: int, end: int, expected: list[tuple[int, int, int]]
) -> None:
    assert epoch_ranges(entries, start, end) == expected


def test_audited_epochs_are_rpc_values(logs: list[PartitionLog]) -> None:
    lead(logs[0], 4, [b"v"])
    [audited] = audit_log(logs[0])
    assert isinstance(audited, m.AuditedEpoch)
